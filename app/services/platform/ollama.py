"""How Ollama is told to listen elsewhere, on each OS (``OLLAMA_HOST``).

Pairwise never runs these for the user: they change a system service or the user's environment,
so they are shown (CLI paragraph, README, welcome window) and the user runs them.
"""

from __future__ import annotations

import sys


def move_steps(new_address: str, os_name: str | None = None) -> list[str]:
    """The steps that move Ollama to ``new_address`` on this OS (or on ``os_name``: linux, darwin, win32)."""
    os_name = os_name or sys.platform
    if os_name == "darwin":
        return [
            f"run: launchctl setenv OLLAMA_HOST {new_address}",
            "quit Ollama from the menu bar and open it again (the app reads OLLAMA_HOST when it starts)",
        ]
    if os_name == "win32":
        return [
            "quit Ollama from its icon in the taskbar's notification area",
            f"run: setx OLLAMA_HOST {new_address}   (sets it for your user)",
            "start Ollama again from the Start menu",
        ]
    return [
        "if Ollama runs as the systemd service (the Linux installer sets it up): run: sudo systemctl edit ollama.service, "
        f'add the two lines [Service] and Environment="OLLAMA_HOST={new_address}", save, '
        "then run: sudo systemctl restart ollama",
        f"if you start it by hand instead: stop it and run: OLLAMA_HOST={new_address} ollama serve",
    ]


def cli_note(new_address: str, front_door: str) -> str:
    return (f"The ollama command (pull, list) reads OLLAMA_HOST too: set it to {new_address} in the shell "
            f"where you manage Ollama's models; apps keep using {front_door}, now Pairwise.")
