"""RentedManager in process: attach/set/detach with the keyring (a fake here) and rented.json,
the hooks a lifecycle controller gets, cost per workload, budgets, off-LAN notices."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, cast

import pytest

from app.services.errors import ConfigError, CredentialError, NotFound, RefusedError
from app.services.events import Event, EventBus, OffLanPrompt, WorkloadFinished, WorkloadRunning
from app.services.hf.providers import EndpointProvider
from app.services.rented.change import BudgetChange, RentedChange, RoutingChange, parse_given
from app.services.rented.manager import RentedManager
from app.services.rented.meter import CostMeter
from app.services.rented.per_token import router_prices
from app.services.rented.provider import PlainProvider, WireTraits
from app.services.rented.store import RentedStore
from app.services.rented.upstream import RentedUpstream
from app.services.routing.registry import UpstreamRegistry
from tests.rented.conftest import TOKEN, TlsTiny


class FakeSecrets:
    def __init__(self) -> None:
        self.values: dict[str, str] = {}

    def set(self, key: str, value: str) -> None:
        self.values[key] = value

    def get(self, key: str) -> str | None:
        return self.values.get(key)

    def delete(self, key: str) -> None:
        self.values.pop(key, None)


class Clock:
    now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def setup(tmp_path: Path) -> AsyncIterator[dict[str, Any]]:
    bus, registry, secrets, clock = EventBus(), UpstreamRegistry(), FakeSecrets(), Clock()
    events: list[Event] = []
    bus.on(events.append)
    manager = RentedManager(store=RentedStore(tmp_path / "rented.json"), secrets=secrets,  # type: ignore[arg-type]
                            registry=registry, bus=bus, sponsor_name="A", sponsor_id="a-id",
                            meter=CostMeter(tmp_path / "meter.json", clock=clock))
    yield {"manager": manager, "secrets": secrets, "registry": registry, "events": events, "clock": clock,
           "file": tmp_path / "rented.json"}
    await manager.stop()


def decl(tls_tiny: TlsTiny, **extra: Any) -> dict[str, Any]:
    return {"name": "gpu", "url": tls_tiny.url, "ca_file": str(tls_tiny.ca_file), "price_per_hour": 3.6, **extra}


async def test_attach_stores_token_in_keyring_only(setup: dict[str, Any], tls_tiny: TlsTiny) -> None:
    manager: RentedManager = setup["manager"]
    with pytest.raises(CredentialError, match="refused the token given"):
        await manager.attach(decl(tls_tiny), "wrong-token-9999")
    assert not setup["file"].exists() and setup["secrets"].values == {}
    with pytest.raises(RefusedError, match="http:// only for loopback"):
        await manager.attach({"name": "x", "url": "http://192.0.2.1"}, TOKEN)
    with pytest.raises(ConfigError, match="does not exist"):
        await manager.attach(decl(tls_tiny, ca_file="/nonexistent/ca.pem"), TOKEN)

    row = await manager.attach(decl(tls_tiny), TOKEN)
    assert row["state"] == "eligible" and row["models"] == ["rented-model"] and row["has_credential"]
    assert setup["secrets"].values == {"rented:gpu": TOKEN}
    assert TOKEN not in setup["file"].read_text() and '"has_credential": true' in setup["file"].read_text()
    assert setup["registry"].get("rented:gpu") is manager.get("gpu")
    [fact] = manager.shared_facts()
    assert "url" not in fact and tls_tiny.url not in str(fact) and fact["kind"] == "rented"
    with pytest.raises(ConfigError, match="already attached"):
        await manager.attach(decl(tls_tiny), TOKEN)

    changed = await manager.set("gpu", RentedChange(share_with_cluster=True, routing=RoutingChange(use="overflow")))
    assert changed["shared"] and changed["policy"] == "overflow"
    with pytest.raises(ConfigError, match="cannot be renamed"):
        parse_given(RentedChange, {"name": "other"})
    with pytest.raises(ConfigError, match="cannot be renamed"):
        await manager.merge("gpu", {"name": "other"})

    await manager.detach("gpu")
    assert setup["secrets"].values == {} and setup["registry"].get("rented:gpu") is None
    with pytest.raises(NotFound):
        manager.show("gpu")


async def test_apply_attaches_then_replaces(setup: dict[str, Any], tls_tiny: TlsTiny) -> None:
    manager: RentedManager = setup["manager"]
    await manager.apply([decl(tls_tiny)], TOKEN)
    [row] = await manager.apply([decl(tls_tiny, routing={"use": "prefer"}, gpu="1x L40S")], None)
    assert row["policy"] == "prefer" and row["gpu"] == "1x L40S" and row["has_credential"]
    assert manager.get("gpu").has_token


async def test_cost_budget_and_hooks(setup: dict[str, Any], tls_tiny: TlsTiny) -> None:
    manager: RentedManager = setup["manager"]
    await manager.attach(decl(tls_tiny, budget={"usd_per_day": 0.5}), TOKEN)
    node = manager.get("gpu")
    finished: list[dict[str, Any]] = []
    reached: list[str] = []
    manager.hooks.on_workload_finished.append(lambda n, job: finished.append(job))

    async def on_budget(n: RentedUpstream, reason: str) -> None:
        reached.append(reason)

    manager.hooks.on_budget_reached.append(on_budget)
    manager.hooks.began(node, "job-1")
    setup["clock"].now += 600  # ten minutes at $3.60/h = $0.60
    manager.bus.publish(WorkloadFinished(job={"id": "job-1", "rented_node": "gpu", "serving_node_id": node.node_id}))
    for _ in range(50):
        if reached:
            break
        await asyncio.sleep(0.01)
    assert [j["id"] for j in finished] == ["job-1"]
    assert reached == ["budget reached: $0.60 of $0.50 per day (UTC)"]
    assert node.ineligible_reason() == "budget reached: $0.60 of $0.50 per day (UTC)"
    assert manager.show("gpu")["cost"]["day_usd"] == pytest.approx(0.6)
    # Raising the cap makes it eligible again.
    await manager.set("gpu", RentedChange(budget=BudgetChange(usd_per_day=5)))
    assert node.ineligible_reason() is None


async def test_off_lan_prompt_only_on_the_origin(setup: dict[str, Any]) -> None:
    manager: RentedManager = setup["manager"]
    manager.bus.publish(WorkloadRunning(job={"id": "j1", "off_lan": True, "origin_node_id": "a-id",
                                             "rented_node": "gpu", "model": "m", "requester": "app"}))
    manager.bus.publish(WorkloadRunning(job={"id": "j2", "off_lan": True, "origin_node_id": "b-id",
                                             "rented_node": "gpu", "model": "m", "requester": "B"}))
    manager.bus.publish(WorkloadRunning(job={"id": "j3", "off_lan": False, "origin_node_id": "a-id"}))
    prompts = [e for e in setup["events"] if isinstance(e, OffLanPrompt)]
    assert [p.job_id for p in prompts] == ["j1"] and prompts[0].rented_node == "gpu"


async def test_endpoint_without_url_needs_a_resolver(setup: dict[str, Any], tls_tiny: TlsTiny) -> None:
    manager: RentedManager = setup["manager"]
    data = {"name": "hf", "provider": "huggingface-endpoint", "endpoint": "demo/ep", "models": ["rented-model"]}
    with pytest.raises(ConfigError, match="needs the provider.s resolver"):
        await manager.attach(data, TOKEN)

    async def resolve(d: Any, token: str | None) -> Any:
        assert token == TOKEN
        return d.model_copy(update={"url": tls_tiny.url, "gpu": "1x L4", "price_per_hour": 0.8,
                                    "ca_file": str(tls_tiny.ca_file)})

    manager.hooks.resolvers.append(resolve)  # what the HF adapter registers: the resolver and the provider
    manager.providers.register(EndpointProvider(cast("Any", None)))
    row = await manager.attach(data, TOKEN)
    assert row["gpu"] == "1x L4" and row["url"] == tls_tiny.url and row["cold_start_s"] == 600


async def test_a_budget_without_a_price_is_refused_not_ignored(setup: dict[str, Any], tls_tiny: TlsTiny) -> None:
    manager: RentedManager = setup["manager"]
    row = await manager.attach(decl(tls_tiny, price_per_hour=None, budget={"usd_per_day": 2}), TOKEN)
    assert (row["state"], row["eligible"]) == ("ineligible", False)
    assert "price per hour is unknown" in row["reason"] and "--price-per-hour" in row["reason"]
    row = await manager.set("gpu", RentedChange(price_per_hour=1.8))
    assert row["state"] == "eligible"


async def test_sponsor_exit_pauses_every_node_at_once_and_wakes_none(setup: dict[str, Any],
                                                                      tls_tiny: TlsTiny) -> None:
    manager: RentedManager = setup["manager"]
    for name in ("one", "two", "three"):
        await manager.attach(decl(tls_tiny, name=name, lifecycle={"managed": True}), TOKEN)
    running: list[str] = []
    paused: list[str] = []
    overlapped = asyncio.Event()

    async def slow_pause(node: RentedUpstream) -> None:
        running.append(node.name)
        if len(running) == 3:
            overlapped.set()
        await asyncio.wait_for(overlapped.wait(), 2)  # returns only if all three pauses run together
        paused.append(node.name)

    manager.hooks.on_sponsor_exit.append(slow_pause)
    await manager.on_sponsor_exit()
    assert sorted(paused) == ["one", "three", "two"] and manager.exiting


class _AcmeRouter(PlainProvider):
    name = "acme-router"
    display_name = "Acme's router"
    traits = WireTraits(per_token=True, declared_models=True, lists_token_prices=True)


async def test_a_listed_per_token_price_names_its_provider(setup: dict[str, Any], tls_tiny: TlsTiny) -> None:
    """A price a router lists says who listed it, from its provider's display_name: rented/ names none."""
    manager: RentedManager = setup["manager"]
    manager.providers.register(_AcmeRouter())
    await manager.attach({**decl(tls_tiny, models=["m"]), "provider": "acme-router"}, TOKEN)
    node = manager.get("gpu")
    node.router_prices = router_prices({"data": [{"id": "m", "providers": [
        {"provider": "x", "status": "live", "pricing": {"input": 0.1, "output": 0.5}}]}]})
    price = node.token_price("m")
    assert price is not None and price.source == "Acme's router"
    assert price.text().endswith("(Acme's router)")


async def test_no_cap_reads_no_spend_and_a_cap_given_later_holds(setup: dict[str, Any], tls_tiny: TlsTiny) -> None:
    """After each answer an uncapped node reads nothing from the spend account; a cap given while it runs is
    looked at from the next answer on (the end-to-end form: tests/rented/test_cap_set_while_running.py)."""
    manager: RentedManager = setup["manager"]
    await manager.attach(decl(tls_tiny), TOKEN)
    node = manager.get("gpu")
    reads: list[str] = []
    spent = manager.meter.spent

    def counted(name: str, period: Any) -> float:
        reads.append(period)
        return spent(name, period)

    manager.meter.spent = counted  # type: ignore[method-assign]

    async def answer(job_id: str) -> None:
        manager.hooks.began(node, job_id)
        setup["clock"].now += 600  # ten minutes at $3.60/h = $0.60
        manager.bus.publish(WorkloadFinished(job={"id": job_id, "rented_node": "gpu", "serving_node_id": node.node_id}))
        await asyncio.sleep(0)  # the cost is recorded (and the cap looked at) at the loop's next turn
        await asyncio.sleep(0)

    await answer("job-1")
    assert reads == [] and node.ineligible_reason() is None
    await manager.set("gpu", RentedChange(budget=BudgetChange(usd_per_day=1.0)))  # its row shows the totals
    assert node.ineligible_reason() is None  # $0.60 of $1.00
    reads.clear()
    await answer("job-2")
    assert reads == ["day"]  # the cap's period only
    assert node.ineligible_reason() == "budget reached: $1.20 of $1.00 per day (UTC)"
