"""A plain node loads the dialects, /metrics' text and the test doubles only when they are used, and builds
the validators of the pydantic models it does not read at start (rented declarations, changes, orders)
at their first use (issue 31: idle memory and start-up). A fresh interpreter builds a node and its front
door the way `pairwise serve` does, lists what it imported and built, then asks the lazy routes through a
real socket and lists again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

SCRIPT = r"""
import asyncio, json, sys, tempfile
from pathlib import Path

import aiohttp
from aiohttp.test_utils import TestServer

from app.home import Home
from app.services.api.changes import SettingsChange
from app.services.bootstrap import build_node
from app.services.hf.orders import EndpointOrder
from app.services.rented.change import RentedChange
from app.services.rented.decl import Budget, RentedDecl

LAZY = ("app.services.frontdoor.dialects", "app.services.frontdoor.dialect_stream",
        "app.services.translate.resp_request", "app.services.translate.resp_stream",
        "app.services.translate.anthropic_request", "app.services.translate.anthropic_answer",
        "app.services.metrics.text", "app.simulator", "app.tinymodel", "app.harness", "httpx._main", "rich", "click")


DEFERRED = (RentedDecl, Budget, RentedChange, SettingsChange, EndpointOrder)


def loaded():
    return sorted(m for m in LAZY if sys.modules.get(m) is not None)


def built():
    return sorted(model.__name__ for model in DEFERRED if model.__pydantic_complete__)


async def main():
    node = build_node(Home(Path(tempfile.mkdtemp())))
    server = TestServer(node.frontdoor_app(), host="127.0.0.1")
    await server.start_server()
    report = {"built": loaded(), "counting": node.metrics is not None, "models_at_start": built()}
    token = node.home.control_token()
    control = {"Authorization": "Bearer " + token}
    async with aiohttp.ClientSession() as session:
        # The first change read: its model's validator is built then, and refuses as it always did.
        for body in ({"off_lan": 1}, {"off_lan": "deny", "offlan": "deny"}, {"off_lan": "deny"}):
            async with session.patch(server.make_url("/_pairwise/v1/settings"), json=body, headers=control) as answer:
                report.setdefault("settings_answers", []).append([answer.status, await answer.json()])
        async with session.get(server.make_url("/_pairwise/v1/settings"), headers=control) as answer:
            report["settings_after"] = await answer.json()
        report["models_after_change"] = built()
        async with session.post(server.make_url("/v1/messages"), json={"model": "nothing-here", "max_tokens": 5,
                                "messages": [{"role": "user", "content": "hi"}]}) as answer:
            report["messages_status"] = answer.status
        report["after_messages"] = loaded()
        async with session.get(server.make_url("/metrics"), headers=control) as answer:
            report["metrics_status"] = answer.status
        report["after_metrics"] = loaded()
    await server.close()
    print(json.dumps(report))


asyncio.run(main())
"""


def test_a_plain_node_imports_dialects_and_metrics_text_only_when_asked(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO), "PAIRWISE_MDNS": "off", "PAIRWISE_HOME": str(tmp_path)}
    env.pop("PAIRWISE_METRICS", None)
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, cwd=REPO,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["built"] == [], f"a plain node imported at build: {report['built']}"
    assert report["counting"] is True
    assert report["models_at_start"] == [], f"built at start: {report['models_at_start']}"
    wrong_type, misspelt, right = report["settings_answers"]
    assert wrong_type[0] == 400 and "off_lan" in wrong_type[1]["error"]
    assert misspelt[0] == 400 and "offlan" in misspelt[1]["error"]
    assert right[0] == 200 and report["settings_after"]["off_lan"] == "deny"
    assert report["models_after_change"] == ["SettingsChange"]
    # An Anthropic request for a model nobody serves: answered in Anthropic's shape, so the dialect loaded.
    assert report["messages_status"] == 404
    assert "app.services.frontdoor.dialects" in report["after_messages"]
    assert "app.services.translate.anthropic_request" in report["after_messages"]
    assert "app.services.metrics.text" not in report["after_messages"]
    assert report["metrics_status"] == 200
    assert "app.services.metrics.text" in report["after_metrics"]
    assert not {"app.simulator", "app.tinymodel", "httpx._main", "rich", "click"} & set(report["after_metrics"])
