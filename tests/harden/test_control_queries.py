"""Bad control API query parameters are a 400 naming the parameter, not a 500 (issue 14, row 7)."""

from __future__ import annotations

import httpx

from app.harness import NodeProc


def test_bad_query_parameters_are_refused_by_name(node_factory: type[NodeProc]) -> None:
    node = node_factory("q").start()
    token = (node.home / "control_token").read_text().strip()

    def get(query: str) -> httpx.Response:
        return httpx.get(f"{node.url}/_pairwise/v1/jobs?{query}", headers={"Authorization": f"Bearer {token}"},
                         timeout=30)

    for query, named in (("limit=abc", "'limit' must be a whole number"), ("limit=0", "'limit' must be from 1"),
                         ("limit=99999999999999999999", "'limit' must be from 1"),
                         ("active=maybe", "'active' must be true or false")):
        answer = get(query)
        assert answer.status_code == 400, (query, answer.text)
        assert named in answer.json()["error"] and answer.json()["title"] == "Bad query parameter"
    assert get("limit=5&active=true").status_code == 200
    assert get("").json() == {"jobs": []}
