"""`python -m bench.cluster_cost [--records N] [--peers 9] [--idle-s 60]`: what paired peers cost a node
(issue 31's growth rows), all node processes on loopback, paired with the CLI (`app.harness.pair`).

* **Replication per record to 3 peers.** A hub node with the engine, paired with three leaves, and a
  lone node with the same engine (paired with nobody) as the baseline. N chat requests alternate
  between the hub and the lone node, so each makes N job records and load changes hit both alike;
  the window ends when every leaf holds the hub's last record. The hub's CPU for replication is its
  CPU minus the lone node's, less what it spends idle with its peers (polls, measured in a window
  before); the leaves' is their CPU less their idle rate. Bytes are the TCP payload (TLS included)
  of the hub's connections to the leaves' cluster ports (`ss -ti`, sampled), less the idle window's.
* **Idle CPU with 9 peers.** Six more leaves are paired (a star: the hub has 9 peers, each leaf 1),
  then every process's CPU is read over ``--idle-s`` seconds with no traffic, with the lone node's
  as the zero-peer baseline; growth per peer is the hub's excess over the lone node divided by 9
  (and, from the window with 3 peers, the same slope between 3 and 9).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from app.harness import NodeProc, TinyProc, pair, wait_until
from bench.readings import cpu_seconds

MODEL = "tiny:latest"
BODY = {"model": MODEL, "stream": False, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 4}
_SOCKET = re.compile(r"^\d+\s+\d+\s+(\S+):(\d+)\s+(\S+):(\d+)")
_BYTES = re.compile(r"\bbytes_(sent|received):(\d+)")


def cluster_port(node: NodeProc) -> int:
    address = wait_until(lambda: json.loads((node.home / "runtime.json").read_text(encoding="utf-8")).get("cluster"),
                         what=f"{node.name}'s cluster port")
    return int(str(address).rsplit(":", 1)[1])


def socket_bytes(ports: set[int]) -> dict[tuple[int, int], tuple[int, int]]:
    """(local port, remote port) -> (bytes sent, bytes received) of established sockets to ``ports``."""
    out = subprocess.run(["ss", "-tinH", "state", "established"], capture_output=True, text=True, check=True).stdout
    found: dict[tuple[int, int], tuple[int, int]] = {}
    key: tuple[int, int] | None = None
    for line in out.splitlines():
        head = _SOCKET.match(line)
        if head is not None:
            key = (int(head.group(2)), int(head.group(4))) if int(head.group(4)) in ports else None
            continue
        if key is not None:
            counts = dict(_BYTES.findall(line))
            found[key] = (int(counts.get("sent", 0)), int(counts.get("received", 0)))
            key = None
    return found


class Wire:
    """Bytes on the hub's connections to the leaves over a window, sampled so short-lived sockets count."""

    def __init__(self, ports: set[int], every_s: float = 0.2) -> None:
        self.ports, self.every_s = ports, every_s
        self._start: dict[tuple[int, int], tuple[int, int]] = {}
        self._last: dict[tuple[int, int], tuple[int, int]] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Wire:
        self._start = socket_bytes(self.ports)
        self._last = dict(self._start)
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._stop.wait(self.every_s):
            self._last.update(socket_bytes(self.ports))

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        assert self._thread is not None
        self._thread.join()
        self._last.update(socket_bytes(self.ports))

    def totals(self) -> tuple[int, int]:
        sent = sum(s - self._start.get(k, (0, 0))[0] for k, (s, _) in self._last.items())
        received = sum(r - self._start.get(k, (0, 0))[1] for k, (_, r) in self._last.items())
        return sent, received


def cpu_of(nodes: dict[str, NodeProc]) -> dict[str, float]:
    return {name: cpu_seconds(node.pid) for name, node in nodes.items()}


def idle_window(nodes: dict[str, NodeProc], seconds: float, ports: set[int]) -> dict[str, Any]:
    before, began = cpu_of(nodes), time.perf_counter()
    with Wire(ports) as wire:
        time.sleep(seconds)  # the row is what an idle node spends over this window: nothing to wait on
    took = time.perf_counter() - began
    after = cpu_of(nodes)
    sent, received = wire.totals()
    return {"seconds": round(took, 2), "cpu_pct": {n: round((after[n] - before[n]) / took * 100, 3) for n in nodes},
            "hub_bytes_sent_per_s": round(sent / took, 1), "hub_bytes_received_per_s": round(received / took, 1)}


def holds(leaf: NodeProc, job_id: str) -> bool:
    jobs = leaf.control("GET", "/jobs?limit=5")["jobs"]
    return any(j["id"] == job_id and j["state"] == "completed" for j in jobs)


def load_window(hub: NodeProc, lone: NodeProc, leaves: list[NodeProc], records: int,
                nodes: dict[str, NodeProc], ports: set[int]) -> dict[str, Any]:
    before, began = cpu_of(nodes), time.perf_counter()
    last = ""
    with Wire(ports) as wire, httpx.Client(timeout=60, trust_env=False) as client:
        for _ in range(records):
            for node in (hub, lone):
                answer = client.post(f"{node.url}/v1/chat/completions", json=BODY)
                answer.raise_for_status()
                if node is hub:
                    last = answer.headers["x-pairwise-job"]
        for leaf in leaves:
            wait_until(lambda leaf=leaf: holds(leaf, last), timeout=120, interval=0.05,  # type: ignore[misc]
                       what=f"{leaf.name} to hold the hub's last record")
    took = time.perf_counter() - began
    after = cpu_of(nodes)
    sent, received = wire.totals()
    return {"seconds": round(took, 2), "cpu_s": {n: round(after[n] - before[n], 3) for n in nodes},
            "hub_bytes_sent": sent, "hub_bytes_received": received}


def per_record(idle: dict[str, Any], load: dict[str, Any], records: int, leaves: list[str]) -> dict[str, Any]:
    took = load["seconds"]

    def excess(name: str) -> float:  # CPU seconds over this node's idle rate for the window's length
        return float(load["cpu_s"][name]) - idle["cpu_pct"][name] / 100 * took

    hub_us = (excess("hub") - excess("lone")) / records * 1e6
    leaf_us = sum(excess(n) for n in leaves) / len(leaves) / records * 1e6
    sent = load["hub_bytes_sent"] - idle["hub_bytes_sent_per_s"] * took
    received = load["hub_bytes_received"] - idle["hub_bytes_received_per_s"] * took
    return {"hub_cpu_us": round(hub_us, 1), "hub_cpu_us_per_peer": round(hub_us / len(leaves), 1),
            "leaf_cpu_us": round(leaf_us, 1), "bytes_sent": round(sent / records, 1),
            "bytes_sent_per_peer": round(sent / records / len(leaves), 1),
            "bytes_received": round(received / records, 1)}


def measure(records: int, peers: int, idle_s: float, first_peers: int = 3) -> dict[str, Any]:
    first_peers = min(first_peers, peers)
    work = Path(tempfile.mkdtemp(prefix="pairwise-cluster-cost-"))
    tiny = TinyProc("--api", "openai", "--model", MODEL)
    nodes: dict[str, NodeProc] = {}
    try:
        for name in ("hub", "lone"):
            nodes[name] = NodeProc(work / name, name).start(wait_answer=True)
            nodes[name].add_engine("tiny", tiny.url)
        hub, lone = nodes["hub"], nodes["lone"]
        wait_until(lambda: MODEL in hub.models() and MODEL in lone.models(), what="the model listed")
        leaves: list[NodeProc] = []
        loads = [round(os.getloadavg()[0], 2)]

        def grow(to: int) -> set[int]:
            while len(leaves) < to:
                leaf = NodeProc(work / f"leaf{len(leaves) + 1}", f"leaf{len(leaves) + 1}").start(wait_answer=True)
                nodes[leaf.name] = leaf
                pair(hub, leaf, MODEL)
                leaves.append(leaf)
            wait_until(lambda: sum(p.get("online", False) for p in hub.control("GET", "/peers")["peers"]) == to,
                       timeout=120, what=f"the hub to see {to} peers online")
            return {cluster_port(leaf) for leaf in leaves}

        ports = grow(first_peers)
        watched = {n: nodes[n] for n in ("hub", "lone", *[leaf.name for leaf in leaves])}
        idle_few = idle_window(watched, min(idle_s, 20.0), ports)
        load = load_window(hub, lone, leaves, records, watched, ports)
        loads.append(round(os.getloadavg()[0], 2))
        replication = per_record(idle_few, load, records, [leaf.name for leaf in leaves])
        ports = grow(peers)
        idle_many = idle_window(dict(nodes), idle_s, ports)
        loads.append(round(os.getloadavg()[0], 2))
        hub_pct, lone_pct = idle_many["cpu_pct"]["hub"], idle_many["cpu_pct"]["lone"]
        leaf_pcts = [idle_many["cpu_pct"][leaf.name] for leaf in leaves]
        return {
            "records": records, "loadavg": loads,
            "replication": {"peers": first_peers, "idle": idle_few, "load": load, "per_record": replication},
            "idle": {"peers": peers, "window": idle_many,
                     "hub_cpu_pct": hub_pct, "lone_cpu_pct": lone_pct,
                     "leaf_cpu_pct_median": round(sorted(leaf_pcts)[len(leaf_pcts) // 2], 3),
                     "per_peer_cpu_pct": round((hub_pct - lone_pct) / peers, 3),
                     "per_peer_cpu_pct_3_to_9": round((hub_pct - idle_few["cpu_pct"]["hub"]) / max(peers - first_peers, 1), 3),
                     "hub_bytes_per_s_per_peer": round((idle_many["hub_bytes_sent_per_s"]
                                                        + idle_many["hub_bytes_received_per_s"]) / peers, 1)},
        }
    finally:
        for node in nodes.values():
            node.stop()
        tiny.stop()
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=1000)
    parser.add_argument("--peers", type=int, default=9)
    parser.add_argument("--idle-s", type=float, default=60.0)
    args = parser.parse_args(argv)
    print(json.dumps(measure(args.records, args.peers, args.idle_s), indent=1))


if __name__ == "__main__":
    main()
