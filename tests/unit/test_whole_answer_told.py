"""A whole answer is its own first byte: its finished job record is stored, told and replicated at the
loop's next turn, once the answer is on its way (bench/README.md, issue 31's "front door's own work");
an off-LAN answer's finish, which ends a rented node's meter, is told before the answer is returned.
Real InferenceService, tracker, store (SQLite in a temporary home) and bus; the upstream answers whole."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

from app.services.backends.base import Caller, ModelEntry, Opened, Upstream, UpstreamKind, UpstreamRequest
from app.services.events import Event, EventBus, WorkloadFinished
from app.services.inference import InferenceService
from app.services.jobs.requester import Requester
from app.services.jobs.store import JobStore
from app.services.jobs.tracker import JobTracker
from app.services.json_types import JsonObject
from app.services.routing.registry import UpstreamRegistry
from app.services.translate.shapes import Api

MODEL = "m:latest"
ANSWER = {"id": "x", "object": "chat.completion", "model": MODEL,
          "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}],
          "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}}


class WholeAnswer(Upstream):
    def __init__(self, kind: UpstreamKind, headers: dict[str, str]) -> None:
        self.kind = kind
        self.key, self.node_name, self.node_id = f"{kind}:one", "one", "n1"
        self.headers = headers

    def models(self) -> list[ModelEntry]:
        return [ModelEntry(MODEL)]

    def api_for(self, client_api: Api) -> Api:
        return client_api

    async def open(self, request: UpstreamRequest) -> Opened:
        async def rest() -> AsyncIterator[bytes]:
            return
            yield b""

        async def closed() -> None:
            return None

        return Opened(200, "application/json", json.dumps(ANSWER).encode(), rest(), closed, dict(self.headers))


def service(tmp_path: Path, upstream: Upstream) -> tuple[InferenceService, list[str]]:
    bus = EventBus()
    finished: list[str] = []

    def heard(event: Event) -> None:
        if isinstance(event, WorkloadFinished):
            finished.append(str(event.job["state"]))

    bus.on(heard)
    registry = UpstreamRegistry()
    registry.add(upstream)

    async def refresh() -> None:
        return None

    tracker = JobTracker(JobStore(tmp_path / "state.db"), bus, "one", "n1")
    return InferenceService(registry, tracker, "one", "n1", refresh), finished


BODY: JsonObject = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}], "stream": False}
CALLER = Caller(requester=Requester(node_id="n1", node_name="one"))


async def test_a_lan_whole_answers_finish_is_told_at_the_next_turn(tmp_path: Path) -> None:
    inference, finished = service(tmp_path, WholeAnswer("engine", {}))
    result = await inference.run("openai", "chat", BODY, CALLER)
    assert result.status == 200 and result.job is not None
    assert result.job.state == "completed" and result.job.completion_tokens == 1  # the fields at once
    assert finished == []  # not yet: the answer goes first
    await asyncio.sleep(0)
    assert finished == ["completed"]
    stored = inference.tracker.store.get(result.job.id)
    assert stored is not None and stored.state == "completed" and stored.prompt_tokens == 3


async def test_an_off_lan_whole_answers_finish_is_told_before_it_is_returned(tmp_path: Path) -> None:
    # A peer's rented node answered (the sponsor marks it off-LAN): its finish ends that node's meter,
    # so the money is never a turn behind the answer.
    inference, finished = service(tmp_path, WholeAnswer("peer", {"x-pairwise-off-lan": "gpu"}))
    result = await inference.run("openai", "chat", BODY, CALLER)
    assert result.status == 200 and result.job is not None and result.job.off_lan
    assert finished == ["completed"]
