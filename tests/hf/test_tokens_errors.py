"""Decisions without the network: token permissions per namespace, and reading HF's error shapes."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from app.services.errors import RefusedError
from app.services.hf.errors import HfAuthError, HfError, HfUnavailable, error_for, hf_message
from app.services.hf.tokens import CALL, MANAGE, analyse, require


def whoami(role: str, scoped: dict[str, list[str]] | None = None, orgs: list[str] | None = None,
           global_: list[str] | None = None) -> dict[str, Any]:
    token: dict[str, Any] = {"displayName": "desktop", "role": role}
    if role == "fineGrained":
        token["fineGrained"] = {"global": global_ or [], "scoped": [
            {"entity": {"_id": "x", "type": "user" if ns == "alice" else "org", "name": ns}, "permissions": perms}
            for ns, perms in (scoped or {}).items()]}
    return {"type": "user", "name": "alice", "orgs": [{"name": o} for o in orgs or []],
            "auth": {"type": "access_token", "accessToken": token}}


def test_fine_grained_scopes_decide_per_namespace() -> None:
    report = analyse(whoami("fineGrained", {"alice": [MANAGE, CALL], "acme": [CALL]}, orgs=["acme", "other"]))
    rows = {n.name: (n.can_manage, n.can_call, n.missing) for n in report.namespaces}
    assert rows == {"alice": (True, True, []), "acme": (False, True, [MANAGE]), "other": (False, False, [MANAGE, CALL])}
    assert report.usable and report.token_name == "desktop"
    with pytest.raises(RefusedError) as caught:
        require(report, "acme", MANAGE)
    assert "inference.endpoints.write" in caught.value.message and "acme" in caught.value.message
    require(report, "acme", CALL)
    with pytest.raises(RefusedError):
        require(report, "nobody", CALL)


def test_global_permissions_and_roles() -> None:
    assert analyse(whoami("fineGrained", global_=[CALL])).namespaces[0].missing == [MANAGE]
    assert analyse(whoami("write", orgs=["acme"])).usable
    assert all(n.can_manage for n in analyse(whoami("write", orgs=["acme"])).namespaces)
    read = analyse(whoami("read"))
    assert not read.usable and read.namespaces[0].missing == [MANAGE, CALL]
    oauth = analyse({"name": "alice", "auth": {"type": "oauth"}})  # scopes unknown: HF's auth-check decides
    assert oauth.role == "unknown" and oauth.usable


def response(status: int, **kw: Any) -> httpx.Response:
    return httpx.Response(status, request=httpx.Request("GET", "https://hf.invalid/x"), **kw)


@pytest.mark.parametrize("kw,expected", [
    ({"headers": {"X-Error-Message": "Invalid credentials in Authorization header"}, "json": {"error": "x"}},
     "Invalid credentials in Authorization header"),
    ({"json": {"error": "Endpoint name already exists"}}, "Endpoint name already exists"),
    ({"json": {"error": ["a", "b"]}}, "a; b"),
    ({"json": {"error": "x", "error_description": "y"}}, "x: y"),
    ({"json": {"errors": [{"message": "first"}, {"message": "second"}]}}, "first; second"),
    ({"text": "Failed to parse the request body as JSON: model.task"}, "Failed to parse the request body as JSON: model.task"),
    ({"text": "<!DOCTYPE html><html>bad gateway</html>"}, "Bad Gateway"),
])
def test_hf_message_reads_every_shape(kw: dict[str, Any], expected: str) -> None:
    status = 502 if "html" in str(kw) else 400
    assert hf_message(response(status, **kw)) == expected


def test_error_classes_by_status() -> None:
    assert isinstance(error_for(response(401, json={"error": "no"}), "x"), HfAuthError)
    assert isinstance(error_for(response(503, json={"error": "no"}), "x"), HfUnavailable)
    plain = error_for(response(409, json={"error": "Endpoint name already exists"}), "creating endpoint a/b")
    assert type(plain) is HfError and plain.status == 400
    assert plain.message == "creating endpoint a/b: Hugging Face answered 409: Endpoint name already exists"
