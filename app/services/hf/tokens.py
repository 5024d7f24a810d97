"""What a Hugging Face token may do, namespace by namespace (hf-api.md §3).

Rule: for namespace X, a fine-grained token needs a `scoped[]` entry whose entity is X listing the
permission (or the permission in its `global` list); a `write`/`god` token is unscoped and may act on
its user and orgs; a `read` token manages nothing (inferred, so HF's auth-check has the last word).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from app.services.errors import RefusedError

MANAGE = "inference.endpoints.write"  # create, update, pause, resume, delete
CALL = "inference.endpoints.infer.write"  # call an endpoint's URL
JOBS = "job.write"
SERVERLESS = "inference.serverless.write"
TOKEN_KEY = "hf:token"  # SecretStore key of the node's Hugging Face token
WHAT = {MANAGE: "manage endpoints", CALL: "call endpoints"}


@dataclass
class NamespaceAccess:
    name: str
    kind: str  # user | org
    can_manage: bool
    can_call: bool
    missing: list[str] = field(default_factory=list)  # permission names, for the message

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class TokenReport:
    user: str
    role: str
    token_name: str | None
    namespaces: list[NamespaceAccess]

    def access(self, namespace: str) -> NamespaceAccess | None:
        return next((n for n in self.namespaces if n.name == namespace), None)

    @property
    def usable(self) -> bool:
        return any(n.can_manage or n.can_call for n in self.namespaces)

    def warnings(self) -> list[str]:
        return [missing_message(n.name, perm) for n in self.namespaces for perm in n.missing]

    def to_json(self) -> dict[str, Any]:
        return {"user": self.user, "role": self.role, "token_name": self.token_name,
                "namespaces": [n.to_json() for n in self.namespaces], "warnings": self.warnings()}


def missing_message(namespace: str, permission: str) -> str:
    return (f"the token cannot {WHAT.get(permission, 'do this')} in {namespace}: it lacks the permission "
            f"{permission} (edit the token's permissions at https://huggingface.co/settings/tokens)")


def _scoped_permissions(access_token: dict[str, Any]) -> tuple[dict[str, set[str]], set[str]]:
    raw = access_token.get("fineGrained")
    fine: dict[str, Any] = raw if isinstance(raw, dict) else {}
    scoped: dict[str, set[str]] = {}
    for entry in fine.get("scoped") or []:
        entity = entry.get("entity") if isinstance(entry, dict) else None
        if isinstance(entity, dict) and entity.get("type") in ("user", "org") and isinstance(entity.get("name"), str):
            scoped.setdefault(entity["name"], set()).update(p for p in entry.get("permissions") or []
                                                            if isinstance(p, str))
    global_ = {p for p in fine.get("global") or [] if isinstance(p, str)}
    return scoped, global_


def analyse(whoami: dict[str, Any]) -> TokenReport:
    """Namespaces the token's user can act in, from whoami-v2 alone (no network)."""
    user = str(whoami.get("name") or "")
    orgs = [str(o["name"]) for o in whoami.get("orgs") or [] if isinstance(o, dict) and o.get("name")]
    raw_auth = whoami.get("auth")
    auth: dict[str, Any] = raw_auth if isinstance(raw_auth, dict) else {}
    raw_token = auth.get("accessToken")
    access_token: dict[str, Any] | None = raw_token if isinstance(raw_token, dict) else None
    # OAuth tokens carry no accessToken; their scopes are unknown here, so auth-check decides.
    role = str(access_token.get("role")) if access_token else "unknown"
    scoped, global_ = _scoped_permissions(access_token or {})
    names = [(user, "user")] + [(o, "org") for o in orgs]
    names += [(n, "org") for n in scoped if n not in {user, *orgs}]
    found = []
    for name, kind in names:
        def allowed(permission: str, ns: str = name) -> bool:
            if role in ("write", "god", "unknown"):
                return True
            if role != "fineGrained":
                return False
            return permission in scoped.get(ns, set()) or permission in global_

        missing = [p for p in (MANAGE, CALL) if not allowed(p)]
        found.append(NamespaceAccess(name, kind, MANAGE not in missing, CALL not in missing, missing))
    token_name = access_token.get("displayName") if access_token else None
    return TokenReport(user, role, token_name, found)


def require(report: TokenReport, namespace: str, permission: str) -> None:
    """Refuses, naming the permission, when the token cannot do ``permission`` in ``namespace``."""
    access = report.access(namespace)
    if access is None:
        raise RefusedError(f"the Hugging Face token of {report.user} has no access to namespace {namespace}",
                           title="Hugging Face token lacks access")
    if permission in access.missing:
        raise RefusedError(missing_message(namespace, permission), title="Hugging Face token lacks a permission")
