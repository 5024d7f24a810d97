"""Snapshots the service API returns whose whole shape is known (the node's status, a pinned peer,
an invite, the run-time settings, an engine removed, the keys feature's summary and LAN door): ``TypedDict``s, so the CLI's ``--json``, the
control API's routes and the tray read the same keys, and mypy sees a key misspelt. Types only, in
the base room beside ``rows.py``, so the node that makes a status can name it."""

from __future__ import annotations

from typing import Literal, TypedDict


class NodeStatus(TypedDict):
    """``pairwise status``: this node, its front door and its load."""

    name: str
    id: str
    listen: str  # the front door's bound address ("" until it is open)
    pid: int
    uptime_s: float
    home: str
    engines: int
    models: int
    active_jobs: int
    open_files_limit: int
    connections: dict[str, dict[str, int]]  # each listener's label -> its counters (seen, open, refused...)


class RequestersSummary(TypedDict):
    """The keys feature in one line (the tray's menu): ``"LAN access on · 2 keys"``."""

    lan_on: bool
    keys: int  # active keys
    text: str


class LanStatus(TypedDict):
    """The LAN door (``pairwise keys lan``, the Keys view)."""

    on: bool
    listen: str | None  # the address asked for in settings
    address: str  # the address bound ("" while closed)
    url: str | None
    scheme: str
    fingerprint: str | None  # of the door's name-constrained CA a LAN client pins (None until made)
    keys: int
    error: str | None  # why the door is not open although it should be


class DoorCert(TypedDict):
    pem: str
    fingerprint: str


class PinRow(TypedDict):
    """A paired peer as pinned here (``pair join``, ``pair wait``, a removal still to tell)."""

    id: str
    name: str
    address: str | None  # where it was last reached; None for a peer never dialled
    fingerprint: str
    paired_at: str  # ISO 8601


class InviteRow(TypedDict):
    """A new PIN and where to dial it (``pair invite``)."""

    pin: str
    address: str  # host:port of the pairing port
    expires_at: str  # ISO 8601
    expires_at_unix: float


class SettingsRow(TypedDict):
    """The settings a person changes at run time (``pairwise settings``, the Settings view)."""

    off_lan: Literal["allow", "deny"]


class RemovedEngine(TypedDict):
    removed: str  # the engine's name
