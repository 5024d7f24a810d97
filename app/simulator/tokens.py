"""Tokens and their permissions, whoami-v2, and the permission rule every route applies.

Rule (hf-api.md §3): a fine-grained token may act on namespace X when a scoped entry for X (or the
token's global list) holds the permission; a `write`/`god` token may act on its user and orgs; a
`read` token manages nothing. A namespace the token's user has no relation to answers 401 (how HF
answers orgs with no access); a known namespace without the permission answers 403.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from app.simulator.httputil import bearer, hex_id, hf_error, unauthorized

ENDPOINTS_WRITE = "inference.endpoints.write"
ENDPOINTS_INFER = "inference.endpoints.infer.write"
SERVERLESS = "inference.serverless.write"
JOBS = "job.write"
ALL_PERMISSIONS = [ENDPOINTS_WRITE, ENDPOINTS_INFER, SERVERLESS, JOBS]
ROLES = ("read", "write", "god", "fineGrained")
TOKEN_CREATED_AT = "2026-01-01T00:00:00.000Z"


@dataclass
class TokenInfo:
    token: str
    user: str
    role: str = "fineGrained"
    scoped: dict[str, list[str]] = field(default_factory=dict)
    global_: list[str] = field(default_factory=list)
    orgs: list[str] = field(default_factory=list)
    display_name: str = "pairwise-sim"

    def namespaces(self) -> set[str]:
        return {self.user, *self.orgs, *self.scoped}

    def allows(self, namespace: str, permission: str) -> bool:
        if self.role in ("write", "god"):
            return namespace in {self.user, *self.orgs}
        if self.role != "fineGrained":
            return False
        return permission in self.scoped.get(namespace, []) or permission in self.global_


class TokenRegistry:
    def __init__(self) -> None:
        self._tokens: dict[str, TokenInfo] = {}

    def add(self, info: TokenInfo) -> None:
        self._tokens[info.token] = info

    def get(self, token: str | None) -> TokenInfo | None:
        return self._tokens.get(token) if token else None

    def register_from_json(self, body: dict[str, Any]) -> TokenInfo:
        token, user = body.get("token"), body.get("user")
        if not isinstance(token, str) or not token or not isinstance(user, str) or not user:
            raise ValueError("token and user are required strings")
        role = body.get("role", "fineGrained")
        if role not in ROLES:
            raise ValueError(f"role must be one of {ROLES}")
        scoped = body.get("scoped") or {}
        global_ = body.get("global") or []
        if not isinstance(scoped, dict) or not all(isinstance(v, list) for v in scoped.values()):
            raise ValueError("scoped must map namespaces to permission lists")
        orgs: list[str] | None = body.get("orgs")
        if orgs is None:  # by default, every scoped namespace other than the user is one of its orgs
            orgs = [ns for ns in scoped if ns != user]
        info = TokenInfo(token=token, user=user, role=role, scoped={k: list(v) for k, v in scoped.items()},
                         global_=list(global_), orgs=list(orgs), display_name=str(body.get("displayName", "sim")))
        self.add(info)
        return info


def check(request: web.Request, registry: TokenRegistry, namespace: str, permission: str
          ) -> TokenInfo | web.Response:
    """The token's info when allowed, else the HF-shaped 401/403 response to send."""
    info = registry.get(bearer(request))
    if info is None:
        return unauthorized()
    if not info.allows(namespace, permission):
        if namespace not in info.namespaces():
            return hf_error(401, f"You don't have access to namespace {namespace}")
        return hf_error(403, f"missing permissions: {permission}")
    return info


def _entity(name: str, kind: str) -> dict[str, Any]:
    return {"_id": hex_id(f"{kind}:{name}"), "type": kind, "name": name}


def whoami(info: TokenInfo) -> dict[str, Any]:
    orgs: list[dict[str, Any]] = [{
        "type": "org", "id": hex_id(f"org:{org}"), "name": org, "fullname": org.replace("-", " ").title(),
        "email": None, "canPay": True, "billingMode": "postpaid", "avatarUrl": f"/avatars/{org}.svg",
        "periodEnd": None, "plan": "team", "roleInOrg": "admin", "securityRestrictions": [],
        "resourceGroups": [],
    } for org in info.orgs]
    access: dict[str, Any] = {"displayName": info.display_name, "role": info.role, "createdAt": TOKEN_CREATED_AT}
    if info.role == "fineGrained":
        access["fineGrained"] = {
            "canReadGatedRepos": True, "global": info.global_,
            "scoped": [{"entity": _entity(ns, "user" if ns == info.user else "org"), "permissions": perms}
                       for ns, perms in info.scoped.items()],
        }
    return {
        "type": "user", "id": hex_id(f"user:{info.user}"), "name": info.user,
        "fullname": info.user.replace("-", " ").title(), "email": f"{info.user}@example.invalid",
        "emailVerified": True, "canPay": True, "billingMode": "postpaid", "isPro": False,
        "avatarUrl": f"/avatars/{info.user}.svg", "periodEnd": None, "orgs": orgs,
        "auth": {"type": "access_token", "accessToken": access, "expiresAt": None},
    }
