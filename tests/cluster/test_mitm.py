"""A man in the middle between joiner and inviter, with and without substituted certificates."""

from __future__ import annotations

import asyncio
import contextlib
import json
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from spake2 import SPAKE2_B

from app.services.cluster.identity import NodeIdentity
from app.services.cluster.pairing import PairingHost, join
from app.services.cluster.pairing_protocol import (
    Hello,
    PairingProtocolError,
    Side,
    WrongPin,
    b64,
    confirmation,
    finish_spake,
    parse_spake,
    transcript,
    upgrade,
)
from tests.cluster.conftest import Node, forge_identity


async def read_raw(reader: asyncio.StreamReader) -> dict[str, Any]:
    (length,) = struct.unpack(">I", await reader.readexactly(4))
    frame: dict[str, Any] = json.loads(await reader.readexactly(length))
    return frame


async def write_raw(writer: asyncio.StreamWriter, frame: dict[str, Any]) -> None:
    data = json.dumps(frame).encode()
    writer.write(struct.pack(">I", len(data)) + data)
    await writer.drain()


async def pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, seen: list[str]) -> None:
    with contextlib.suppress(Exception):
        while True:
            frame = await read_raw(reader)
            seen.append(str(frame.get("type")))
            await write_raw(writer, frame)
    writer.close()


async def pump_bytes(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(Exception):
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    writer.close()


class Relay:
    """Sits between the joiner and the inviter's pairing port.

    With ``substitute`` it does what a real attacker must to read the traffic:
    it announces certificates of its own that claim each side's UUID, ends
    TLS on both sides with them, and relays every frame unchanged.
    """

    def __init__(self, target_port: int, workdir: Path, substitute: bool) -> None:
        self.target_port = target_port
        self.workdir = workdir
        self.substitute = substitute
        self.seen: list[str] = []
        self.server: asyncio.Server | None = None

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._relay, "127.0.0.1", 0)
        return int(self.server.sockets[0].getsockname()[1])

    async def close(self) -> None:
        if self.server:
            self.server.close()
            await self.server.wait_closed()

    async def _relay(self, j_reader: asyncio.StreamReader, j_writer: asyncio.StreamWriter) -> None:
        i_reader, i_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        if self.substitute:
            inviter_hello = await read_raw(i_reader)
            fake_inviter = self._forge("fake-inviter", inviter_hello)
            await write_raw(j_writer, {**inviter_hello, "cert_pem": fake_inviter.cert_pem})
            joiner_hello = await read_raw(j_reader)
            fake_joiner = self._forge("fake-joiner", joiner_hello)
            await write_raw(i_writer, {**joiner_hello, "cert_pem": fake_joiner.cert_pem})
            await write_raw(j_writer, await read_raw(i_reader))  # starttls
            await asyncio.gather(
                # To the inviter we are the joiner; to the joiner, the inviter.
                upgrade(i_writer, fake_joiner, Hello.parse(inviter_hello), server_side=False),
                upgrade(j_writer, fake_inviter, Hello.parse(joiner_hello), server_side=True),
            )
            await asyncio.gather(pump(j_reader, i_writer, self.seen), pump(i_reader, j_writer, self.seen))
        else:
            await asyncio.gather(pump_bytes(j_reader, i_writer), pump_bytes(i_reader, j_writer))

    def _forge(self, label: str, hello: dict[str, Any]) -> NodeIdentity:
        return forge_identity(self.workdir / label, str(hello["node_id"]), str(hello["name"]))


async def run_through_relay(
    make_node: Callable[[str], Node], tmp_path: Path, substitute: bool
) -> tuple[Node, Node, PairingHost, Relay, asyncio.Task[Any]]:
    a, b = make_node("a"), make_node("b")
    host = PairingHost(a.identity, a.trust, host="127.0.0.1", port=0, cluster_address="127.0.0.1:14330")
    invite = await host.invite()
    relay = Relay(int(invite.address.rsplit(":", 1)[1]), tmp_path / "mitm", substitute)
    port = await relay.start()
    joining = asyncio.ensure_future(join("127.0.0.1", port, invite.pin, b.identity, b.trust, "127.0.0.1:1"))
    return a, b, host, relay, joining


async def test_relay_with_own_certificates_makes_pairing_fail(
    make_node: Callable[[str], Node], tmp_path: Path
) -> None:
    a, b, host, relay, joining = await run_through_relay(make_node, tmp_path, substitute=True)
    try:
        # The relay holds the right PIN's traffic end to end, yet the key
        # confirmation covers the certificates each side really saw, so the
        # inviter counts it as a wrong guess and nobody pins anything.
        with pytest.raises(WrongPin):
            await joining
        assert "confirm" in relay.seen  # it really did relay the exchange
        assert host.wrong_tries == 1
        assert a.trust.all() == [] and b.trust.all() == []
    finally:
        await relay.close()
        await host.aclose()


async def test_plain_relay_is_harmless(make_node: Callable[[str], Node], tmp_path: Path) -> None:
    # Control: a relay that only forwards bytes cannot read them (TLS end to end
    # between the real nodes) and does not stop pairing.
    a, b, host, relay, joining = await run_through_relay(make_node, tmp_path, substitute=False)
    try:
        await joining
        assert (await host.wait_for_join(5)).node_id == b.identity.node_id
        assert b.trust.get(a.identity.node_id) is not None
    finally:
        await relay.close()
        await host.aclose()


async def test_joiner_refuses_an_inviter_that_cannot_prove_the_pin(
    make_node: Callable[[str], Node], tmp_path: Path
) -> None:
    """An impostor listener that does not know the PIN but claims success anyway."""
    impostor, b = make_node("impostor"), make_node("b")

    async def fake_inviter(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(Exception):
            await write_raw(writer, Hello.of(impostor.identity).frame())
            theirs = Hello.parse(await read_raw(reader))
            await write_raw(writer, {"type": "starttls"})
            seen = await upgrade(writer, impostor.identity, theirs, server_side=True)
            their_msg, their_address = parse_spake(await read_raw(reader))
            spake = SPAKE2_B(b"000000", idA=theirs.node_id.encode(), idB=impostor.identity.node_id.encode())
            my_msg = spake.start()
            await write_raw(writer, {"type": "spake", "msg": b64(my_msg), "address": None})
            key = finish_spake(spake, their_msg)
            await read_raw(reader)  # the joiner's confirmation, which it cannot check
            digest = transcript(
                Side(theirs.node_id, theirs.name, seen, their_msg, their_address),
                Side.local(impostor.identity, my_msg, None),
            )
            await write_raw(writer, {"type": "confirm", "mac": confirmation(key, "inviter", digest)})
            await reader.read()
        writer.close()

    server = await asyncio.start_server(fake_inviter, "127.0.0.1", 0)
    try:
        port = server.sockets[0].getsockname()[1]
        with pytest.raises(PairingProtocolError, match="could not prove it knows the PIN"):
            await join("127.0.0.1", port, "123456", b.identity, b.trust, "127.0.0.1:1")
        assert b.trust.all() == []
    finally:
        server.close()
        await server.wait_closed()


async def test_garbage_is_not_a_guess(make_node: Callable[[str], Node]) -> None:
    a = make_node("a")
    host = PairingHost(a.identity, a.trust, host="127.0.0.1", port=0)
    invite = await host.invite(max_wrong=1)
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", int(invite.address.rsplit(":", 1)[1]))
        await read_raw(reader)  # the inviter's hello
        await write_raw(writer, {"type": "hello", "proto": "pairwise-pair/1", "node_id": "nope"})
        answer = await read_raw(reader)
        assert answer["type"] == "error" and answer["code"] == "protocol"
        writer.close()
        assert host.pending and host.wrong_tries == 0
    finally:
        await host.aclose()
