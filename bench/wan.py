"""`python -m bench.wan [--smoke | --quick] [--out FILE]`: the rented link at 40 ms round trip (issue 31).

A rented endpoint is far away and behind TLS. This builds that as root (``bench/wan_net.py``): a
network namespace 20 ms away each way, the tiny model behind TLS in it with a CA made for the run
(``bench/wan_server.py``, counting TLS handshakes), and a Pairwise node (its own process) with that
endpoint attached as a rented node of the plain OpenAI-compatible provider, trusting the CA through
``--ca-file`` (verification on). The same client (aiohttp, the node's own data-plane library, with the
node's keep-alive) then asks the endpoint directly and through the node, interleaved:

* **warm**: sequential streamed requests on kept-alive connections: time to first byte p50/p99
  and what the node adds; interleaved with them, the same through the aiohttp floor
  (``bench/aiohttp_floor.py`` trusting the same CA, verification on): what any relay on the node's
  libraries adds on this link, TLS to the endpoint included, with no routing and no meter;
* **after idle**: one request each after a pause longer than the node's keep-alive (both sides
  connect anew: TCP, then TLS; every other sample keeps the caller's own connection to the node, so
  only the node's pool to the endpoint has gone cold) and after a pause shorter than it (both reuse);
  and, against a second endpoint whose server closes idle connections after 1 s, after a pause
  longer than the server's but shorter than the node's (the node must notice the close, not fail).
  After each pause a request of the bench's own goes first on a connection of its own (it takes the
  link's and the endpoint's wake-up, which otherwise lands on whichever side is measured first), and
  the floor is measured beside both sides (its pool's keep-alive set to the node's);
* **bursts**: N concurrent streams, twice, directly and through the node: TLS handshakes per
  stream (the server's count) and p50/p99 time to first byte.

Not root, or no iproute2: skipped with a note. The namespace and its link are removed at the end,
on failure and on Ctrl-C alike. Short runs set the node's keep-alive short
(``PAIRWISE_RENTED_KEEPALIVE_S``) so the idle rows take seconds; the full run keeps the node's own.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import httpx

from app.harness import REPO, NodeProc, child_env, read_json_line, stop_process, wait_until
from app.services.outbound import outbound_ssl_context
from app.services.rented import link as rented_link
from app.simulator.ca import client_ssl_context
from bench import wan_net
from bench.aiohttp_floor import FloorRelay
from bench.load import Sample, chat_body, request
from bench.stats import latency_summary, ms, percentile

MODEL = "tiny:latest"
SHORT_MODEL = "tiny-short:latest"  # served by the endpoint that closes idle connections after 1 s
SERVER_IDLE_S = 1.0


@dataclass(frozen=True)
class WanSettings:
    warm_requests: int
    idle_samples: int
    burst: int
    keepalive_s: float | None  # the node's keep-alive for this run; None: its own (rented/link.py)
    short_idle_s: float  # a pause shorter than the keep-alive (full run: longer than aiohttp's default 15 s)


SMOKE = WanSettings(warm_requests=4, idle_samples=2, burst=4, keepalive_s=2.0, short_idle_s=0.5)
QUICK = WanSettings(warm_requests=100, idle_samples=8, burst=16, keepalive_s=4.0, short_idle_s=2.0)
FULL = WanSettings(warm_requests=300, idle_samples=6, burst=64, keepalive_s=None, short_idle_s=30.0)


def log(message: str) -> None:
    print(f"[bench.wan {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


class WanServer:
    """bench.wan_server inside the link's namespace."""

    def __init__(self, stack: ExitStack, prefix: list[str], host: str, tls_dir: Path, *extra: str) -> None:
        self.proc = subprocess.Popen(
            [*prefix, sys.executable, "-m", "bench.wan_server", "--host", host, "--tls-dir", str(tls_dir), *extra],
            stdout=subprocess.PIPE, text=True, env=child_env(), cwd=REPO)
        stack.callback(self.stop)  # before waiting for it: an interrupted start still stops it
        ready = read_json_line(self.proc)
        self.url = str(ready["url"])
        self.ca_file = str(ready["ca_file"])
        self.ssl = client_ssl_context(Path(self.ca_file))  # the bench's own calls
        # The direct side trusts what the node trusts (the system store and this CA), so both verify alike.
        self.node_trust = outbound_ssl_context((self.ca_file,))
        self._mine = 0  # handshakes of the bench's own calls here (a new connection each), counted out

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        self._mine += 1
        with httpx.Client(verify=self.ssl, timeout=10, trust_env=False) as client:
            answer = client.request(method, f"{self.url}{path}", json=body)
            answer.raise_for_status()
            return answer.json()

    def stats(self) -> dict[str, int]:
        """TLS handshakes the server took from anyone but these calls; open connections that carried inference."""
        found = self._call("GET", "/_wan/stats")
        return {"handshakes": int(found["handshakes"]) - self._mine, "inference_open": int(found["inference_open"])}

    def handshakes(self) -> int:
        return self.stats()["handshakes"]

    def requests(self) -> int:
        """Requests the tiny model counted (probes and inference alike)."""
        return int(self._call("GET", "/_tiny/stats")["requests"])

    def config(self, **options: Any) -> None:
        self._call("POST", "/_tiny/config", options)

    def stop(self) -> None:
        stop_process(self.proc, wait_s=5)


def session(base_url: str, keepalive_s: float, tls: ssl.SSLContext | None = None) -> aiohttp.ClientSession:
    """The client of both sides: aiohttp, as the node's data plane, with the node's keep-alive."""
    connector = aiohttp.TCPConnector(limit=0, keepalive_timeout=keepalive_s, ssl=tls if tls is not None else True)
    return aiohttp.ClientSession(base_url=base_url, connector=connector, auto_decompress=False,
                                 timeout=aiohttp.ClientTimeout(total=120))


def _summary(samples: list[Sample], *, each: bool = False) -> dict[str, Any]:
    found = latency_summary(samples)
    ok = [s.ttfb_s for s in samples if s.ok]
    if each and ok:  # few samples: keep every one, and the true median (the nearest rank of two is the higher)
        found["ttfb_ms"] = [ms(s.ttfb_s) if s.ok else None for s in samples]
        found["p50_ms"] = ms(statistics.median(ok))
    return found


def _added(node: dict[str, Any], direct: dict[str, Any], key: str) -> float | None:
    if node.get(key) is None or direct.get(key) is None:
        return None
    return round(node[key] - direct[key], 3)


async def _round(sides: dict[str, aiohttp.ClientSession], body: dict[str, Any], turn: int) -> dict[str, Sample]:
    """One request per side, the order rotated each turn, so drifting load hits every side alike."""
    names = list(sides)
    first = turn % len(names)
    return {name: await request(sides[name], body) for name in names[first:] + names[:first]}


async def warm_and_idle(server: WanServer, node: NodeProc, settings: WanSettings, keepalive_s: float,
                        floor_url: str) -> dict[str, Any]:
    body = chat_body(MODEL, stream=True, max_tokens=8)
    out: dict[str, Any] = {}
    async with session(server.url, keepalive_s, server.node_trust) as direct, session(node.url, keepalive_s) as via, \
            session(node.url, 3600.0) as steady, session(floor_url, keepalive_s) as floor, \
            session(server.url, keepalive_s, server.node_trust) as waker:
        sides = {"direct": direct, "pairwise": via, "floor": floor}
        await _round(sides, body, 0)  # every pool warm
        await request(steady, body)
        warm: dict[str, list[Sample]] = {name: [] for name in sides}
        for turn in range(settings.warm_requests):
            for name, sample in (await _round(sides, body, turn)).items():
                warm[name].append(sample)
        out["warm"] = {name: _summary(found) for name, found in warm.items()}
        out["warm"]["added_p50_ms"] = _added(out["warm"]["pairwise"], out["warm"]["direct"], "p50_ms")
        out["warm"]["added_p99_ms"] = _added(out["warm"]["pairwise"], out["warm"]["direct"], "p99_ms")
        out["warm"]["floor_added_p50_ms"] = _added(out["warm"]["floor"], out["warm"]["direct"], "p50_ms")

        for row, pause in (("after_idle_longer", keepalive_s + 1.5), ("after_idle_shorter", settings.short_idle_s)):
            found: dict[str, list[Sample]] = {"direct": [], "pairwise": [], "pairwise_pool_only": [], "floor": []}
            idle_handshakes = 0
            for turn in range(settings.idle_samples):
                # Past the keep-alive, every other sample keeps the caller's own connection to the node
                # (one that never idles out): then only the node's pool to the endpoint has gone cold.
                pool_only = row == "after_idle_longer" and turn % 2 == 1
                before = server.handshakes()
                await asyncio.sleep(pause)
                idle_handshakes += server.handshakes() - before  # the node's probes, while nothing else runs
                # The first request after a pause, on any connection, waits on the link's relay and the
                # endpoint waking (20-56 ms here, whichever side went first); a request of its own takes
                # that, so the measured sides see only their own connections' and pools' idleness.
                await request(waker, body)
                node_side = "pairwise_pool_only" if pool_only else "pairwise"
                sides = {"direct": direct, node_side: steady if pool_only else via, "floor": floor}
                for name, sample in (await _round(sides, body, turn // 2)).items():
                    found[name].append(sample)
            summary: dict[str, Any] = {name: _summary(s, each=True) for name, s in found.items() if s}
            summary["idle_s"] = pause
            summary["added_p50_ms"] = _added(summary["pairwise"], summary["direct"], "p50_ms")
            summary["floor_added_p50_ms"] = _added(summary["floor"], summary["direct"], "p50_ms")
            if "pairwise_pool_only" in summary:
                summary["added_pool_only_p50_ms"] = _added(summary["pairwise_pool_only"], summary["direct"], "p50_ms")
            summary["handshakes_while_idle"] = idle_handshakes
            out[row] = summary
    return out


async def server_closes_first(node: NodeProc, settings: WanSettings, short: WanServer) -> dict[str, Any]:
    """The endpoint drops idle connections after 1 s; the node keeps its own longer. Its next request
    must see the endpoint's close and connect anew, never fail on the dead connection."""
    body = chat_body(SHORT_MODEL, stream=True, max_tokens=8)
    samples: list[Sample] = []
    async with session(node.url, 600.0) as via:
        await request(via, body)
        for _ in range(max(2, settings.idle_samples)):
            await asyncio.sleep(SERVER_IDLE_S + 0.5)
            samples.append(await request(via, body))
    return {"server_idle_s": SERVER_IDLE_S, **_summary(samples)}


async def _burst(client: aiohttp.ClientSession, body: dict[str, Any], n: int) -> list[Sample]:
    return list(await asyncio.gather(*(request(client, body) for _ in range(n))))


async def bursts(server: WanServer, node: NodeProc, settings: WanSettings, keepalive_s: float) -> dict[str, Any]:
    """N concurrent streams (long enough to overlap), twice per side: handshakes and time to first byte."""
    server.config(tokens_per_s=20.0)
    body = chat_body(MODEL, stream=True, max_tokens=10)  # half a second each
    out: dict[str, Any] = {"streams": settings.burst}
    try:
        async with session(server.url, keepalive_s, server.node_trust) as direct, session(node.url, keepalive_s) as via:
            for round_ in (1, 2):
                for name, client in (("direct", direct), ("pairwise", via)):
                    before = server.handshakes()
                    samples = await _burst(client, body, settings.burst)
                    opened = server.handshakes() - before
                    ok = [s.ttfb_s for s in samples if s.ok]
                    out[f"{name}_{round_}"] = {
                        "handshakes": opened, "handshakes_per_stream": round(opened / settings.burst, 3),
                        "errors": len(samples) - len(ok),
                        "first_error": next((s.error for s in samples if not s.ok), None),
                        "p50_ttfb_ms": ms(percentile(ok, 50)) if ok else None,
                        "p99_ttfb_ms": ms(percentile(ok, 99)) if ok else None,
                    }
    finally:
        server.config(tokens_per_s=0.0)
    out["pairwise_handshakes_per_stream"] = max(out["pairwise_1"]["handshakes_per_stream"],
                                                out["pairwise_2"]["handshakes_per_stream"])
    return out


def attach(node: NodeProc, name: str, server: WanServer, model: str) -> None:
    node.cli("rented", "attach", name, "--url", server.url, "--ca-file", server.ca_file, "--model", model)
    wait_until(lambda: model in node.models(), 60, f"the node to list {model} from its rented node", interval=0.1)


def rtt_ms(server: WanServer) -> float:
    """The link's round trip as a new TCP connection sees it (the median of five connects)."""
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(server.url)
    took = []
    for _ in range(5):
        began = time.perf_counter()
        with socket.create_connection((parts.hostname, parts.port), timeout=10):
            took.append(time.perf_counter() - began)
    return ms(sorted(took)[2])


def measure(settings: WanSettings, work: Path) -> dict[str, Any]:
    reason = wan_net.can_build()
    if reason is not None:
        return {"skipped": reason}
    keepalive_s = settings.keepalive_s or rented_link.KEEPALIVE_S
    raw: dict[str, Any] = {"loadavg_at_start": os.getloadavg(), "node_keepalive_s": keepalive_s,
                           "node_keepalive_is_default": settings.keepalive_s is None,
                           "node_pool_limit": rented_link.POOL_LIMIT, "probe_keepalive_s": rented_link.PROBE_KEEPALIVE_S}
    with ExitStack() as stack:
        link = stack.enter_context(wan_net.WanLink())
        raw["link"] = {"how": link.how, "namespace": link.ns, "near": link.near, "far": link.far}
        log(f"link up ({link.how}); {link.near} -> {link.far}")
        server = WanServer(stack, link.exec_args(), link.far, work / "tls")
        short = WanServer(stack, link.exec_args(), link.far, work / "tls-short", "--model", SHORT_MODEL,
                          "--keepalive-s", str(SERVER_IDLE_S))
        raw["link"]["tcp_connect_ms"] = rtt_ms(server)
        # The run's own spend account: the bench's nodes never write the user's (shared by every home).
        env = {"PAIRWISE_SPEND_DIR": str(work / "spend")}
        if settings.keepalive_s is not None:
            env["PAIRWISE_RENTED_KEEPALIVE_S"] = str(settings.keepalive_s)
        node = NodeProc(work / "node", "bench-wan", env=env)
        stack.callback(node.stop)
        node.start(wait_answer=True)
        floor = FloorRelay(server.url, work / "floor.log", server.ca_file, keepalive_s).start()
        stack.callback(floor.stop)
        attach(node, "far", server, MODEL)
        attach(node, "far-short", short, SHORT_MODEL)
        log(f"warm and after-idle requests (node keep-alive {keepalive_s:g} s)")
        raw.update(asyncio.run(warm_and_idle(server, node, settings, keepalive_s, floor.url)))
        log("the endpoint closes first")
        raw["server_closes_first"] = asyncio.run(server_closes_first(node, settings, short))
        log(f"bursts of {settings.burst} concurrent streams")
        raw["bursts"] = asyncio.run(bursts(server, node, settings, keepalive_s))
        raw["loadavg_at_end"] = os.getloadavg()
    raw["namespace_removed"] = not link.exists()
    return raw


def table(raw: dict[str, Any]) -> str:
    if "skipped" in raw:
        return f"rented link at 40 ms RTT: skipped ({raw['skipped']})"
    lines = [f"rented link at 40 ms RTT ({raw['link']['how']}; TCP connect {raw['link']['tcp_connect_ms']} ms; "
             f"node keep-alive {raw['node_keepalive_s']:g} s)",
             f"  {'':44} {'direct':>9} {'Pairwise':>9} {'added':>8}"]
    for row, what, side in (("warm", "warm, TTFB p50 (ms)", "pairwise"),
                            ("after_idle_longer", "after idle > keep-alive, p50 (ms)", "pairwise"),
                            ("after_idle_longer", "  the caller's connection to the node kept", "pairwise_pool_only"),
                            ("after_idle_shorter", "after idle < keep-alive, p50 (ms)", "pairwise")):
        if side in raw[row]:
            d, n = raw[row]["direct"]["p50_ms"], raw[row][side]["p50_ms"]
            lines.append(f"  {what:44} {d:>9} {n:>9} {_added(raw[row][side], raw[row]['direct'], 'p50_ms'):>8}")
    w = raw["warm"]
    lines.append(f"  {'warm, TTFB p99 (ms)':44} {w['direct']['p99_ms']:>9} {w['pairwise']['p99_ms']:>9} "
                 f"{w['added_p99_ms']:>8}")
    for row, what in (("warm", "warm"), ("after_idle_longer", "after idle > keep-alive"),
                      ("after_idle_shorter", "after idle < keep-alive")):
        if "floor" in raw[row]:
            what = f"{what}, p50 through the aiohttp floor (ms)"
            lines.append(f"  {what:44} {raw[row]['direct']['p50_ms']:>9} {raw[row]['floor']['p50_ms']:>9} "
                         f"{raw[row]['floor_added_p50_ms']:>8}")
    b = raw["bursts"]
    for round_ in (1, 2):
        d, n = b[f"direct_{round_}"], b[f"pairwise_{round_}"]
        what = f"burst {round_} of {b['streams']} streams: TLS handshakes"
        lines.append(f"  {what:44} {d['handshakes']:>9} {n['handshakes']:>9}")
        what = f"burst {round_}: TTFB p99 (ms)"
        lines.append(f"  {what:44} {d['p99_ttfb_ms']:>9} {n['p99_ttfb_ms']:>9}")
    s = raw["server_closes_first"]
    lines.append(f"  endpoint closes idle after {s['server_idle_s']:g} s: {s['n']} requests, {s['errors']} errors, "
                 f"p50 {s['p50_ms']} ms")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.wan", description=__doc__)
    parser.add_argument("--smoke", action="store_true", help="tiny counts, seconds (the smoke test)")
    parser.add_argument("--quick", action="store_true", help="fewer requests, a short keep-alive")
    parser.add_argument("--out", type=Path, help="write the raw figures here as JSON")
    args = parser.parse_args(argv)
    settings = SMOKE if args.smoke else QUICK if args.quick else FULL
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # unwind: the namespace comes down on the way out
    work = Path(tempfile.mkdtemp(prefix="pairwise-wan-"))
    try:
        raw = measure(settings, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(raw, indent=2) + "\n")
    print(table(raw))
    return 0


if __name__ == "__main__":
    sys.exit(main())
