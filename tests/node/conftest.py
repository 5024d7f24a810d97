from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from app.harness import NodeProc, TinyProc

ROOMY = ("--context-window", "100000000")


@dataclass
class TwoEngines:
    node: NodeProc
    openai_engine: TinyProc
    ollama_engine: TinyProc


@pytest.fixture
def two_engines(node_factory: type[NodeProc], tiny_factory: type[TinyProc]) -> Iterator[TwoEngines]:
    """A node with one OpenAI-API engine (oa-model) and one Ollama-API engine (ol-model)."""
    oa = tiny_factory("--api", "openai", "--model", "oa-model")
    ol = tiny_factory("--api", "ollama", "--model", "ol-model:latest")
    node = node_factory("alpha").start()
    node.cli("engines", "add", "oa", "--url", oa.url, "--api", "openai")
    node.cli("engines", "add", "ol", "--url", ol.url, "--api", "ollama")
    yield TwoEngines(node, oa, ol)


@dataclass
class EngineNode:
    node: NodeProc
    openai_engine: TinyProc
    ollama_engine: TinyProc


@pytest.fixture(scope="module")
def engine_node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EngineNode]:
    """Like two_engines, shared by a module's tests (each looks at its own request only)."""
    root: Path = tmp_path_factory.mktemp("engine-node")
    # Windows that hold the largest prompt these tests send (2 MB): a 4096-token copy is no candidate for it.
    oa = TinyProc("--api", "openai", "--model", "oa-model", *ROOMY)
    ol = TinyProc("--api", "ollama", "--model", "ol-model:latest", *ROOMY)
    node = NodeProc(root / "home", "alpha")
    try:
        node.start()
        node.cli("engines", "add", "oa", "--url", oa.url, "--api", "openai")
        node.cli("engines", "add", "ol", "--url", ol.url, "--api", "ollama")
        yield EngineNode(node, oa, ol)
    finally:
        node.stop()
        oa.stop()
        ol.stop()


@dataclass
class Route:
    """How a caller's request reaches the engines: a node's own front door, or another node's
    front door and then the serving node's peer relay."""

    url: str  # the front door the caller uses
    openai_engine: TinyProc  # serves oa-model
    ollama_engine: TinyProc  # serves ol-model:latest


@pytest.fixture(scope="module")
def relay_route(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Route]:
    from tests.cluster.relay_duo import start_relay_duo

    for duo in start_relay_duo(tmp_path_factory.mktemp("relay-route")):
        yield Route(duo.origin.url, duo.openai_engine, duo.ollama_engine)


@pytest.fixture(params=["front_door", "relay"])
def route(request: pytest.FixtureRequest) -> Route:
    if request.param == "front_door":
        node: EngineNode = request.getfixturevalue("engine_node")
        return Route(node.node.url, node.openai_engine, node.ollama_engine)
    relayed: Route = request.getfixturevalue("relay_route")
    return relayed
