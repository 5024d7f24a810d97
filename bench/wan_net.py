"""A far link for the bench: a network namespace 20 ms away each way (40 ms round trip).

``WanLink`` builds, as root, a namespace ``pairwise-wan-<pid>`` joined to this one by a point-to-point
link on a private /30 it chooses in 10.213.0.0/16 (never an address in use here), and takes it all
down again when closed, on failure or on Ctrl-C alike. The delay is the kernel's ``netem`` qdisc on a
veth pair where the kernel has it (``tc qdisc add dev … root netem delay 20ms``, each end). A kernel
built without ``sch_netem`` (this bench's 2-core VM: ``CONFIG_NET_SCH_NETEM`` is not set, and it has
no loadable modules) gets the same link from user space instead: two TUN devices, one in each
namespace, and a small process (``python -m bench.wan_net link``) that holds every packet 20 ms
before writing it to the other side, in order. Either way every packet (SYN, TLS records, data)
takes the delay, so a new connection costs its round trips as on a real WAN.

Namespaces left by a bench that was killed (``pairwise-wan-<pid>`` whose pid is gone) are removed
at the next start; nothing else is touched.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import fcntl
import ipaddress
import json
import os
import signal
import struct
import subprocess
import sys
from pathlib import Path

from app.harness import REPO, child_env, read_json_line, stop_process

PREFIX = "pairwise-wan-"
LINK_PREFIX = "pwwan"
POOL = ipaddress.IPv4Network("10.213.0.0/16")
ONE_WAY_MS = 20.0
TUNSETIFF = 0x400454CA
IFF_TUN, IFF_NO_PI = 0x0001, 0x1000


def ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check)


def can_build() -> str | None:
    """Why this machine cannot build the link (None: it can)."""
    if os.geteuid() != 0:
        return "not root: a network namespace needs root (run bench/run as root for the rented-link row)"
    for tool in ("ip", "tc"):
        if subprocess.run(["which", tool], capture_output=True).returncode != 0:
            return f"no '{tool}' (iproute2: apt-get install iproute2)"
    return None


def sweep_stale() -> list[str]:
    """Remove namespaces and link ends of earlier benches whose process is gone."""
    removed = []
    for line in ip("netns", "list", check=False).stdout.splitlines():
        name = line.split()[0] if line.strip() else ""
        pid = name.removeprefix(PREFIX)
        if name.startswith(PREFIX) and pid.isdigit() and not Path(f"/proc/{pid}").exists():
            ip("netns", "del", name, check=False)
            removed.append(name)
    for line in ip("-br", "link", check=False).stdout.splitlines():
        dev = line.split()[0].split("@")[0] if line.strip() else ""
        tag = dev.removeprefix(LINK_PREFIX)[:-1]
        if dev.startswith(LINK_PREFIX) and tag.isdigit() and not Path(f"/proc/{tag}").exists():
            ip("link", "del", dev, check=False)
            removed.append(dev)
    return removed


def free_subnet() -> ipaddress.IPv4Network:
    """A /30 of 10.213.0.0/16 that no address or route of this namespace overlaps."""
    used: list[ipaddress.IPv4Network] = []
    for line in ip("-4", "-o", "addr").stdout.splitlines() + ip("-4", "route").stdout.splitlines():
        for word in line.split():
            with contextlib.suppress(ValueError):
                if "/" in word or word[:1].isdigit():
                    used.append(ipaddress.IPv4Network(word, strict=False))
    nets = list(POOL.subnets(new_prefix=30))
    start = os.getpid() % len(nets)
    for i in range(len(nets)):
        net = nets[(start + i) % len(nets)]
        if not any(net.overlaps(u) for u in used if u.prefixlen > 0):
            return net
    raise RuntimeError("no free /30 in 10.213.0.0/16")


class WanLink:
    """The namespace and its link. ``near``: this side's address; ``far``: the namespace's."""

    def __init__(self, one_way_ms: float = ONE_WAY_MS) -> None:
        self.one_way_ms = one_way_ms
        self.ns = f"{PREFIX}{os.getpid()}"
        tag = str(os.getpid())[-7:]
        self.dev_near, self.dev_far = f"{LINK_PREFIX}{tag}a", f"{LINK_PREFIX}{tag}b"
        net = free_subnet()
        hosts = list(net.hosts())
        self.near, self.far = str(hosts[0]), str(hosts[1])
        self.prefix = net.prefixlen
        self.how = ""
        self._relay: subprocess.Popen[str] | None = None
        self._veth = False

    def __enter__(self) -> WanLink:
        try:
            self.build()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def build(self) -> None:
        sweep_stale()
        ip("netns", "add", self.ns)
        ip("-n", self.ns, "link", "set", "lo", "up")
        if not self._try_netem():
            self._start_relay()
        sides: list[tuple[tuple[str, ...], str, str, str]] = [
            ((), self.dev_near, self.near, self.far), (("-n", self.ns), self.dev_far, self.far, self.near)]
        for where, dev, mine, peer in sides:
            if self._veth:
                ip(*where, "addr", "add", f"{mine}/{self.prefix}", "dev", dev)
            else:
                ip(*where, "addr", "add", mine, "peer", peer, "dev", dev)
            ip(*where, "link", "set", dev, "up")

    def _try_netem(self) -> bool:
        ip("link", "add", self.dev_near, "type", "veth", "peer", "name", self.dev_far)
        self._veth = True
        ip("link", "set", self.dev_far, "netns", self.ns)
        delay = f"{self.one_way_ms:g}ms"
        near = subprocess.run(["tc", "qdisc", "add", "dev", self.dev_near, "root", "netem", "delay", delay],
                              capture_output=True, text=True)
        far = near.returncode == 0 and subprocess.run(
            ["ip", "netns", "exec", self.ns, "tc", "qdisc", "add", "dev", self.dev_far, "root", "netem", "delay",
             delay], capture_output=True, text=True).returncode == 0
        if far:
            self.how = f"veth + tc netem delay {delay} each way"
            return True
        ip("link", "del", self.dev_near, check=False)  # takes its peer in the namespace with it
        self._veth = False
        return False

    def _start_relay(self) -> None:
        self._relay = subprocess.Popen(
            [sys.executable, "-m", "bench.wan_net", "link", "--ns", self.ns, "--near", self.dev_near,
             "--far", self.dev_far, "--one-way-ms", str(self.one_way_ms)],
            stdout=subprocess.PIPE, text=True, env=child_env(), cwd=REPO)
        read_json_line(self._relay)
        self.how = (f"TUN pair + a user-space relay holding each packet {self.one_way_ms:g} ms each way "
                    "(this kernel has no sch_netem)")

    def exec_args(self) -> list[str]:
        """The command prefix that runs a program inside the namespace."""
        return ["ip", "netns", "exec", self.ns]

    def close(self) -> None:
        stop_process(self._relay, wait_s=5)  # its TUN devices go with it
        self._relay = None
        # By name, whatever the flags say: an interrupt can land after `ip link add` made the pair but
        # before this process heard back (both ends are then still out here).
        ip("link", "del", self.dev_near, check=False)
        self._veth = False
        ip("netns", "del", self.ns, check=False)

    def exists(self) -> bool:
        return self.ns in ip("netns", "list", check=False).stdout.split()


# -- the user-space link (no sch_netem) ------------------------------------------------------------------------

def open_tun(name: str) -> int:
    fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", name.encode(), IFF_TUN | IFF_NO_PI))
    return fd


class _Direction:
    """Packets from one device, each written to the other once it is ``delay_s`` old, in order."""

    def __init__(self, loop: asyncio.AbstractEventLoop, src: int, dst: int, delay_s: float) -> None:
        self.loop, self.src, self.dst, self.delay_s = loop, src, dst, delay_s
        self.queue: collections.deque[tuple[float, bytes]] = collections.deque()
        self.timer: asyncio.TimerHandle | None = None
        loop.add_reader(src, self.arrived)

    def arrived(self) -> None:
        due = self.loop.time() + self.delay_s
        while True:
            try:
                self.queue.append((due, os.read(self.src, 65536)))
            except BlockingIOError:
                break
        if self.timer is None and self.queue:
            self.timer = self.loop.call_at(self.queue[0][0], self.send)

    def send(self) -> None:
        self.timer = None
        now = self.loop.time()
        while self.queue and self.queue[0][0] <= now + 0.0002:
            with contextlib.suppress(OSError):  # a full or not-yet-up device drops it, as a link would
                os.write(self.dst, self.queue.popleft()[1])
        if self.queue:
            self.timer = self.loop.call_at(self.queue[0][0], self.send)


async def relay(ns: str, near: str, far: str, one_way_ms: float) -> None:
    near_fd, far_fd = open_tun(near), open_tun(far)
    ip("link", "set", far, "netns", ns)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    _Direction(loop, near_fd, far_fd, one_way_ms / 1000)
    _Direction(loop, far_fd, near_fd, one_way_ms / 1000)
    print(json.dumps({"near": near, "far": far}), flush=True)
    await stop.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.wan_net", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    link = sub.add_parser("link", help="the user-space delay between two TUN devices (run by WanLink)")
    link.add_argument("--ns", required=True)
    link.add_argument("--near", required=True)
    link.add_argument("--far", required=True)
    link.add_argument("--one-way-ms", type=float, default=ONE_WAY_MS)
    args = parser.parse_args(argv)
    # The wire is not the machine's load: the relay keeps its timing ahead of the processes it carries.
    with contextlib.suppress(OSError):
        os.setpriority(os.PRIO_PROCESS, 0, -10)
    asyncio.run(relay(args.ns, args.near, args.far, args.one_way_ms))
    return 0


if __name__ == "__main__":
    sys.exit(main())
