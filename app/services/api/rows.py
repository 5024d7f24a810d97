"""The rows the service API hands the tray and the control API: a rented node's row and the cluster's
node list. Their JSON is their keys, in the order the producers write them (``rented/facts.py``,
``node.local_facts``, ``cluster/peers.rows``), so typing them changes nothing on the wire.

Only types live here, so this module sits in the base room (tests/unit/test_import_rules.py): the
producers below the API import it as the catalog, like the events.

A key is required where its producer always writes it (its value may still be None); ``NotRequired``
marks what only some rows carry (a batch window's keys, a peer's facts as it sent them).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, NotRequired, Required, TypedDict

from app.services.upstream_facts import EngineFacts as EngineFacts  # the engine list's row, for the tray

if TYPE_CHECKING:
    from typing_extensions import TypeIs  # typing's own from Python 3.13

    from app.services.platform.hardware import HardwareFacts


class LifecycleRow(TypedDict):
    managed: bool
    wake_on_request: bool
    idle_pause_min: float | None
    pause_on_sponsor_exit: bool


class BudgetRow(TypedDict):
    usd_per_day: float | None
    usd_per_month: float | None


class RequestersRow(TypedDict):
    usd_per_day: dict[str, float]
    requests_per_min: dict[str, int]


class CostRow(TypedDict):
    session_usd: float
    day_usd: float
    month_usd: float


class RentedFact(TypedDict):
    """What a peer may learn about a rented node (``rented/facts.shared_fact``): no URL, endpoint or token."""

    id: str
    name: str
    kind: Literal["rented"]
    label: str
    provider: str
    gpu: str | None
    state: str
    price_per_hour: float | None
    sponsor: str
    sponsor_id: str
    shared: bool
    policy: str
    eligible: bool
    reason: str | None
    models: list[str]
    off_lan: bool
    online: bool
    in_flight: int
    capacity: int
    cold_start_s: float
    warning: str | None
    simulated: bool
    windows: dict[str, int]  # each served name's context window, where known (peers' fit decisions)


class WindowExtras(TypedDict, total=False):
    """A batch window's keys (its provider's ``extra`` row keys): present together on a window's row, absent on an endpoint's."""

    window_stage: str
    window_job: str
    window_s: float
    window_ends_at: str | None
    window_cost_usd: float
    window_charged_usd: float
    started_at: str | None
    finished_at: str | None
    ended_by: str | None
    last_log_lines: list[str]
    stop_owed: str | None


class RentedRow(RentedFact):
    """A rented node on its sponsor (``rented/facts.local_row``), with a window's keys when it is one."""

    url: str | None
    endpoint: str | None
    provider_state: str | None  # the provider's own word for the state (its status, a job's stage)
    provider_message: str | None  # the provider's own message about it
    has_credential: bool
    credential_error: str | None
    last_error: str | None
    allow_models: list[str]
    provider_unreachable: str | None  # why the provider's API cannot be reached now
    lifecycle: LifecycleRow
    budget: BudgetRow
    requesters: RequestersRow
    cost: CostRow
    cost_session_usd: float
    cost_month_usd: float
    ca_file: str | None
    price_declared: float | None
    provider_price_per_hour: float | None  # what the provider lists now (``price_per_hour`` is what is charged)
    spend_account: str | None
    cap_note: str | None
    reported_state: str | None  # a polled provider's normalised state as it last reported it (rented/provider.py State)
    reported_billing: bool | None
    reported_message: str | None
    spend_problem: NotRequired[str | None]  # why the spend account cannot be trusted (file and way out)
    billed_by: NotRequired[str]  # per hour at a price, or per token at prices per 1M tokens (and whose)
    window_stage: NotRequired[str]
    window_job: NotRequired[str]
    window_s: NotRequired[float]
    window_ends_at: NotRequired[str | None]
    window_cost_usd: NotRequired[float]
    window_charged_usd: NotRequired[float]
    started_at: NotRequired[str | None]
    finished_at: NotRequired[str | None]
    ended_by: NotRequired[str | None]
    last_log_lines: NotRequired[list[str]]
    stop_owed: NotRequired[str | None]


class RentedActionRow(RentedRow):
    """A sponsor's rented row as the service API returns it (``api/rented.with_actions``): what a person
    can do about it and whether it costs money now, so no view copies a provider's state sets."""

    provider_label: str  # what its provider is, in words (``glossary.provider``)
    billing: bool
    pausable: bool
    resumable: bool
    stoppable: bool
    state_now: str  # the provider's state, normalised (rented/provider.py State)
    actions: list[str]  # what a person may do now (``POST /rented/{name}/{action}``)
    capabilities: list[str]  # every action its provider offers


class LocalNodeRow(TypedDict):
    """This node in the node list (``Node.local_facts``)."""

    id: str
    name: str
    kind: Literal["local"]
    online: bool
    os: str
    engines: list[EngineFacts]
    models: list[str]
    in_flight: int
    hardware: HardwareFacts


class PeerNodeRow(TypedDict):
    """A paired peer in the node list (``cluster/peers.rows``); ``os`` and ``hardware`` are what it said."""

    id: str
    name: str
    kind: Literal["peer"]
    online: bool
    address: str | None
    os: Any
    hardware: Any
    engines: Any
    models: list[str]
    in_flight: int
    last_seen: float | None
    error: str | None


class RelayedRentedFact(TypedDict, total=False):
    """A rented node a peer shares, as that peer sent it, marked ``via`` the peer. Its sponsor wrote the
    keys of a ``RentedFact``, but nothing here vouches for any of them: only what this node itself
    sets (``via``, ``online``) is required, and a view reads the rest through ``Mapping.get``."""

    id: str
    kind: str
    name: str
    sponsor: str
    sponsor_policy: str | None  # what its sponsor asked for (shown only; this node's rule decides)
    simulated: bool
    online: Required[bool]
    via: Required[str]


# One row of ``pairwise nodes`` and the tray's node list. With ``own_detail`` this node's rented rows
# are ``RentedActionRow``s (a ``RentedFact`` with more keys).
NodeRow = LocalNodeRow | PeerNodeRow | RentedFact | RelayedRentedFact


def is_rented(row: NodeRow) -> TypeIs[RentedFact | RelayedRentedFact]:
    """A rented node's row (this node's or a peer's), as the node list marks it."""
    return row.get("kind") == "rented"


def is_relayed(row: NodeRow) -> TypeIs[RelayedRentedFact]:
    """A rented node a peer shares, as that peer relayed it (marked ``via`` the peer)."""
    seen: Mapping[str, object] = row  # only a relayed row has the key
    return seen.get("kind") == "rented" and bool(seen.get("via"))
