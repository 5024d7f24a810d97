"""Who asked for a workload: the origin node and, on that node, a named key or a local app.

A requester is the node the request entered the cluster at (id and display name) plus, on
that node, either the name of the key it presented (``authenticated``) or, without a key, the
app's own User-Agent as a hint (``authenticated`` False: any app can send any User-Agent).

Keys are local to the node that made them, so a key name means something only together with
its node: ``laptop-b · key ci-bot``. A serving node takes the origin node from the peer's
pinned certificate and only the key name or app hint from the relay's headers.

Public API: ``Requester`` (frozen; ``to_json``, ``from_json`` which also reads the old plain
string form, ``label``, ``ledger_id``), ``local_app(node_id, node_name, user_agent)``,
``with_key(node_id, node_name, key_name)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from app.services.json_types import JsonObject

MAX_HINT = 200


@dataclass(frozen=True, slots=True)
class Requester:
    node_id: str
    node_name: str
    key: str | None = None  # the key's name on node_id (never the key itself)
    app: str | None = None  # the User-Agent, a hint only
    authenticated: bool = False

    def to_json(self) -> JsonObject:
        return {"node_id": self.node_id, "node_name": self.node_name, "key": self.key, "app": self.app,
                "authenticated": self.authenticated}

    @classmethod
    def from_json(cls, data: object, *, node_id: str = "", node_name: str = "") -> Requester:
        """A requester from a stored or replicated record; a plain string (records written before
        requesters were structured) becomes an unauthenticated app hint on the record's origin."""
        if isinstance(data, str):
            return cls(node_id, node_name, app=data[:MAX_HINT])
        if not isinstance(data, dict):
            return cls(node_id, node_name)
        key = _text(data.get("key"))
        return cls(node_id=_text(data.get("node_id")) or node_id, node_name=_text(data.get("node_name")) or node_name,
                   key=key, app=_text(data.get("app")), authenticated=bool(data.get("authenticated")) and key is not None)

    @property
    def label(self) -> str:
        """``laptop-b · key ci-bot`` or ``laptop-b · curl/8.5 (unauthenticated)``."""
        who = f"key {self.key}" if self.key else f"{self.app or 'unknown app'} (unauthenticated)"
        return f"{self.node_name} · {who}" if self.node_name else who

    @property
    def ledger_id(self) -> str:
        """What spend and rates are counted under: the key on its node, or the node itself."""
        return f"{self.node_id}/key:{self.key}" if self.key else self.node_id


def _text(value: object) -> str | None:
    return value[:MAX_HINT] if isinstance(value, str) and value else None


def local_app(node_id: str, node_name: str, user_agent: str | None) -> Requester:
    return Requester(node_id, node_name, app=(user_agent or "unknown local app")[:MAX_HINT])


def with_key(node_id: str, node_name: str, key_name: str, user_agent: str | None = None) -> Requester:
    return Requester(node_id, node_name, key=key_name, app=(user_agent or None) and user_agent[:MAX_HINT],
                     authenticated=True)


def relayed_requester(origin_id: str, origin_name: str, headers: Mapping[str, str]) -> Requester:
    """The requester of a relayed request: the origin node from its pinned certificate (the
    caller of this function), the key name and app hint as the origin's relay headers tell them."""
    key = _text(headers.get("X-Pairwise-Requester-Key"))
    app = _text(headers.get("X-Pairwise-Requester"))
    return Requester(origin_id, origin_name, key=key, app=app, authenticated=key is not None)


def requester_text(job: Mapping[str, object]) -> str:
    """A job record's requester as one line, whatever form the record holds it in."""
    return Requester.from_json(job.get("requester"), node_id=str(job.get("origin_node_id") or ""),
                               node_name=str(job.get("origin_node") or "")).label
