"""A provider written outside the app, in this one file, joins a real node (``PAIRWISE_PROVIDERS``) and
is driven by the node's one poll -> bill -> cap loop: attached, billed per started minute, paused by its
cap, kept paused, with what the node charged and what the provider would bill both within the cap plus
one billed minute (docs/adding-a-provider.md).

The fake provider's "cloud" is a JSON file the test and the node process both read: it starts billing
when the sponsor first looks at it, and stops when paused.
"""

from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.harness import wait_until
from app.services.api.rows import RentedRow
from app.services.rented.provider import Action, BaseProvider, ProviderState, State
from app.services.rented.upstream import RentedUpstream

PRICE_PER_HOUR = 60.0  # $1 per billed minute
MINUTE_S = 1.0
CAP_USD = 3.0
REMOTE = "FAKE_GPU_REMOTE"


class FakeGpu(BaseProvider):
    """A managed GPU that bills while running and can be paused and resumed."""

    name = "fake-gpu"
    capabilities = frozenset({Action.PAUSE, Action.RESUME})
    polls = True

    def __init__(self) -> None:
        self.remote = Path(os.environ[REMOTE])

    def _read(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.remote.read_text(encoding="utf-8"))
        return data

    def _write(self, data: dict[str, Any]) -> None:
        temporary = self.remote.with_suffix(".tmp")
        temporary.write_text(json.dumps(data), encoding="utf-8")
        temporary.replace(self.remote)

    def allowed(self, row: RentedRow, state: ProviderState) -> frozenset[Action]:
        if not row["lifecycle"]["managed"]:
            return frozenset()
        return frozenset({Action.PAUSE} if state.billing else {Action.RESUME} if state.state is State.PAUSED else ())

    async def poll(self, node: RentedUpstream) -> ProviderState:
        data = self._read()
        if data["state"] == "running" and data["started_at"] is None:
            data["started_at"] = time.time()  # the GPU starts (and bills) once its sponsor manages it
            self._write(data)
        if data["state"] == "running":
            return ProviderState(State.RUNNING, True, "the fake GPU is up", "up")
        return ProviderState(State.PAUSED, False, "the fake GPU is paused", "down")

    async def pause(self, name: str) -> None:
        data = self._read()
        if data["state"] == "running":
            data.update(state="paused", paused_at=time.time(), pauses=data["pauses"] + 1)
            self._write(data)

    async def resume(self, name: str) -> None:
        data = self._read()
        data.update(state="running", started_at=time.time(), paused_at=None)
        self._write(data)


PLUGIN = f"{__name__}:FakeGpu"


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    path = tmp_path / "fake-cloud.json"
    path.write_text(json.dumps({"state": "running", "started_at": None, "paused_at": None, "pauses": 0}),
                    encoding="utf-8")
    return path


def _env(remote: Path) -> dict[str, str]:
    return {"PAIRWISE_PROVIDERS": PLUGIN, REMOTE: str(remote), "PAIRWISE_BILLING_MINUTE_S": str(MINUTE_S),
            "PAIRWISE_PROVIDER_POLL_S": "0.1"}


def test_a_provider_from_a_test_file_is_billed_capped_and_paused_by_the_node(
        node_factory: Any, tiny_factory: Any, remote: Path) -> None:
    tiny = tiny_factory("--model", "fake-model")
    node = node_factory("S", env=_env(remote)).start()
    row = node.control("POST", "/rented", {
        "name": "gpu", "provider": "fake-gpu", "url": tiny.url, "models": ["fake-model"],
        "price_per_hour": PRICE_PER_HOUR, "lifecycle": {"managed": True, "pause_on_sponsor_exit": False},
        "budget": {"usd_per_day": CAP_USD}, "routing": {"use": "prefer"}})
    assert row["provider"] == "fake-gpu" and set(row["capabilities"]) == {"pause", "resume"}

    # It serves while it bills: a request through the node's front door reaches it.
    answer = httpx.post(f"{node.url}/v1/chat/completions", timeout=30, trust_env=False, json={
        "model": "fake-model", "messages": [{"role": "user", "content": "hi"}]})
    assert answer.status_code == 200, answer.text
    assert answer.headers.get("x-pairwise-node") in (None, "gpu")

    billing = wait_until(lambda: (lambda r: r if r["billing"] and r["cost"]["day_usd"] > 0 else None)(
        node.control("GET", "/rented/gpu")), what="the node to bill the fake GPU per minute")
    assert billing["state_now"] == "running" and billing["actions"] == ["pause"]

    paused = wait_until(lambda: (lambda r: r if r["state_now"] == "paused" else None)(
        node.control("GET", "/rented/gpu")), timeout=60, what="the cap to pause the fake GPU")
    cloud = json.loads(remote.read_text(encoding="utf-8"))
    assert cloud["state"] == "paused" and cloud["pauses"] == 1, cloud
    assert paused["billing"] is False and "budget reached" in (paused["reason"] or ""), paused

    # Money: the node counted at least the cap, and no more than the cap plus one billed minute; what the
    # provider would bill (its started minutes) is no more than that either, and never more than counted.
    minute_usd = PRICE_PER_HOUR / 60
    spent = paused["cost"]["day_usd"]
    assert CAP_USD <= spent <= CAP_USD + minute_usd + 1e-9, spent
    provider_bill = math.ceil((cloud["paused_at"] - cloud["started_at"]) / MINUTE_S) * minute_usd
    assert provider_bill <= spent + 1e-9, (provider_bill, spent)

    # The cap stands: a resume is refused by name, and nothing starts billing again.
    refused = httpx.post(f"{node.url}/_pairwise/v1/rented/gpu/resume", timeout=30, trust_env=False,
                         headers={"Authorization": f"Bearer {(node.home / 'control_token').read_text().strip()}"})
    assert refused.status_code >= 400 and "budget reached" in refused.text, refused.text
    assert json.loads(remote.read_text(encoding="utf-8"))["state"] == "paused"

    # Resumed behind the node's back while over the cap: the loop pauses it again.
    cloud = json.loads(remote.read_text(encoding="utf-8"))
    cloud.update(state="running", paused_at=None)
    remote.write_text(json.dumps(cloud), encoding="utf-8")
    wait_until(lambda: json.loads(remote.read_text(encoding="utf-8"))["pauses"] == 2 or None,
               what="the loop to pause again what was resumed over the cap")
    assert node.control("GET", "/rented/gpu")["cost"]["day_usd"] <= CAP_USD + 2 * minute_usd + 1e-9


def test_a_provider_nobody_registered_is_refused_by_name(node_factory: Any, tiny_factory: Any, remote: Path) -> None:
    tiny = tiny_factory("--model", "fake-model")
    node = node_factory("S", env=_env(remote)).start()
    with pytest.raises(httpx.HTTPStatusError) as refused:
        node.control("POST", "/rented", {"name": "gpu", "provider": "no-such-cloud", "url": tiny.url})
    text = refused.value.response.text
    assert "no-such-cloud" in text and "fake-gpu" in text, text
    with pytest.raises(httpx.HTTPStatusError) as not_offered:
        node.control("POST", "/rented", {"name": "plain", "url": tiny.url, "models": ["fake-model"]})
        node.control("POST", "/rented/plain/pause")
    assert "cannot pause" in not_offered.value.response.text, not_offered.value.response.text
