"""A provider of batch windows written outside the app, in this one file, offers its window operations
to a real node (``PAIRWISE_PROVIDERS``; ``offer(manager)`` puts them under ``WINDOWS.by(name)``,
rented/operations.py): a batch that cannot meet its deadline on the cluster is planned on its
cheapest GPU, ``--rent`` starts the window there, the window serves the batch, and the batch's end
stops it so it bills no more (docs/adding-a-provider.md, "Offering creation").

The fake's "cloud" is a JSON file the test and the node process both read. Beside it the node has
Hugging Face's windows too, not signed in: its GPU list cannot be read, so the fake's is the one.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from app.harness import wait_until
from app.home import Home
from app.services.api.batch import BatchApi
from app.services.api.changes import BatchOrder
from app.services.api.plans import WindowFlavor, WindowPlan
from app.services.api.rows import RentedRow
from app.services.errors import ConfigError, FeatureMissing
from app.services.json_types import JsonObject
from app.services.rented.operations import WINDOWS, NoProviderOffers
from app.services.rented.provider import (
    Action,
    BaseProvider,
    NotOffered,
    ProviderRegistry,
    ProviderState,
    State,
)
from app.services.rented.upstream import RentedUpstream
from tests.batch.support import chat_lines, jsonl, wait_engines

if TYPE_CHECKING:
    from app.services.rented.manager import RentedManager

MODEL = "fake/tiny"
REMOTE, WINDOW_URL = "FAKE_WINDOWS_REMOTE", "FAKE_WINDOWS_URL"
GPUS: list[WindowFlavor] = [
    {"name": "fake-cpu", "pretty": "Fake CPU", "gpu": None, "price_per_hour": 0.01, "window_price_per_hour": 0.02},
    {"name": "fake-a100", "pretty": "Fake A100", "gpu": "A100", "price_per_hour": 3.0, "window_price_per_hour": 3.01},
    {"name": "fake-t4", "pretty": "Fake T4", "gpu": "T4", "price_per_hour": 0.4, "window_price_per_hour": 0.41},
]


def read(remote: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(remote.read_text(encoding="utf-8"))
    return data


def write(remote: Path, data: dict[str, Any]) -> None:
    temporary = remote.with_suffix(".tmp")
    temporary.write_text(json.dumps(data), encoding="utf-8")
    temporary.replace(remote)


class FakeWindows(BaseProvider):
    """Batch windows on the fake cloud: billed while running, stopped (never paused)."""

    name = "fake-windows"
    display_name = "Fake windows"
    capabilities = frozenset({Action.STOP})
    polls = True

    def __init__(self) -> None:
        self.remote = Path(os.environ[REMOTE])

    def offer(self, manager: RentedManager) -> None:
        manager.providers.put(WINDOWS.by(self.name), FakeWindowOps(self.remote, manager))

    def allowed(self, row: RentedRow, state: ProviderState) -> frozenset[Action]:
        return frozenset({Action.STOP}) if state.state is not State.ENDED else frozenset()

    async def poll(self, node: RentedUpstream) -> ProviderState:
        window = read(self.remote)["windows"][node.name]
        if window["state"] == "running":
            return ProviderState(State.RUNNING, True, "the fake window runs", "up")
        return ProviderState(State.ENDED, False, "the fake window has ended", "ended")

    async def stop(self, name: str) -> None:
        data = read(self.remote)
        data["windows"][name].update(state="stopped", stopped_at=time.time())
        write(self.remote, data)


class FakeWindowOps:
    """What ``WindowOperations`` asks: GPUs, a plan, a start that attaches the window as a rented node."""

    def __init__(self, remote: Path, manager: RentedManager) -> None:
        self.remote, self.manager = remote, manager

    async def flavors(self) -> list[WindowFlavor]:
        return GPUS

    async def plan(self, params: JsonObject) -> WindowPlan:
        gpu = next((g for g in GPUS if g["name"] == params.get("gpu")), None)
        if gpu is None:
            raise ConfigError(f"no GPU {params.get('gpu')!r} on the fake cloud")
        minutes = int(str(params["window"]).removesuffix("m"))
        price = gpu["window_price_per_hour"]
        return {"name": str(params["name"]), "provider": FakeWindows.name, "namespace": "me", "model": str(params["model"]),
                "engine": "tiny", "image": "tinymodel", "gpu": gpu["name"], "gpu_description": str(gpu["gpu"]),
                "hardware_per_hour": gpu["price_per_hour"], "port_fee_per_hour": price - gpu["price_per_hour"],
                "price_per_hour": price, "window_s": minutes * 60, "window": f"{minutes} min", "window_minutes": minutes,
                "window_cost_usd": round(price * minutes / 60, 6),
                "budget": {"usd_per_day": None, "usd_per_month": None, "spent_day_usd": 0.0, "spent_month_usd": 0.0},
                "idle_stop_min": None, "use": "prefer", "pause_on_exit": True, "access": "loopback",
                "notes": [], "new_window_on_existing_node": False}

    async def create(self, params: JsonObject) -> RentedRow:
        plan = await self.plan(params)
        data = read(self.remote)
        data["windows"][plan["name"]] = {"state": "running", "gpu": plan["gpu"], "minutes": plan["window_minutes"],
                                         "stopped_at": None}
        write(self.remote, data)
        await self.manager.attach({
            "name": plan["name"], "provider": FakeWindows.name, "url": os.environ[WINDOW_URL], "models": [plan["model"]],
            "gpu": plan["gpu"], "price_per_hour": plan["price_per_hour"], "routing": {"use": plan["use"]},
            "lifecycle": {"managed": True, "wake_on_request": False, "pause_on_sponsor_exit": True}}, None)
        return self.manager.show(plan["name"])

    def extend(self, name: str) -> None:
        raise NotOffered(f"refused to extend {name}: a fake window has a fixed length")

    async def logs(self, name: str, *, follow: bool, tail: int | None) -> AsyncIterator[tuple[str, str]]:
        for line in ("the fake window started",):
            yield "1970-01-01T00:00:00Z", line


PLUGIN = f"{__name__}:FakeWindows"


def test_a_batch_rents_its_window_from_the_provider_that_offers_the_cheapest_gpu(
        node_factory: Any, tiny_factory: Any, tmp_path: Path) -> None:
    remote = tmp_path / "fake-cloud.json"
    write(remote, {"windows": {}})
    slow = tiny_factory("--model", MODEL, "--first-byte-delay-s", "0.5")  # about 2 lines a second
    window = tiny_factory("--model", MODEL)
    node = node_factory("S", env={"PAIRWISE_PROVIDERS": PLUGIN, REMOTE: str(remote), WINDOW_URL: window.url,
                                  "PAIRWISE_PROVIDER_POLL_S": "0.1"}).start()
    node.add_engine("local", slow.url, capacity=1)
    wait_engines(node, "local")
    content = jsonl(chat_lines(300, model=MODEL)).decode()

    plan = node.control("POST", "/batches/plan", {"content": content, "deadline": "1m"})
    assert plan["meets_deadline"] is False, plan
    rent = plan["rent"]
    assert rent is not None, plan["rent_note"]
    # The cheapest GPU (the CPU-only flavour is not one) of the provider whose list could be read.
    assert (rent["provider"], rent["gpu"], rent["window_minutes"]) == ("fake-windows", "fake-t4", 1), rent
    assert rent["window_cost_usd"] == pytest.approx(0.41 / 60, abs=1e-6)  # priced by its own plan
    assert read(remote)["windows"] == {}, "a plan rents nothing"

    started = node.control("POST", "/batches", {"content": content, "deadline": "1m", "rent": True})
    name = started["rented_window"]
    assert name and name == started["plan"]["rent"]["name"]
    assert read(remote)["windows"][name]["state"] == "running"  # started on the fake cloud, by its operations
    row = node.control("GET", f"/rented/{name}")
    assert row["provider"] == "fake-windows" and row["capabilities"] == ["stop"] and row["lifecycle"]["managed"]

    batch_id = started["batch"]["id"]
    done = wait_until(lambda: (lambda b: b if b["status"] in ("completed", "failed", "cancelled") else None)(
        node.control("GET", f"/batches/{batch_id}")), timeout=120, what="the batch to end")
    assert done["status"] == "completed", done
    used = {c["copy"]: c["done"] for c in done["pairwise"]["copies"]}
    assert used.get(name, 0) > 0, used  # the rented window served the batch

    # Money: the batch was the window's only user, so its end stops the window on its provider.
    wait_until(lambda: read(remote)["windows"][name]["state"] == "stopped" or None, timeout=30,
               what="the batch's end to stop the window")
    wait_until(lambda: node.control("GET", f"/rented/{name}")["billing"] is False or None, timeout=30,
               what="the node to see the window no longer billing")


def test_which_provider_offers_windows_is_chosen_or_refused_by_name(tmp_path: Path) -> None:
    registry = ProviderRegistry()
    with pytest.raises(NoProviderOffers) as none:
        WINDOWS.of(registry)
    assert isinstance(none.value, FeatureMissing) and "no batch-window operations" in none.value.message
    first = FakeWindowOps(tmp_path / "a.json", None)  # type: ignore[arg-type]  (no manager: never called)
    registry.put(WINDOWS.by("cloud-a"), first)
    assert WINDOWS.of(registry) is first  # the only one
    with pytest.raises(NoProviderOffers, match="'cloud-b' does not start batch windows.*cloud-a"):
        WINDOWS.of(registry, "cloud-b")
    second = FakeWindowOps(tmp_path / "b.json", None)  # type: ignore[arg-type]
    registry.put(WINDOWS.by("cloud-b"), second)
    assert WINDOWS.of(registry, "cloud-b") is second  # the one named
    with pytest.raises(ConfigError, match=r"several providers start batch windows on this node \(cloud-a, cloud-b\)"):
        WINDOWS.of(registry)
    assert WINDOWS.among(registry) == {"cloud-a": first, "cloud-b": second}


async def test_rent_on_a_node_where_no_provider_offers_windows_is_refused_by_name(tmp_path: Path) -> None:
    from app.services.bootstrap import build_node

    node = build_node(Home(tmp_path / "home"), listen="127.0.0.1:0", cluster_listen="127.0.0.1:0")
    node.rented = None  # a node without rented nodes: nothing offers a window
    order = BatchOrder(content=jsonl(chat_lines(3, model=MODEL)).decode(), deadline="1m", rent=True)
    with pytest.raises(NoProviderOffers, match="--rent needs a provider of batch windows"):
        await BatchApi(node).run(order)
    assert node.batches is not None and node.batches.page(limit=5)["data"] == []  # nothing was started
