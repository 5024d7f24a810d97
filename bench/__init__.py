"""Benchmarks: what Pairwise costs on the wire.

`bench/run` (or `python -m bench` with the project venv) starts the tiny model
server, Pairwise nodes and LiteLLM's proxy as subprocesses on 127.0.0.1 and
measures each path against a direct connection. See bench/README.md.
"""
