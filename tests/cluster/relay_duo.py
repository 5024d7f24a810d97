"""Two paired node processes: alpha serves an OpenAI-API and an Ollama-API engine, beta none,
so every inference request sent to beta's front door goes through alpha's peer relay."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from app.harness import NodeProc, TinyProc
from tests.cluster.multinode import FAST, pair, wait_models

# Windows that hold the largest prompt the relay tests send (2 MB), as in tests/node/conftest.py.
ROOMY = ("--context-window", "100000000")


@dataclass
class RelayDuo:
    serving: NodeProc  # alpha, with the engines
    origin: NodeProc  # beta, whose front door relays
    openai_engine: TinyProc  # serves oa-model
    ollama_engine: TinyProc  # serves ol-model:latest


def start_relay_duo(root: Path) -> Iterator[RelayDuo]:
    procs: list[TinyProc | NodeProc] = []
    try:
        oa = TinyProc("--api", "openai", "--model", "oa-model", *ROOMY)
        procs.append(oa)
        ol = TinyProc("--api", "ollama", "--model", "ol-model:latest", *ROOMY)
        procs.append(ol)
        alpha = NodeProc(root / "home-alpha", "alpha", env=FAST)
        procs.append(alpha.start())
        beta = NodeProc(root / "home-beta", "beta", env=FAST)
        procs.append(beta.start())
        alpha.cli("engines", "add", "oa", "--url", oa.url, "--api", "openai")
        alpha.cli("engines", "add", "ol", "--url", ol.url, "--api", "ollama")
        pair(alpha, beta)
        wait_models(beta, alpha, "oa-model", "ol-model:latest")
        yield RelayDuo(alpha, beta, oa, ol)
    finally:
        for proc in reversed(procs):
            proc.stop()
