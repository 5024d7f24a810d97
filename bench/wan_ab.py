"""`python -m bench.wan_ab TREE [TREE ...] [--turns N]`: the rented link's warm row, checkouts side by side.

On a loaded machine two runs of ``bench.wan`` apart meet different loads, and the load moves the
node's added time to first byte more than a change does. This runs one link at 40 ms round trip
(``bench/wan_net.py``), one endpoint (``bench/wan_server.py``, plus the 1 s endpoint ``bench.wan``
attaches too) and one node per checkout (``NodeProc(tree=...)``, its own spend account), and asks
directly and through each node in rotating turns with the same client, so the load falls on all
alike. Prints one JSON line: each side's TTFB p50, each node's added p50, and each node's CPU and
run-queue wait per request (``/proc/<pid>/task/*/schedstat``: time on a CPU, time runnable but
waiting for one). Root, like ``bench.wan``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
from contextlib import AsyncExitStack, ExitStack
from pathlib import Path
from typing import Any

from app.harness import NodeProc
from bench import wan_net
from bench.load import chat_body, request
from bench.wan import MODEL, SERVER_IDLE_S, SHORT_MODEL, WanServer, attach, session

KEEPALIVE_S = 4.0


def schedstat(pid: int) -> tuple[int, int]:
    """Nanoseconds on a CPU and waiting for one, over the process's threads."""
    on_cpu = waiting = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            fields = Path(f"/proc/{pid}/task/{task}/schedstat").read_text().split()
        except OSError:
            continue
        on_cpu, waiting = on_cpu + int(fields[0]), waiting + int(fields[1])
    return on_cpu, waiting


async def turns(server: WanServer, nodes: dict[str, NodeProc], count: int) -> dict[str, Any]:
    body = chat_body(MODEL, stream=True, max_tokens=8)
    ttfb: dict[str, list[float]] = {"direct": [], **{name: [] for name in nodes}}
    errors: dict[str, int] = dict.fromkeys(ttfb, 0)
    async with AsyncExitStack() as stack:
        clients = {"direct": await stack.enter_async_context(session(server.url, KEEPALIVE_S, server.node_trust))}
        for name, node in nodes.items():
            clients[name] = await stack.enter_async_context(session(node.url, KEEPALIVE_S))
        for client in clients.values():
            await request(client, body)  # every pool warm
        before = {name: schedstat(node.pid) for name, node in nodes.items()}
        order = list(clients)
        for turn in range(count):
            first = turn % len(order)
            for name in order[first:] + order[:first]:
                sample = await request(clients[name], body)
                if sample.ok:
                    ttfb[name].append(sample.ttfb_s * 1000)
                else:
                    errors[name] += 1
        after = {name: schedstat(node.pid) for name, node in nodes.items()}
    p50 = {name: round(statistics.median(found), 3) if found else None for name, found in ttfb.items()}
    out: dict[str, Any] = {"ttfb_p50_ms": p50, "errors": errors, "turns": count}
    direct = p50["direct"]
    out["added_p50_ms"] = {name: round(value - direct, 3) if value is not None and direct is not None else None
                           for name, value in p50.items() if name != "direct"}
    out["cpu_ms_per_request"] = {name: round((after[name][0] - before[name][0]) / 1e6 / count, 3) for name in nodes}
    out["wait_ms_per_request"] = {name: round((after[name][1] - before[name][1]) / 1e6 / count, 3) for name in nodes}
    return out


def measure(trees: list[Path], count: int, work: Path) -> dict[str, Any]:
    reason = wan_net.can_build()
    if reason is not None:
        return {"skipped": reason}
    with ExitStack() as stack:
        link = stack.enter_context(wan_net.WanLink())
        server = WanServer(stack, link.exec_args(), link.far, work / "tls")
        short = WanServer(stack, link.exec_args(), link.far, work / "tls-short", "--model", SHORT_MODEL,
                          "--keepalive-s", str(SERVER_IDLE_S))
        nodes: dict[str, NodeProc] = {}
        for tree in trees:
            name = f"{len(nodes) + 1}:{tree}"
            node = NodeProc(work / f"node{len(nodes) + 1}", f"wan-ab-{len(nodes) + 1}", tree=tree,
                            env={"PAIRWISE_RENTED_KEEPALIVE_S": str(KEEPALIVE_S),
                                 "PAIRWISE_SPEND_DIR": str(work / f"spend{len(nodes) + 1}")})
            stack.callback(node.stop)
            node.start(wait_answer=True)
            attach(node, "far", server, MODEL)
            attach(node, "far-short", short, SHORT_MODEL)
            nodes[name] = node
        load = os.getloadavg()[0]
        out = asyncio.run(turns(server, nodes, count))
        out["load"] = [round(load, 2), round(os.getloadavg()[0], 2)]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.wan_ab", description=__doc__)
    parser.add_argument("trees", nargs="+", type=Path, help="checkouts whose app/ each node runs")
    parser.add_argument("--turns", type=int, default=100, help="requests per side (default 100)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="pairwise-wan-ab-") as work:
        print(json.dumps(measure([tree.resolve() for tree in args.trees], args.turns, Path(work))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
