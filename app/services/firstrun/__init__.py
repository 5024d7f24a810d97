"""First run on a real machine: a taken port explained instead of a traceback, engines found on
loopback instead of typed, and Ollama moved off 11434 and adopted where it went.

| module | what |
| --- | --- |
| ``holder``   | who holds an address: Ollama (``/api/version``), a Pairwise node (its own header and route), or another program (named by the OS) |
| ``explain``  | the one paragraph for a taken front door, cluster port or pairing port |
| ``discover`` | short loopback probes of the ports engines use, each port once |
| ``ollama_move`` | the note left when Ollama held the front door, and adopting Ollama where it moved |
"""
