"""Each upstream's index of its models by canonical name (``Upstream.entry_for``) stays the list's own:
an engine's refreshed list, a list grown in place, models built per call, names linked after the
index was made, and engines coming and going in the registry all show in the next look-up and plan."""

from __future__ import annotations

import asyncio
from typing import Any

from app.harness import TinyProc
from app.services.backends.base import ModelEntry, Opened, Upstream, UpstreamRequest
from app.services.backends.engine import EngineUpstream
from app.services.routing.names import ModelNames
from app.services.routing.plan import build_plan
from app.services.routing.registry import UpstreamRegistry
from app.services.translate.shapes import Api
from app.settings import EngineDecl, NodeSettings


class Listed(Upstream):
    """An upstream whose model list the test holds (``fresh``: a new list per call, as a rented node's)."""

    kind = "engine"

    def __init__(self, key: str, names: list[str], *, fresh: bool = False) -> None:
        self.key, self.node_name, self.node_id = key, "here", "id-here"
        self.entries = [ModelEntry(n) for n in names]
        self.fresh = fresh

    def models(self) -> list[ModelEntry]:
        return list(self.entries) if self.fresh else self.entries

    def api_for(self, client_api: Api) -> Api:
        return "openai"

    async def open(self, request: UpstreamRequest) -> Opened:
        raise AssertionError("never opened here")


def engine(tiny: TinyProc, name: str = "e") -> EngineUpstream:
    return EngineUpstream(EngineDecl(name=name, url=tiny.url, api="openai"), node_name="here", node_id="id-here",
                          token=None)


def test_an_engines_index_follows_its_refreshed_list(tiny_factory: Any) -> None:
    tiny = tiny_factory("--api", "openai", "--model", "alpha", "--model", "beta:7b")

    async def run() -> None:
        upstream = engine(tiny)
        try:
            await upstream.refresh_models()
            assert upstream.upstream_model("alpha:latest") == "alpha"
            assert upstream.upstream_model("beta:7b") == "beta:7b"
            assert upstream.entry_for("gamma:latest") is None
            tiny.config(models=["gamma", "beta:7b"])
            await upstream.refresh_models()
            assert upstream.entry_for("alpha:latest") is None  # gone from the engine: gone from the index
            assert upstream.upstream_model("gamma:latest") == "gamma"
            assert upstream.upstream_model("beta:7b") == "beta:7b"
        finally:
            await upstream.aclose()

    asyncio.run(run())


def test_a_list_grown_in_place_or_built_per_call_is_indexed_again() -> None:
    kept = Listed("engine:kept", ["one"])
    assert kept.upstream_model("one:latest") == "one" and kept.entry_for("two:latest") is None
    kept.entries.append(ModelEntry("two"))
    assert kept.upstream_model("two:latest") == "two"
    built = Listed("engine:built", ["one"], fresh=True)
    assert built.entry_for("two:latest") is None
    built.entries = [ModelEntry("two")]
    assert built.upstream_model("two:latest") == "two" and built.entry_for("one:latest") is None


def test_the_first_of_two_entries_for_one_model_is_the_one_found() -> None:
    upstream = Listed("engine:twice", ["m", "m:latest"])
    assert upstream.upstream_model("m:latest") == "m"


def test_names_linked_after_the_index_was_built_are_found() -> None:
    names = ModelNames(NodeSettings(name="here"), None)
    registry = UpstreamRegistry(names)
    upstream = Listed("engine:named", ["qwen2.5:7b"])
    registry.add(upstream)
    assert upstream.entry_for("qwen/qwen-7b:latest") is None  # the index is built, the name unknown
    names.same(["qwen2.5:7b", "qwen/qwen-7b"])
    assert upstream.upstream_model("qwen/qwen-7b:latest") == "qwen2.5:7b"
    names.unlink(["qwen/qwen-7b"])
    assert upstream.entry_for("qwen/qwen-7b:latest") is None


def test_the_plan_follows_engines_as_they_come_and_go() -> None:
    registry = UpstreamRegistry()
    first, other = Listed("engine:first", ["m", "x"]), Listed("engine:other", ["y"])
    registry.add(first)
    registry.add(other)
    assert [u.key for u in build_plan("m:latest", registry.all()).candidates] == ["engine:first"]
    registry.remove("engine:first")
    assert build_plan("m:latest", registry.all()).candidates == []
    second = Listed("engine:second", ["m"])
    registry.add(second)
    assert [u.key for u in build_plan("m:latest", registry.all()).candidates] == ["engine:second"]
    other.entries = [ModelEntry("m")]  # a refresh that brought the model to another engine
    assert {u.key for u in build_plan("m:latest", registry.all()).candidates} == {"engine:second", "engine:other"}
