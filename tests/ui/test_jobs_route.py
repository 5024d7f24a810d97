"""The Jobs view says why each request went where it went: the job's route reason, in plain words,
with the reason as recorded in the cell's tooltip."""

from __future__ import annotations

from typing import Any

import openai

from app.ui.route_words import plain_route
from app.ui.views.jobs import COLUMNS, WHY_COLUMN
from tests.ui.conftest import until

WINDOW = 4096


async def test_a_routed_job_shows_its_reason_in_plain_words(make_app: Any, tiny_factory: Any) -> None:
    app = await make_app()
    tiny = tiny_factory("--api", "openai", "--model", "tiny", "--context-window", str(WINDOW))
    await app.facade.engine_add({"name": "local", "url": tiny.url, "api": "openai"}, None)
    await until(lambda: any(e.get("models") for e in app.facade.engines()), what="the engine's models")
    client = openai.AsyncOpenAI(base_url=f"http://{app.node.frontdoor_address}/v1", api_key="unused", max_retries=0)
    await client.chat.completions.create(model="tiny", messages=[{"role": "user", "content": "hello"}], max_tokens=8)
    await client.close()
    job = await until(lambda: next((j for j in app.facade.jobs() if j.get("route")), None), what="the routed job")
    assert f"local window {WINDOW}" in job["route"] and "only copy: local" in job["route"]

    app.open_window()
    app.window.tabs.setCurrentWidget(app.window.jobs)
    jobs = app.window.jobs
    rows = await until(lambda: (jobs.refresh(), jobs.cells(jobs.history))[1], what="the job in the history")
    why = rows[0][WHY_COLUMN]
    assert COLUMNS[WHY_COLUMN] == "Why here"
    assert why.startswith("needs about ") and f"local holds {WINDOW}" in why
    assert "the only copy of the model: local" in why
    assert "|" not in why and "fit:" not in why  # plain words, not the record's code
    tip = jobs.history.item(0, WHY_COLUMN).toolTip()
    assert job["route"] in tip and why in tip


def test_route_reasons_in_plain_words() -> None:
    route = ("fit: ~9000 tokens (8000 prompt + 1000 for the answer), gpu window 32768; too small: local "
             "(window 4096) | policy: when-no-local-node (no local copy holds it)")
    assert plain_route(route) == ("needs about 9000 tokens, gpu holds 32768 (too small: local holds only 4096); "
                                  "rented GPU, used only when no machine on your LAN has the model: "
                                  "no local copy holds it")
    assert plain_route("fit: ~12 tokens, peer window unknown | load: 1 of 4 in flight on peer | failover: "
                       "a refused it as too long (x)") == (
        "needs about 12 tokens, peer's window is not known; least busy copy: peer had 1 of 4 requests running; "
        "after another copy failed: a refused it as too long (x)")
    assert plain_route("affinity: the conversation's last turn was served here").startswith("same conversation")
    assert plain_route(None) == "" and plain_route("") == ""
