"""A stranger cannot jam pairing (issue 14, rows 3 and 4), over real sockets on 127.0.0.1.

Idle connections used to take every session slot for the whole invite; now a session must say
hello within the hello timeout, one address holds at most two sessions, and a connection over
the limit is told "busy" (which the joiner names, and retries while it has time)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from app.harness import REPO, NodeProc, stop_process, wait_until
from app.services.cluster.pairing import PairingHost, join
from app.services.cluster.pairing_protocol import PairingBusy, PinVoid, WrongPin
from tests.cluster.conftest import Node

HostFactory = Callable[..., PairingHost]


@pytest.fixture
async def host_for() -> AsyncIterator[HostFactory]:
    hosts: list[PairingHost] = []

    def make(node: Node, hello_timeout_s: float = 3.0) -> PairingHost:
        host = PairingHost(node.identity, node.trust, host="127.0.0.1", port=0, cluster_address="127.0.0.1:14330",
                           hello_timeout_s=hello_timeout_s)
        hosts.append(host)
        return host

    yield make
    for host in hosts:
        await host.aclose()


@contextmanager
def idle_connections(port: int, count: int, source: str) -> Iterator[list[socket.socket]]:
    held: list[socket.socket] = []
    try:
        for _ in range(count):
            sock = socket.socket()
            sock.bind((source, 0))
            sock.connect(("127.0.0.1", port))
            held.append(sock)
        yield held
    finally:
        for sock in held:
            sock.close()


def port_of(address: str) -> int:
    return int(address.rsplit(":", 1)[1])


async def test_idle_connections_from_another_address_do_not_stop_the_joiner(
        make_node: Callable[[str], Node], host_for: HostFactory) -> None:
    a, b = make_node("inviter"), make_node("joiner")
    host = host_for(a, hello_timeout_s=60.0)  # the stranger's sessions never time out during the test
    invite = await host.invite()
    with idle_connections(port_of(invite.address), 10, "127.0.0.2"):
        got = await join("127.0.0.1", port_of(invite.address), invite.pin, b.identity, b.trust, "127.0.0.1:1",
                         timeout_s=20)
    assert got.node_id == a.identity.node_id
    assert (await host.wait_for_join(5)).node_id == b.identity.node_id


async def test_jammed_from_the_joiners_own_address_the_joiner_is_told_busy(
        make_node: Callable[[str], Node], host_for: HostFactory) -> None:
    a, b = make_node("inviter"), make_node("joiner")
    host = host_for(a, hello_timeout_s=60.0)
    invite = await host.invite()
    port = port_of(invite.address)
    with idle_connections(port, 10, "127.0.0.1"):
        with pytest.raises(PairingBusy, match="busy with other pairing attempts") as refused:
            await join("127.0.0.1", port, invite.pin, b.identity, b.trust, "127.0.0.1:1", timeout_s=2)
    # It says what to do (issue 26): join again, else a fresh invite, else a network only the two share.
    said = refused.value.message
    assert f"pairwise pair join 127.0.0.1:{port} --pin PIN" in said
    assert "'pairwise pair cancel' then 'pairwise pair invite'" in said and "still good" in said
    assert host.pending and host.wrong_tries == 0  # the PIN was never tried: still good


async def test_idle_sessions_end_at_the_hello_timeout_and_the_joiner_gets_in(
        make_node: Callable[[str], Node], host_for: HostFactory) -> None:
    a, b = make_node("inviter"), make_node("joiner")
    host = host_for(a, hello_timeout_s=1.0)
    invite = await host.invite()
    port = port_of(invite.address)
    with idle_connections(port, 10, "127.0.0.1"):
        # Busy at first; the joiner retries and pairs once the idle sessions are dropped.
        got = await join("127.0.0.1", port, invite.pin, b.identity, b.trust, "127.0.0.1:1", timeout_s=30)
    assert got.node_id == a.identity.node_id


async def test_the_inviter_learns_which_address_voided_the_invite(
        make_node: Callable[[str], Node], host_for: HostFactory) -> None:
    a, b = make_node("inviter"), make_node("stranger")
    host = host_for(a)
    invite = await host.invite()
    wrong = f"{(int(invite.pin) + 1) % 10**6:06d}"
    for _ in range(2):
        with pytest.raises(WrongPin):
            await join("127.0.0.1", port_of(invite.address), wrong, b.identity, b.trust, "127.0.0.1:1")
    with pytest.raises(PinVoid) as joiner_error:
        await join("127.0.0.1", port_of(invite.address), wrong, b.identity, b.trust, "127.0.0.1:1")
    assert "127.0.0.1" not in joiner_error.value.message  # the guesser learns nothing about the others
    with pytest.raises(PinVoid, match=r"voided by 3 wrong PINs from 127\.0\.0\.1; start another"):
        await host.wait_for_join(5)
    assert host.wrong_from == ["127.0.0.1"]


def test_cli_and_events_show_the_void_and_where_from(node_factory: type[NodeProc]) -> None:
    inviter = node_factory("inviter").start()
    stranger = node_factory("stranger").start()
    events = subprocess.Popen([sys.executable, "-m", "app", "--home", str(inviter.home), "events"],
                              stdout=subprocess.PIPE, text=True, env=inviter.env, cwd=REPO)
    seen: list[dict[str, Any]] = []

    def read() -> None:
        assert events.stdout is not None
        for raw in events.stdout:
            seen.append(json.loads(raw))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        made = inviter.cli_json("pair", "invite")
        wrong = f"{(int(made['pin']) + 1) % 10**6:06d}"
        for _ in range(3):
            result = stranger.cli("pair", "join", made["address"], "--pin", wrong, check=False)
            assert result.returncode != 0
        line = wait_until(lambda: "void" in (s := inviter.cli("pair", "status").stdout) and s, timeout=30,
                          what="the invite to be void")
        assert "voided by wrong PINs from 127.0.0.1" in line and "pairwise pair invite" in line
        ended = wait_until(lambda: [e for e in seen if e.get("kind") == "pair_invite_voided"], timeout=30,
                           what="the pair_invite_voided event")
        assert ended[0]["state"] == "void" and ended[0]["voided_by"] == ["127.0.0.1"]
    finally:
        stop_process(events)
