"""Notifications: each event the tray announces, from the node's bus to the tray's showMessage."""

from __future__ import annotations

from typing import Any

import openai
from PySide6.QtWidgets import QSystemTrayIcon

from app.services.events import (
    BudgetPaused,
    Event,
    IdlePaused,
    Notice,
    OffLanPrompt,
    PairInviteVoided,
    PeerJoined,
    PeerLeft,
    RentedFailed,
    Woke,
)
from app.simulator import SimulatedHF
from app.ui.notify import NotificationPolicy
from tests.ui.conftest import REPO, until
from tests.ui.helpers import T4, hf_facade, running_gpu, sim_state

BUDGET = BudgetPaused(node="gpu", reason="budget reached: $10.00 of $10.00 per day", spent_usd=10.0, cap_usd=10.0,
                      period="day", provider_pause=True)
EVENTS: list[tuple[Event, str]] = [
    (OffLanPrompt(job_id="j", rented_node="gpu", model="m", requester="app"), "A prompt left your LAN"),
    (BUDGET, "gpu paused: over budget"),
    (IdlePaused(node="gpu", idle_minutes=15), "gpu paused while idle"),
    (Woke(node="gpu", provider_state="initializing"), "Waking gpu"),
    (RentedFailed(node="gpu", provider_state="failed", message="CUDA out of memory"), "gpu failed"),
    (PeerJoined(node="laptop", node_id="x", address="10.0.0.2:14330"), "laptop joined your cluster"),
    (PeerLeft(node="laptop", node_id="x", reason="no answer"), "laptop left your cluster"),
    (PairInviteVoided(voided_by=["192.168.1.9"]), "Pairing invite voided"),
]


def prompt(node: str, model: str = "m", requester: str = "app") -> OffLanPrompt:
    return OffLanPrompt(job_id="j", rented_node=node, model=model, requester=requester)


def test_off_lan_prompts_first_per_node_then_summarised() -> None:
    policy = NotificationPolicy()
    first = policy.on_event(prompt("gpu", "llama", "zed (unauthenticated)"))
    assert first is not None and first.title == "A prompt left your LAN"
    assert "zed (unauthenticated) asked llama; it was sent to gpu (Rented · off-LAN)" in first.message
    assert policy.on_event(prompt("gpu")) is None
    assert policy.on_event(prompt("gpu")) is None
    other = policy.on_event(prompt("other"))
    assert other is not None  # a different rented node is announced once too
    assert policy.on_event(prompt("other")) is None
    summary = policy.summary()
    assert summary is not None and summary.title == "3 more prompts left your LAN"
    assert summary.message == "Sent to rented nodes: gpu ×2, other ×1."
    assert policy.summary() is None
    assert policy.on_event(prompt("gpu")) is None  # still summarised this session


def test_a_budget_pause_is_one_event_and_one_warning() -> None:
    policy = NotificationPolicy()
    note = policy.on_event(BUDGET)
    assert note is not None and note.level == "warning" and note.node == "gpu"
    assert note.message == ("It is paused on its provider so it stops billing. Budget reached: $10.00 of $10.00 per "
                            "day. It can be used again at 00:00 UTC, when the day's budget starts over. Click to "
                            "raise the budget (or tray menu → Raise budget…).")
    unmanaged = policy.on_event(BudgetPaused(node="api", reason="budget reached", spent_usd=1, cap_usd=1,
                                             period="month", provider_pause=False))
    assert unmanaged is not None and unmanaged.message.startswith("It is no longer routed to.")
    assert "when the month's budget starts over" in unmanaged.message


def test_idle_pause_says_how_long() -> None:
    note = NotificationPolicy().on_event(IdlePaused(node="gpu", idle_minutes=15))
    assert note is not None and note.message == "No requests for 15 min; paused so it stops billing."


async def test_each_event_raises_its_notification(make_app: Any) -> None:
    app = await make_app(summary_interval_s=0.1)
    for event, _title in EVENTS:
        app.node.bus.publish(event)
    app.node.bus.publish(Notice(title="Something to know", message="as is", level="info"))
    assert app.sent.titles() == [title for _e, title in EVENTS] + ["Something to know"]
    failed = app.sent[4]
    assert failed.message == "CUDA out of memory" and failed.level == "error"
    assert [n.title for n in app.notifier.attention] == ["gpu paused: over budget", "gpu failed",
                                                         "Pairing invite voided"]
    app.node.bus.publish(prompt("gpu"))
    app.node.bus.publish(prompt("gpu"))
    await until(lambda: len(app.sent) == len(EVENTS) + 2, what="the off-LAN summary")
    assert app.sent[-1].title == "2 more prompts left your LAN"


def _summarised(sent: Any) -> int:
    """How many prompts the off-LAN summaries sent so far counted."""
    return sum(int(n.title.split()[0]) for n in sent if n.kind == "off_lan_summary")


async def test_real_off_lan_prompts_idle_pause_and_wake(sim: SimulatedHF, make_app: Any) -> None:
    app = await make_app(summary_interval_s=0.2)
    await running_gpu(app, sim, idle_pause_min=0.02, wake_on_request=True)  # idle after 1.2 s
    client = openai.AsyncOpenAI(base_url=f"http://{app.node.frontdoor_address}/v1", api_key="unused", max_retries=0)
    messages: Any = [{"role": "user", "content": "hello"}]
    for _ in range(3):
        answer = await client.chat.completions.create(model=REPO, messages=messages)
        assert answer.choices[0].message.content
    await until(lambda: "A prompt left your LAN" in app.sent.titles(), what="the first off-LAN notice")
    # The two later prompts are summarised: in one notice when both came within a summary interval, in
    # two ("1 more prompt" each) when a loaded machine spaced them further apart; never lost, never more.
    await until(lambda: _summarised(app.sent) >= 2, what="the summary")
    assert _summarised(app.sent) == 2, app.sent.titles()
    assert app.sent.titles().count("A prompt left your LAN") == 1

    await until(lambda: sim_state(sim, "gpu") == "paused", what="the idle pause")
    await until(lambda: "gpu paused while idle" in app.sent.titles(), what="the idle-pause notice")
    idle = next(n for n in app.sent if n.title == "gpu paused while idle")
    assert idle.message == "No requests for 0.02 min; paused so it stops billing."
    answer = await client.chat.completions.create(model=REPO, messages=messages)  # wakes it
    assert answer.choices[0].message.content
    assert "Waking gpu" in app.sent.titles()
    await client.close()


async def test_real_budget_pause(sim: SimulatedHF, make_app: Any) -> None:
    app = await make_app()
    await hf_facade(app).login(sim.demo_token)
    # $0.50/h: the cap is under three billed minutes (0.2 s each), reached while it starts or soon after.
    await app.facade.rented_create({"name": "gpu", "model": REPO, **T4, "budget": {"usd_per_day": 0.02}})
    await until(lambda: sim_state(sim, "gpu") == "paused", what="the budget pause")
    await until(lambda: "gpu paused: over budget" in app.sent.titles(), what="the budget notice")
    note = next(n for n in app.sent if "over budget" in n.title)
    assert "$0.02" in note.message and note.level == "warning"
    assert [n.title for n in app.sent if "budget" in n.title] == ["gpu paused: over budget"]  # one fact, one notice
    await until(lambda: app.tray.state == "attention", what="attention")


async def test_notifications_go_to_the_tray_icon(make_app: Any, monkeypatch: Any) -> None:
    shown: list[tuple[Any, ...]] = []
    app = await make_app(notify_sink=None)
    monkeypatch.setattr(app.tray.icon, "showMessage", lambda *args: shown.append(args))
    app.node.bus.publish(RentedFailed(node="gpu", provider_state="failed", message="CUDA out of memory"))
    title, message, icon, msecs = shown[0]
    assert (title, message) == ("gpu failed", "CUDA out of memory")
    assert icon == QSystemTrayIcon.MessageIcon.Critical and msecs > 0


def test_service_words_reach_a_person_in_plain_words() -> None:
    from app.services.api import glossary
    from app.ui.tray_model import attention_reasons

    assert glossary.plain("drifted: endpoint a/b was deleted outside Pairwise") == \
        "changed outside Pairwise: endpoint a/b was deleted outside Pairwise"
    assert glossary.plain("laptop · curl/8.5 (unauthenticated)") == "laptop · curl/8.5 (no key)"
    assert glossary.plain("routing policy is 'when-no-local-node'") == \
        "routing policy is 'only when no machine on your LAN has the model'"
    row: Any = {"name": "gpu", "provider_unreachable": None, "state": "eligible", "credential_error": None,
                "reason": None, "warning": "drifted: model changed on Hugging Face"}
    assert attention_reasons([row]) == ["gpu: changed outside Pairwise: model changed on Hugging Face"]
