"""Snapshots the service API returns whose whole shape is known (the node's status, jobs, engines,
keys, pairing and peers, batches, the run-time settings, the keys feature's summary and LAN door):
``TypedDict``s, so the CLI's ``--json``, the
control API's routes and the tray read the same keys, and mypy sees a key misspelt. Types only, in
the base room beside ``rows.py``, so the node that makes a status can name it."""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

from app.services.upstream_facts import EngineFacts


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


class RequesterRow(TypedDict):
    """Who asked for a job (``jobs/requester.Requester``): a node, and the key's name or the app's hint."""

    node_id: str
    node_name: str
    key: str | None
    app: str | None
    authenticated: bool


class JobRow(TypedDict):
    """A workload record as ``pairwise jobs --json`` prints it and the Jobs view reads it (never its text)."""

    id: str
    model: str
    api: str
    origin_node: str
    origin_node_id: str
    requester: RequesterRow
    serving_node: str | None
    serving_node_id: str | None
    engine: str | None
    state: Literal["queued", "running", "completed", "failed", "cancelled", "refused"]
    created_at: float
    started_at: float | None
    finished_at: float | None
    ttfb_ms: float | None
    prompt_tokens: int | None
    completion_tokens: int | None
    error: str | None
    off_lan: bool
    rented_node: str | None
    cost_usd: float | None
    route: str | None  # why it went where it went (routing/why.py)
    updated_at: float
    duration_s: NotRequired[float]  # once it has started and finished
    requester_text: str  # the requester as one line


# An engine this node adopted (``pairwise engines``, the node's detail): its upstream facts.
EngineRow = EngineFacts


class KeyRow(TypedDict):
    """A named key's record (``pairwise keys list``): never the key, nor its digest."""

    name: str
    created_at: float
    models: list[str]  # fnmatch patterns; empty = every model
    off_lan: Literal["allow", "deny"]
    usd_per_day: float | None
    requests_per_min: int | None
    revoked_at: float | None
    state: Literal["active", "revoked"]


class KeyListRow(KeyRow):
    usd_today: float


class NewKeyRow(KeyRow):
    key: str  # the only time the key itself is seen


class SpendTodayRow(TypedDict):
    """Spend today on one of this node's rented nodes by one requesting node."""

    node_id: str
    requester: str  # its name ("this machine" for this node)
    usd: float


class RelayPoolRow(TypedDict):
    """A peer's warm relay connections (``cluster/warm_pool.py``): counts since the peer was paired."""

    idle: int
    in_use: int
    target: int  # connections kept: the recent peak of relayed streams, bounded
    peak_in_flight: int  # over the last keep-alive time
    keepalive_s: float  # an idle connection is closed after this (the peer keeps it longer)
    handshakes_full: int
    handshakes_resumed: int
    refused: int  # connections closed because the certificate was not the pinned one
    session_cached: bool
    spliced: int  # relayed streams carried on the splice's connections (warm_splice.py)


class PeerRow(TypedDict):
    """A paired peer as ``pairwise pair list`` shows it."""

    id: str
    name: str
    address: str | None
    online: bool
    paired_at: str  # ISO 8601
    fingerprint: str
    last_seen: float | None
    error: str | None
    relay_pool: NotRequired[RelayPoolRow]


class PairsRow(TypedDict):
    peers: list[PeerRow]
    pending_notices: list[PinRow]  # removals this node still has to tell a peer about


class JoinedRow(TypedDict):
    id: str
    name: str


class InviteState(TypedDict):
    """The last invite: none, pending, ending, or how it ended (used, expired, void, cancelled)."""

    state: str
    address: NotRequired[str]
    expires_at: NotRequired[str]  # ISO 8601
    joined: NotRequired[JoinedRow]  # who used the PIN
    voided_by: NotRequired[list[str]]  # where the wrong PINs that voided it came from


class InviteStatus(InviteState):
    """``pair status``: the invite's state and the wrong guesses at it."""

    wrong_tries: int
    wrong_from: list[str]
    tries_left: int | None  # wrong PINs the open invite still takes before it is voided (None: no invite open)


class UnpairedRow(TypedDict):
    removed: JoinedRow
    other_side_told: bool
    other_side: str  # what the other side was told, or why it could not be


class AddedPeerRow(TypedDict):
    found: PeerRow | None  # the peer's row once it answers
    address: str  # HOST:PORT as normalised


class PeerRentedRow(TypedDict):
    """A peer's shared rented node and the policy this node routes to it under."""

    id: str
    name: str | None
    via: str | None
    policy: str
    sponsor_policy: str | None  # what its sponsor asked for, shown only
    set: bool  # this node has a rule of its own for it


class DeletedBatch(TypedDict):
    id: str
    object: Literal["batch"]
    deleted: bool
