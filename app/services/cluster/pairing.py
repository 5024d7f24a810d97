"""PIN pairing: ``PairingHost`` (the inviter) and ``join`` (the joiner).

The wire protocol, its security argument and the errors live in
``pairing_protocol``. This module runs it: the inviter's listener exists only
while an invite is pending and closes on success, expiry, too many wrong
tries or cancellation. Sessions run concurrently, but each guess is judged
and counted in one synchronous step, so no more than ``max_wrong`` guesses are
ever checked against a PIN, and exactly one joiner can win it (a joiner that
was already connected when another won gets ``PinAlreadyUsed``).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import enum
import functools
import logging
import secrets
import ssl
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from app.services.cluster import pairing_protocol as proto
from app.services.cluster.identity import NodeIdentity
from app.services.cluster.pairing_protocol import (
    AlreadyMember,
    Hello,
    PairingBusy,
    PairingError,
    PairingProtocolError,
    PairingUnavailable,
    PinAlreadyUsed,
    PinExpired,
    PinVoid,
    Side,
    WrongPin,
)
from app.services.cluster.trust import PeerPin, TrustStore
from app.services.guard import guarded

log = logging.getLogger(__name__)

OnPaired = Callable[[PeerPin], None]
OnWrongPin = Callable[[str, int], None]  # where the wrong PIN came from, the tries left before the void
BUSY_RETRY_S = 0.5


class InviteState(enum.Enum):
    PENDING = "pending"
    CLAIMED = "claimed"  # the PIN was proven; that session is finishing
    USED = "used"
    EXPIRED = "expired"
    VOID = "void"
    CANCELLED = "cancelled"


@dataclass(frozen=True)
class Invite:
    pin: str
    expires_at: dt.datetime
    address: str  # host:port of the pairing listener, for the joiner to dial


@dataclass
class _Pending:
    invite: Invite
    deadline: float
    max_wrong: int
    server: asyncio.Server
    result: asyncio.Future[PeerPin]
    state: InviteState = InviteState.PENDING
    wrong: int = 0
    expiry: asyncio.TimerHandle | None = None
    claimed_by: asyncio.Task[None] | None = None
    sessions: set[asyncio.Task[None]] = field(default_factory=set)
    per_address: Counter[str] = field(default_factory=Counter)
    wrong_from: list[str] = field(default_factory=list)  # the address of each wrong guess


class PairingHost:
    """The inviter: issues PIN invites and answers joiners while one is pending."""

    def __init__(
        self,
        identity: NodeIdentity,
        trust: TrustStore,
        *,
        host: str = "0.0.0.0",
        port: int = 0,
        cluster_address: str | None = None,
        advertise_host: str | None = None,
        on_paired: OnPaired | None = None,
        on_wrong_pin: OnWrongPin | None = None,
        session_timeout_s: float = 15.0,
        hello_timeout_s: float = 3.0,
        max_sessions: int = 8,
        max_sessions_per_address: int = 2,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.identity = identity
        self.trust = trust
        self.host = host
        self.port = port
        self.cluster_address = cluster_address
        self.advertise_host = advertise_host
        self.on_paired = on_paired
        self.on_wrong_pin = on_wrong_pin
        self.session_timeout_s = session_timeout_s
        self.hello_timeout_s = hello_timeout_s
        self.max_sessions = max_sessions
        self.max_sessions_per_address = max_sessions_per_address
        self._clock = clock
        self._pending: _Pending | None = None
        self._hello = Hello.of(identity)

    # -- public API -----------------------------------------------------------

    @property
    def pending(self) -> bool:
        return self._pending is not None and self._status(self._pending) is None

    @property
    def wrong_tries(self) -> int:
        return self._pending.wrong if self._pending else 0

    @property
    def tries_left(self) -> int | None:
        return self._pending.max_wrong - self._pending.wrong if self._pending else None

    @property
    def wrong_from(self) -> list[str]:
        """Where the wrong guesses at the current (or last) invite came from, distinct, in order."""
        return list(dict.fromkeys(self._pending.wrong_from)) if self._pending else []

    async def invite(self, ttl_s: float = 300, max_wrong: int = 3) -> Invite:
        """Open the listener with a fresh six-digit PIN; replaces any pending invite."""
        if ttl_s <= 0 or max_wrong < 1:
            raise ValueError("ttl_s must be positive and max_wrong at least 1")
        await self.cancel()
        loop = asyncio.get_running_loop()
        # Each listener serves only its own invite, even for a connection that was
        # accepted just before a newer invite replaced it.
        box: list[_Pending] = []
        server = await asyncio.start_server(functools.partial(self._accept, box), self.host, self.port)
        bound_port = server.sockets[0].getsockname()[1]
        shown = self.advertise_host or (
            proto.default_advertise_host() if proto.is_wildcard(self.host) else self.host
        )
        address = f"[{shown}]:{bound_port}" if ":" in shown else f"{shown}:{bound_port}"
        invite = Invite(
            pin=f"{secrets.randbelow(10**6):06d}",
            expires_at=dt.datetime.now(dt.UTC) + dt.timedelta(seconds=ttl_s),
            address=address,
        )
        result: asyncio.Future[PeerPin] = loop.create_future()
        # Nobody may be waiting for the outcome; mark it retrieved so asyncio does not warn.
        result.add_done_callback(lambda f: f.cancelled() or f.exception())
        pending = _Pending(invite, self._clock() + ttl_s, max_wrong, server, result)
        pending.expiry = loop.call_later(ttl_s, self._expire, pending)
        box.append(pending)
        self._pending = pending
        log.info("pairing invite open on %s until %s", address, invite.expires_at.isoformat())
        return invite

    # A timeout argument (ASYNC109) because callers such as the CLI wait with a
    # deadline, and it must not cancel the invite itself (hence the shield).
    async def wait_for_join(self, timeout: float | None = None) -> PeerPin:  # noqa: ASYNC109
        """The pin of the node that joined; raises how the invite ended otherwise."""
        if self._pending is None:
            raise PairingUnavailable()
        return await asyncio.wait_for(asyncio.shield(self._pending.result), timeout)

    async def cancel(self) -> None:
        """Void the pending invite, if any, and close the listener."""
        pending = self._pending
        if pending is None:
            return
        self._end(pending, InviteState.CANCELLED, PairingUnavailable("the invite was cancelled"))
        for task in list(pending.sessions):
            task.cancel()
        await asyncio.gather(*pending.sessions, return_exceptions=True)
        await pending.server.wait_closed()

    async def aclose(self) -> None:
        await self.cancel()

    async def wait_closed(self) -> None:
        """Wait until the current invite has ended and its listener is closed."""
        if self._pending is not None:
            await asyncio.wait([self._pending.result])
            await self._pending.server.wait_closed()

    # -- invite state ---------------------------------------------------------

    def _status(self, pending: _Pending) -> PairingError | None:
        """Why this invite cannot take a guess now, or None if it can."""
        if self._clock() >= pending.deadline:
            self._expire(pending)
        return {
            InviteState.PENDING: None,
            InviteState.CLAIMED: PinAlreadyUsed(),
            InviteState.USED: PinAlreadyUsed(),
            InviteState.EXPIRED: PinExpired(),
            InviteState.VOID: PinVoid(),
            InviteState.CANCELLED: PairingUnavailable("the invite was cancelled"),
        }[pending.state]

    def _expire(self, pending: _Pending) -> None:
        # A joiner that proved the PIN in time may finish (bounded by the session
        # timeout); ending the invite under it would pin a node yet report expiry.
        if pending.state is InviteState.PENDING:
            self._end(pending, InviteState.EXPIRED, PinExpired())

    def _end(
        self,
        pending: _Pending,
        state: InviteState,
        error: PairingError | None = None,
        pin: PeerPin | None = None,
    ) -> None:
        if pending.result.done():
            return
        pending.state = state
        if pending.expiry is not None:
            pending.expiry.cancel()
        # Stops accepting at once; sessions already running finish and see the new state.
        pending.server.close()
        if pin is not None:
            pending.result.set_result(pin)
        else:
            pending.result.set_exception(error or PairingError())
        log.info("pairing invite ended: %s", state.value)

    # -- a joiner's session ---------------------------------------------------

    async def _accept(
        self, box: list[_Pending], reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        pending = box[0] if box else None
        task = asyncio.current_task()
        peername = writer.get_extra_info("peername")
        address = str(peername[0]) if peername else "?"
        if pending is None or task is None:
            writer.close()
            return
        if (len(pending.sessions) >= self.max_sessions
                or pending.per_address[address] >= self.max_sessions_per_address):
            # Say so, so the joiner can name it and try again, instead of "the connection closed".
            log.info("pairing port busy: refused a session from %s (%d running)", address, len(pending.sessions))
            with contextlib.suppress(OSError):  # the joiner left, or did not read in time (TimeoutError is one)
                async with asyncio.timeout(1.0):
                    await proto.write_frame(writer, proto.error_frame(PairingBusy()))
            writer.close()
            return
        pending.sessions.add(task)
        pending.per_address[address] += 1
        try:
            async with asyncio.timeout(self.session_timeout_s):
                await self._session(pending, reader, writer)
        except PairingError as exc:
            log.info("pairing session from %s failed: %s", writer.get_extra_info("peername"), exc.message)
            with contextlib.suppress(OSError):  # the joiner left already (ssl.SSLError is an OSError)
                await proto.write_frame(writer, proto.error_frame(exc))
        except (OSError, TimeoutError) as exc:  # ssl.SSLError included
            log.info("pairing session from %s dropped: %r", writer.get_extra_info("peername"), exc)
        except Exception:
            # E.g. the trust store could not be written: log it here, where the peer is known.
            log.exception("pairing session from %s failed", writer.get_extra_info("peername"))
        finally:
            pending.sessions.discard(task)
            pending.per_address[address] -= 1
            if pending.state is InviteState.CLAIMED and pending.claimed_by is task:
                # The winner vanished after proving the PIN: the PIN is spent, nothing is pinned.
                self._end(
                    pending,
                    InviteState.USED,
                    PairingError("the joining node left before pairing finished; nothing was pinned"),
                )
            writer.close()
            with contextlib.suppress(OSError):  # a reset or a TLS close the other side did not finish
                await writer.wait_closed()

    async def _session(
        self, pending: _Pending, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        status = self._status(pending)
        if status is not None:
            raise status
        await proto.write_frame(writer, self._hello.frame())
        try:
            async with asyncio.timeout(self.hello_timeout_s):
                theirs = Hello.parse(await proto.read_frame(reader))
        except TimeoutError as exc:
            # An idle connection would otherwise hold a session slot for the whole session timeout.
            raise PairingProtocolError(f"no hello within {self.hello_timeout_s:g} s") from exc
        if theirs.node_id == self.identity.node_id:
            raise PairingProtocolError("a node cannot pair with itself")
        await proto.write_frame(writer, {"type": "starttls"})
        seen = await proto.upgrade(writer, self.identity, theirs, server_side=True)

        their_msg, their_address = proto.parse_spake(await proto.read_frame(reader))
        from spake2 import SPAKE2_B  # loaded at the first pairing: its group tables cost ~7 MB and 0.1 s

        spake = SPAKE2_B(
            pending.invite.pin.encode("ascii"),
            idA=theirs.node_id.encode(),
            idB=self.identity.node_id.encode(),
        )
        my_msg = spake.start()
        await proto.write_frame(
            writer, {"type": "spake", "msg": proto.b64(my_msg), "address": self.cluster_address}
        )
        key = proto.finish_spake(spake, their_msg)
        digest = proto.transcript(
            Side(theirs.node_id, theirs.name, seen, their_msg, their_address),
            Side.local(self.identity, my_msg, self.cluster_address),
        )
        frame = await proto.read_frame(reader)

        # Judge and count the guess with no await in between: concurrent sessions
        # cannot both win, nor squeeze in guesses past max_wrong.
        status = self._status(pending)
        if status is not None:
            raise status
        if not proto.confirmation_ok(proto.confirmation(key, "joiner", digest), frame):
            pending.wrong += 1
            peername = writer.get_extra_info("peername")
            pending.wrong_from.append(str(peername[0]) if peername else "an unknown address")
            left = pending.max_wrong - pending.wrong
            if left <= 0:
                # The inviting side is told from where (the joiner only that the PIN is void).
                sources = ", ".join(dict.fromkeys(pending.wrong_from))
                self._end(pending, InviteState.VOID,
                          PinVoid(f"the invite was voided by {pending.wrong} wrong PINs from {sources}; "
                                  "start another with 'pairwise pair invite'"))
                raise PinVoid()
            if self.on_wrong_pin is not None:  # the inviting side hears of each one, not only of the void
                with guarded("the on_wrong_pin hook", log):
                    self.on_wrong_pin(pending.wrong_from[-1], left)
            raise WrongPin(f"wrong PIN ({left} {'try' if left == 1 else 'tries'} left)")
        if theirs.node_id in self.trust:
            raise AlreadyMember()
        pending.state = InviteState.CLAIMED
        pending.claimed_by = asyncio.current_task()

        await proto.write_frame(
            writer, {"type": "confirm", "mac": proto.confirmation(key, "inviter", digest)}
        )
        proto.expect(await proto.read_frame(reader), "done")
        peername = writer.get_extra_info("peername")
        address = proto.resolve_address(their_address, peername[0] if peername else None)
        pin = PeerPin.create(theirs.node_id, theirs.name, theirs.cert_pem, address)
        self.trust.add(pin)
        self._end(pending, InviteState.USED, pin=pin)
        log.info("paired with %s (%s)", pin.name, pin.node_id)
        self._notify(pin)

    def _notify(self, pin: PeerPin) -> None:
        # Synchronous on purpose (an event bus publish); a hook needing I/O schedules its own task.
        if self.on_paired is not None:
            with guarded("the on_paired hook", log):
                self.on_paired(pin)


async def join(
    host: str,
    port: int,
    pin: str,
    identity: NodeIdentity,
    trust: TrustStore,
    my_cluster_address: str,
    *,
    timeout_s: float = 30.0,
) -> PeerPin:
    """Pair with the inviter at ``host:port`` using the PIN it shows; returns its pin.

    ``my_cluster_address`` is where the inviter can reach this node's cluster
    port later ("host:port"; a wildcard host is replaced by the address the
    inviter sees).
    """
    digits = proto.normalize_pin(pin)
    busy: PairingBusy | None = None
    try:
        async with asyncio.timeout(timeout_s):
            while True:
                try:
                    return await _join(host, port, digits, identity, trust, my_cluster_address)
                except PairingBusy as exc:
                    # Sessions held by others end within the inviter's hello timeout: try again.
                    busy = exc
                    await asyncio.sleep(BUSY_RETRY_S)
    except TimeoutError as exc:
        if busy is not None:
            raise PairingBusy(busy_advice(host, port, timeout_s)) from exc
        raise PairingError(f"{host}:{port} did not finish pairing within {timeout_s:g} s") from exc


def busy_advice(host: str, port: int, timeout_s: float) -> str:
    """What a joiner is told when the inviter's pairing port stayed busy: why, and what to do."""
    return (f"{host}:{port} stayed busy with other pairing attempts for {timeout_s:g} s (another device on "
            "the network may be holding its pairing port open). The PIN was not tried, so it is still good. "
            f"What to do: run 'pairwise pair join {host}:{port} --pin PIN' again in a minute; if it stays "
            "busy, on the inviting node run 'pairwise pair cancel' then 'pairwise pair invite' (a new PIN, "
            "the pairing port opened afresh) and join at once; if even that is busy, pair the two machines "
            "over a network only they share (a cable, a phone hotspot)")


async def _join(
    host: str, port: int, pin: str, identity: NodeIdentity, trust: TrustStore, my_address: str
) -> PeerPin:
    try:
        reader, writer = await asyncio.open_connection(host, port)
    except OSError as exc:
        raise PairingUnavailable(
            f"no pairing invite is open at {host}:{port} (it may have been used, expired or voided)"
        ) from exc
    try:
        theirs = Hello.parse(await proto.read_frame(reader))
        if theirs.node_id == identity.node_id:
            raise PairingProtocolError("a node cannot pair with itself")
        await proto.write_frame(writer, Hello.of(identity).frame())
        proto.expect(await proto.read_frame(reader), "starttls")
        seen = await proto.upgrade(writer, identity, theirs, server_side=False)

        from spake2 import SPAKE2_A  # loaded at the first pairing, as SPAKE2_B is

        spake = SPAKE2_A(pin.encode("ascii"), idA=identity.node_id.encode(), idB=theirs.node_id.encode())
        my_msg = spake.start()
        await proto.write_frame(writer, {"type": "spake", "msg": proto.b64(my_msg), "address": my_address})
        their_msg, their_address = proto.parse_spake(await proto.read_frame(reader))
        key = proto.finish_spake(spake, their_msg)
        digest = proto.transcript(
            Side.local(identity, my_msg, my_address),
            Side(theirs.node_id, theirs.name, seen, their_msg, their_address),
        )
        await proto.write_frame(writer, {"type": "confirm", "mac": proto.confirmation(key, "joiner", digest)})
        # Wrong PIN, void, expired, used, already a member: raised from the error frame.
        frame = await proto.read_frame(reader)
        if not proto.confirmation_ok(proto.confirmation(key, "inviter", digest), frame):
            raise PairingProtocolError(
                "the other node could not prove it knows the PIN; nothing was pinned "
                "(the connection may have been intercepted)"
            )
        peer = PeerPin.create(
            theirs.node_id, theirs.name, theirs.cert_pem, proto.resolve_address(their_address, host)
        )
        trust.add(peer)
        await proto.write_frame(writer, {"type": "done"})
        return peer
    except ssl.SSLError as exc:
        raise PairingProtocolError(f"TLS handshake with the other node failed: {exc.reason or exc}") from exc
    except ConnectionError as exc:
        raise PairingProtocolError(f"the connection to {host}:{port} broke during pairing") from exc
    finally:
        writer.close()
        with contextlib.suppress(OSError):  # a reset or a TLS close the other side did not finish
            await writer.wait_closed()
