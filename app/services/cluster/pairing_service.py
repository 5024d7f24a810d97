"""PIN pairing as a node runs it: invites on the pairing port, joins, and
a clear answer for a PIN that is no longer good.

The pairing listener (``PairingHost``) is open only while an invite is
pending, and closes when it is used, expires or is voided. A joiner dialing
a closed port could then only learn "nothing listens here", which does not
say which of those happened. So, after an invite ends, a **tombstone** takes
the same port for a while: it accepts no hello, runs no SPAKE2 and takes no
guess; it answers every connection with one error frame naming how the
invite ended ("PIN expired", "PIN already used", "too many wrong tries; the
PIN is void") and hangs up. A new invite, a cancel or node stop removes it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING

from app.services.cluster import pairing_protocol as proto
from app.services.cluster.identity import NodeIdentity
from app.services.cluster.pairing import Invite, PairingHost, join
from app.services.cluster.pairing_protocol import (
    PairingError,
    PairingUnavailable,
    PinAlreadyUsed,
    PinExpired,
    PinVoid,
)
from app.services.cluster.trust import PeerPin, TrustStore
from app.services.errors import ConfigError
from app.services.events import (
    EventBus,
    PairInviteEnded,
    PairInviteOpened,
    PairInviteVoided,
    PairWrongPin,
    PeerPaired,
)
from app.services.firstrun.explain import PAIRING
from app.services.firstrun.ports import explain_taken
from app.services.platform.sockets import address_in_use
from app.settings import parse_host_port

if TYPE_CHECKING:
    from app.services.api.snapshots import InviteState, InviteStatus, JoinedRow

log = logging.getLogger(__name__)

DEFAULT_PAIRING_PORT = 14331
MAX_TTL_S = 300.0  # the "valid 5 minutes"
TOMBSTONE_S = 600.0


def pairing_port_for(cluster_port: int) -> int:
    """By default the cluster port + 1; an ephemeral cluster port gets an ephemeral pairing port."""
    return cluster_port + 1 if cluster_port else 0


class _Tombstone:
    def __init__(self, server: asyncio.Server, error: PairingError, closer: asyncio.TimerHandle) -> None:
        self.server, self.error, self.closer = server, error, closer

    async def close(self) -> None:
        self.closer.cancel()
        self.server.close()
        with contextlib.suppress(OSError):
            await self.server.wait_closed()


class PairingService:
    def __init__(self, identity: NodeIdentity, trust: TrustStore, bus: EventBus, *, bind_host: str,
                 cluster_port: int, cluster_address: str) -> None:
        self.identity, self.trust, self.bus = identity, trust, bus
        self.bind_host = bind_host
        self.cluster_address = cluster_address
        self.port = pairing_port_for(cluster_port)
        self.host = PairingHost(identity, trust, host=bind_host, port=self.port, cluster_address=cluster_address,
                                on_paired=self._paired, on_wrong_pin=self._wrong_pin)
        self.invite_state: InviteState | None = None
        self._watcher: asyncio.Task[None] | None = None
        self._tombstone: _Tombstone | None = None

    def _paired(self, pin: PeerPin) -> None:
        self.bus.publish(PeerPaired(node=pin.name, node_id=pin.node_id, address=pin.address, role="inviter"))

    def _wrong_pin(self, source: str, tries_left: int) -> None:
        expires = str(self.invite_state.get("expires_at") or "") if self.invite_state else ""
        self.bus.publish(PairWrongPin(source=source, tries_left=tries_left, expires_at=expires))

    async def invite(self, ttl_s: float = MAX_TTL_S) -> Invite:
        ttl_s = min(max(float(ttl_s), 1.0), MAX_TTL_S)
        await self._stop_watching()
        try:
            invite = await self.host.invite(ttl_s=ttl_s)
        except OSError as exc:
            address = f"{self.bind_host}:{self.port}"
            if address_in_use(exc):
                raise await explain_taken(PAIRING, address) from exc
            raise ConfigError(f"cannot open the pairing port {address}: {exc.strerror or exc}") from exc
        self.invite_state = {"state": "pending", "address": invite.address,
                             "expires_at": invite.expires_at.isoformat()}
        self._watcher = asyncio.create_task(self._watch(invite), name="pairing-invite")
        self.bus.publish(PairInviteOpened(address=invite.address, expires_at=invite.expires_at.isoformat()))
        return invite

    async def _watch(self, invite: Invite) -> None:
        error: PairingError
        joined: JoinedRow | None = None
        voided_by: list[str] | None = None
        try:
            pin = await self.host.wait_for_join()
            error, state = PinAlreadyUsed(), "used"
            joined = {"id": pin.node_id, "name": pin.name}
        except PinExpired as exc:
            error, state = exc, "expired"
        except PinVoid:
            # The tombstone answers joiners with the plain "PIN is void"; where the wrong PINs came
            # from is for the inviting side only (state, event, tray).
            error, state = PinVoid(), "void"
            voided_by = self.host.wrong_from
        except PairingError as exc:  # cancelled, or the winner vanished before the end
            if isinstance(exc, PairingUnavailable):
                self._set_state("cancelled")
                return
            error, state = PinAlreadyUsed(), "used"
        # The tombstone first: once the state says how the invite ended, the port says so too.
        await self._open_tombstone(invite.address, error)
        if self.invite_state is not None and self.invite_state.get("state") == "pending":
            self._set_state(state, joined=joined, voided_by=voided_by)

    def _set_state(self, state: str, *, joined: JoinedRow | None = None, voided_by: list[str] | None = None) -> None:
        if self.invite_state is not None:
            self.invite_state = {**self.invite_state, "state": state}
            if joined is not None:
                self.invite_state["joined"] = joined
            if voided_by is not None:
                self.invite_state["voided_by"] = voided_by
            if state == "void":
                self.bus.publish(PairInviteVoided(voided_by=list(voided_by or [])))
            else:
                self.bus.publish(PairInviteEnded(state=state))

    async def _open_tombstone(self, address: str, error: PairingError) -> None:
        port = int(address.rsplit(":", 1)[1])
        frame = proto.error_frame(error)

        async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            with contextlib.suppress(OSError):  # the joiner left already
                await proto.write_frame(writer, frame)
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()

        try:
            server = await asyncio.start_server(answer, self.bind_host, port)
        except OSError as exc:  # someone else took the port: joiners just find nothing there
            log.info("no tombstone for the ended invite on port %d: %s", port, exc)
            return
        closer = asyncio.get_running_loop().call_later(TOMBSTONE_S, server.close)
        self._tombstone = _Tombstone(server, error, closer)

    async def _stop_watching(self) -> None:
        # The watcher first: it may be opening a tombstone right now.
        if self._watcher is not None:
            self._watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watcher
            self._watcher = None
        await self._clear_tombstone()

    async def _clear_tombstone(self) -> None:
        if self._tombstone is not None:
            tombstone, self._tombstone = self._tombstone, None
            await tombstone.close()

    async def wait(self, timeout_s: float | None) -> PeerPin:
        return await self.host.wait_for_join(timeout_s)

    async def cancel(self) -> None:
        await self.host.cancel()
        await self._stop_watching()
        if self.invite_state is not None and self.invite_state.get("state") == "pending":
            self._set_state("cancelled")

    async def join(self, address: str, pin: str) -> PeerPin:
        host, port = parse_host_port(address, default_port=DEFAULT_PAIRING_PORT)
        peer = await join(host, port, pin, self.identity, self.trust, self.cluster_address)
        self.bus.publish(PeerPaired(node=peer.name, node_id=peer.node_id, address=peer.address, role="joiner"))
        return peer

    def status(self) -> InviteStatus:
        state: InviteStatus = {**(self.invite_state or {"state": "none"}), "wrong_tries": self.host.wrong_tries,
                               "wrong_from": self.host.wrong_from, "tries_left": self.host.tries_left}
        if state["state"] == "pending" and not self.host.pending:
            state["state"] = "ending"  # the timer fired; the watcher records how it ended in a moment
        return state

    async def close(self) -> None:
        await self._stop_watching()
        await self.host.aclose()
