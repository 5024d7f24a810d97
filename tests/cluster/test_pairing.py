"""PIN pairing over real sockets on 127.0.0.1."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import pytest

from app.services.cluster.pairing import InviteState, PairingHost, join
from app.services.cluster.pairing_protocol import (
    AlreadyMember,
    InvalidPin,
    PairingError,
    PairingProtocolError,
    PairingUnavailable,
    PinAlreadyUsed,
    PinExpired,
    PinVoid,
    WrongPin,
    resolve_address,
)
from app.services.cluster.trust import PeerPin
from tests.cluster.conftest import Node

HostFactory = Callable[..., PairingHost]


@pytest.fixture
async def host_for() -> AsyncIterator[HostFactory]:
    hosts: list[PairingHost] = []

    def make(node: Node, **kwargs: object) -> PairingHost:
        kwargs.setdefault("cluster_address", "127.0.0.1:14330")
        host = PairingHost(node.identity, node.trust, host="127.0.0.1", port=0, **kwargs)  # type: ignore[arg-type]
        hosts.append(host)
        return host

    yield make
    for host in hosts:
        await host.aclose()


def port_of(address: str) -> int:
    return int(address.rsplit(":", 1)[1])


def wrong(pin: str) -> str:
    return f"{(int(pin) + 1) % 10**6:06d}"


async def test_pairing_pins_both_sides(make_node: Callable[[str], Node], host_for: HostFactory) -> None:
    a, b = make_node("inviter"), make_node("joiner")
    heard: list[PeerPin] = []
    host = host_for(a, on_paired=heard.append, cluster_address="0.0.0.0:14330")
    invite = await host.invite()
    assert len(invite.pin) == 6 and invite.pin.isdigit()
    assert invite.address.startswith("127.0.0.1:")

    got = await join("127.0.0.1", port_of(invite.address), invite.pin, b.identity, b.trust, "127.0.0.1:24330")
    pinned_b = await host.wait_for_join(5)

    assert got.node_id == a.identity.node_id and got.fingerprint == a.identity.fingerprint
    assert got.cert_pem == a.identity.cert_pem and got.name == "inviter"
    # The inviter listens on all interfaces: the joiner fills in the host it dialled.
    assert got.address == "127.0.0.1:14330"
    assert pinned_b.node_id == b.identity.node_id and pinned_b.fingerprint == b.identity.fingerprint
    assert pinned_b.address == "127.0.0.1:24330"
    assert a.trust.get(b.identity.node_id) == pinned_b and b.trust.get(a.identity.node_id) == got
    assert heard == [pinned_b]
    assert not host.pending
    # The listener is closed once the invite is used.
    with pytest.raises(PairingUnavailable):
        await join("127.0.0.1", port_of(invite.address), invite.pin, b.identity, b.trust, "x:1")


async def test_wrong_pin_then_right_pin(make_node: Callable[[str], Node], host_for: HostFactory) -> None:
    a, b = make_node("a"), make_node("b")
    host = host_for(a)
    invite = await host.invite()
    port = port_of(invite.address)
    with pytest.raises(WrongPin, match=r"wrong PIN \(2 tries left\)"):
        await join("127.0.0.1", port, wrong(invite.pin), b.identity, b.trust, "127.0.0.1:1")
    assert host.pending and host.wrong_tries == 1
    assert len(a.trust) == 0 and len(b.trust) == 0
    await join("127.0.0.1", port, f"{invite.pin[:3]} {invite.pin[3:]}", b.identity, b.trust, "127.0.0.1:1")
    assert (await host.wait_for_join(5)).node_id == b.identity.node_id


async def test_too_many_wrong_tries_voids_the_pin(
    make_node: Callable[[str], Node], host_for: HostFactory
) -> None:
    a, b = make_node("a"), make_node("b")
    host = host_for(a)
    invite = await host.invite(max_wrong=3)
    port = port_of(invite.address)
    for _ in range(2):
        with pytest.raises(WrongPin):
            await join("127.0.0.1", port, wrong(invite.pin), b.identity, b.trust, "127.0.0.1:1")
    with pytest.raises(PinVoid, match="too many wrong tries; the PIN is void"):
        await join("127.0.0.1", port, wrong(invite.pin), b.identity, b.trust, "127.0.0.1:1")
    with pytest.raises(PinVoid):
        await host.wait_for_join(5)
    # Void means void: even the right PIN finds no listener now.
    with pytest.raises(PairingUnavailable):
        await join("127.0.0.1", port, invite.pin, b.identity, b.trust, "127.0.0.1:1")
    assert len(a.trust) == 0 and len(b.trust) == 0


async def test_expired_invite_closes_its_listener(
    make_node: Callable[[str], Node], host_for: HostFactory
) -> None:
    a, b = make_node("a"), make_node("b")
    host = host_for(a)
    invite = await host.invite(ttl_s=0.2)
    with pytest.raises(PinExpired, match="PIN expired"):
        await host.wait_for_join(5)
    with pytest.raises(PairingUnavailable):
        await join("127.0.0.1", port_of(invite.address), invite.pin, b.identity, b.trust, "127.0.0.1:1")


async def test_expired_pin_reported_to_the_joiner(
    make_node: Callable[[str], Node], host_for: HostFactory
) -> None:
    a, b = make_node("a"), make_node("b")
    now = [1000.0]
    host = host_for(a, clock=lambda: now[0])
    invite = await host.invite(ttl_s=300)
    now[0] += 301  # the host's clock says the invite is over; its timer has not fired yet
    with pytest.raises(PinExpired, match="PIN expired"):
        await join("127.0.0.1", port_of(invite.address), invite.pin, b.identity, b.trust, "127.0.0.1:1")
    with pytest.raises(PinExpired):
        await host.wait_for_join(5)
    assert len(b.trust) == 0


async def test_pin_used_once(make_node: Callable[[str], Node], host_for: HostFactory) -> None:
    a, b, c = make_node("a"), make_node("b"), make_node("c")
    host = host_for(a)
    invite = await host.invite()
    port = port_of(invite.address)
    # Two nodes race with the right PIN: exactly one wins, the other is told the PIN is spent.
    results = await asyncio.gather(
        join("127.0.0.1", port, invite.pin, b.identity, b.trust, "127.0.0.1:1"),
        join("127.0.0.1", port, invite.pin, c.identity, c.trust, "127.0.0.1:2"),
        return_exceptions=True,
    )
    winners = [r for r in results if isinstance(r, PeerPin)]
    losers = [r for r in results if isinstance(r, BaseException)]
    assert len(winners) == 1 and len(losers) == 1, results
    assert isinstance(losers[0], PinAlreadyUsed) and losers[0].message == "PIN already used"
    assert len(a.trust) == 1 and len(b.trust) + len(c.trust) == 1
    assert (await host.wait_for_join(5)).node_id in (b.identity.node_id, c.identity.node_id)


async def test_already_a_member(make_node: Callable[[str], Node], host_for: HostFactory) -> None:
    a, b = make_node("a"), make_node("b")
    host = host_for(a)
    invite = await host.invite()
    await join("127.0.0.1", port_of(invite.address), invite.pin, b.identity, b.trust, "127.0.0.1:1")
    await host.wait_for_join(5)
    invite = await host.invite()
    with pytest.raises(AlreadyMember, match="this node is already a member"):
        await join("127.0.0.1", port_of(invite.address), invite.pin, b.identity, b.trust, "127.0.0.1:1")
    assert host.pending  # a member knocking again does not spend the invite
    assert len(a.trust) == 1


async def test_pin_format_and_self_pairing(make_node: Callable[[str], Node], host_for: HostFactory) -> None:
    a = make_node("a")
    with pytest.raises(InvalidPin, match="six digits"):
        await join("127.0.0.1", 1, "12345", a.identity, a.trust, "x:1")
    host = host_for(a)
    invite = await host.invite()
    with pytest.raises(PairingProtocolError, match="itself"):
        await join("127.0.0.1", port_of(invite.address), invite.pin, a.identity, a.trust, "x:1")
    assert host.pending and host.wrong_tries == 0


async def test_new_invite_replaces_and_cancel_closes(
    make_node: Callable[[str], Node], host_for: HostFactory
) -> None:
    a, b = make_node("a"), make_node("b")
    host = host_for(a)
    first = await host.invite()
    waiter = asyncio.ensure_future(host.wait_for_join(5))
    second = await host.invite()
    with pytest.raises(PairingUnavailable):
        await waiter
    with pytest.raises(PairingUnavailable):
        await join("127.0.0.1", port_of(first.address), first.pin, b.identity, b.trust, "x:1")
    await host.cancel()
    with pytest.raises(PairingUnavailable, match="cancelled"):
        await host.wait_for_join(5)
    with pytest.raises(PairingUnavailable):
        await join("127.0.0.1", port_of(second.address), second.pin, b.identity, b.trust, "x:1")


async def test_silent_client_does_not_hold_the_invite(
    make_node: Callable[[str], Node], host_for: HostFactory
) -> None:
    a, b = make_node("a"), make_node("b")
    host = host_for(a, session_timeout_s=0.3)
    invite = await host.invite()
    reader, writer = await asyncio.open_connection("127.0.0.1", port_of(invite.address))
    assert await reader.read() != b""  # hello, then the host gives up on us and closes
    writer.close()
    await join("127.0.0.1", port_of(invite.address), invite.pin, b.identity, b.trust, "127.0.0.1:1")
    assert (await host.wait_for_join(5)).node_id == b.identity.node_id


def test_resolve_address() -> None:
    assert resolve_address("0.0.0.0:14330", "192.168.1.5") == "192.168.1.5:14330"
    assert resolve_address(":14330", "fe80::1") == "[fe80::1]:14330"
    assert resolve_address("[::]:14330", "10.0.0.2") == "10.0.0.2:14330"
    assert resolve_address("nas.local:14330", "10.0.0.2") == "nas.local:14330"
    assert resolve_address(None, "10.0.0.2") is None


def test_error_messages() -> None:
    assert str(WrongPin()) == "wrong PIN"
    assert PinVoid().message == "too many wrong tries; the PIN is void"
    assert PinExpired().title == "PIN expired"
    assert issubclass(PinAlreadyUsed, PairingError) and issubclass(AlreadyMember, PairingError)
    assert InviteState.USED.value == "used"
