"""In-process cost of a request's way before it leaves the node, and of the rented node's cap check after
each answer, for checkouts side by side (A/B runs alternating their order).

    python -m bench.plan_cost [--tree DIR ...] [--requests 1000] [--rounds 7] [--runs 6]

Per checkout, in a process of its own that imports that checkout's ``app``: a node built as
``pairwise serve`` builds it (``bootstrap.build_node``, started without its front door) with one engine
(the tiny model server) times ``validate_request``, ``estimate`` and ``InferenceService.plan_for`` for
a short chat stream, ``--requests`` times a round; and a ``RentedManager`` on a spend account of its own
times ``check_budget`` on a node without a cap and on one with a day cap (what runs after each rented
answer). Prints one line per checkout and run: the smallest round's µs per call (a round's mean), and
the load average. No sockets or scheduler in the figures, so two checkouts compare on a shared machine;
in a serving node the same work takes about three times as long (its caches go cold between requests,
*the front door's own work* in README.md).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()


def _best(times_ns: list[int], count: int) -> float:
    return round(min(times_ns) / count / 1000, 2)


async def _request_path(requests: int, rounds: int) -> dict[str, float]:
    from app.harness import TinyProc
    from app.home import Home
    from app.services.backends.base import Caller
    from app.services.backends.engines import add_engine_offline
    from app.services.bootstrap import build_node
    from app.services.jobs.requester import local_app
    from app.services.routing.fit import estimate
    from app.services.translate.validate import validate_request
    from app.settings import SettingsStore

    tiny = TinyProc("--api", "openai", "--model", "tiny")
    try:
        home = Home(Path(tempfile.mkdtemp(prefix="plan-cost-")) / "home")
        home.ensure()
        add_engine_offline(SettingsStore(home.settings_file), None,  # type: ignore[arg-type]  # no token: no keyring
                           {"name": "tiny", "url": tiny.url, "api": "openai"}, None)
        node = build_node(home, listen="127.0.0.1:0", cluster_listen="127.0.0.1:0", name="plan-cost", mdns=False)
        await node.start(frontdoor=False)
        try:
            for _ in range(500):  # the engine's models, once its first refresh has answered (10 s at most)
                if node.registry.inventory():
                    break
                await asyncio.sleep(0.02)
            model = next(iter(node.registry.inventory()))
            caller = Caller(requester=local_app(node.node_id, node.name, "bench"))
            body: dict[str, Any] = {"model": model, "stream": True, "max_tokens": 8,
                                    "messages": [{"role": "user", "content": "Say hello in one short sentence."}]}
            clock = time.perf_counter_ns
            spent: dict[str, list[int]] = {"validate": [], "estimate": [], "plan_for": []}
            for _ in range(rounds):
                took = dict.fromkeys(spent, 0)
                for _ in range(requests):
                    began = clock()
                    validate_request("openai", "chat", body)
                    validated = clock()
                    size = estimate(body)
                    estimated = clock()
                    plan = await node.inference.plan_for(model, caller, size, None, body)
                    took["validate"] += validated - began
                    took["estimate"] += estimated - validated
                    took["plan_for"] += clock() - estimated
                assert plan.candidates, "the engine is no candidate"
                for key, value in took.items():
                    spent[key].append(value)
            return {key: _best(values, requests) for key, values in spent.items()}
        finally:
            await node.stop()
    finally:
        tiny.stop()


def _cap_check(requests: int, rounds: int) -> dict[str, float]:
    from app.services.events import EventBus
    from app.services.rented.decl import validate_decl
    from app.services.rented.manager import RentedManager
    from app.services.rented.meter import CostMeter
    from app.services.rented.store import RentedStore
    from app.services.routing.registry import UpstreamRegistry

    class NoSecrets:
        def get(self, key: str) -> str | None:
            return None

    work = Path(tempfile.mkdtemp(prefix="plan-cost-"))
    manager = RentedManager(store=RentedStore(work / "rented.json"), secrets=NoSecrets(),  # type: ignore[arg-type]
                            registry=UpstreamRegistry(), bus=EventBus(), sponsor_name="A", sponsor_id="a-id",
                            meter=CostMeter(work / "spend.db"))
    out: dict[str, float] = {}
    for label, budget in (("check_budget_uncapped", {}), ("check_budget_day_cap", {"usd_per_day": 1000.0})):
        decl = validate_decl({"name": f"gpu-{len(out)}", "url": "https://127.0.0.1:9", "price_per_hour": 3.6,
                              "budget": budget}, manager.providers)
        node = manager._make(decl)
        manager.meter.charge(node.name, 0.01)  # a row in the account, as after a first answer
        times: list[int] = []
        for _ in range(rounds):
            began = time.perf_counter_ns()
            for _ in range(requests):
                manager.check_budget(node)
            times.append(time.perf_counter_ns() - began)
        assert node.budget_reason is None, node.budget_reason
        out[label] = _best(times, requests)
    manager.meter.flush()
    return out


def child(tree: Path, requests: int, rounds: int) -> None:
    sys.path.insert(0, str(tree))
    os.chdir(tree)
    figures = asyncio.run(_request_path(requests, rounds))
    figures.update(_cap_check(requests, rounds))
    print(json.dumps(figures))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.plan_cost", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tree", type=Path, action="append", default=[], help="another checkout (repeatable)")
    parser.add_argument("--requests", type=int, default=1000, help="calls per round (default 1000)")
    parser.add_argument("--rounds", type=int, default=7, help="rounds per checkout and run; the best is kept")
    parser.add_argument("--runs", type=int, default=6, help="runs, the checkouts' order turned each run")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        child(args.child, args.requests, args.rounds)
        return
    trees = [HERE.parent.parent, *(tree.resolve() for tree in args.tree)]
    env = {**os.environ, "PAIRWISE_MDNS": "off"}
    for run in range(args.runs):
        shift = run % len(trees)
        for tree in trees[shift:] + trees[:shift]:
            load = os.getloadavg()[0]
            result = subprocess.run([sys.executable, "-m", "bench.plan_cost", "--child", str(tree), "--requests",
                                     str(args.requests), "--rounds", str(args.rounds)], cwd=HERE.parent.parent,
                                    capture_output=True, text=True, env=env, timeout=600)
            if result.returncode != 0:
                raise SystemExit(f"{tree}: {result.stderr[-3000:]}")
            figures = json.loads(result.stdout.strip().splitlines()[-1])
            cells = "  ".join(f"{key} {value:.2f}" for key, value in figures.items())
            print(f"run {run + 1}  {tree}  load {load:.2f}  µs per call: {cells}", flush=True)


if __name__ == "__main__":
    main()
