"""The glossary: every state a rented node can be in reads in plain words, money in one format."""

from __future__ import annotations

import datetime as dt

import pytest

from app.services.api import glossary
from app.services.hf.words import COMPANY, LABELS

# Each row as the service API makes it: ``billing`` is its provider's word (api/rented.with_actions).
RUNNING = {"kind": "rented", "provider": "huggingface-endpoint", "state": "eligible", "provider_state": "running",
           "price_per_hour": 1.8, "billing": True}


@pytest.fixture(autouse=True)
def hugging_face_words() -> None:
    for provider, label in LABELS.items():  # as registering Hugging Face's part of the API names them
        glossary.name_provider(provider, label, COMPANY)


@pytest.mark.parametrize(("usd", "text"), [
    (None, "–"), (0, "$0.00"), (0.004, "<$0.01"), (0.005, "$0.01"), (0.0667, "$0.07"), (0.42, "$0.42"),
    (5, "$5.00"), (1234.5, "$1234.50"), (-0.5, "-$0.50"),
])
def test_money_is_one_format(usd: float | None, text: str) -> None:
    assert glossary.money(usd) == text


def test_rates_caps_and_plurals() -> None:
    assert glossary.per_hour(1.8) == "$1.80/h" and glossary.per_hour(None) == "price unknown"
    assert glossary.cap(5, "day") == "$5.00/day" and glossary.cap(None, "month") == "no cap"
    assert glossary.plural(1, "model") == "1 model" and glossary.plural(0, "model") == "0 models"
    assert glossary.plural(2, "GPU") == "2 GPUs"


def test_caps_reset_at_utc_midnight_and_the_first_of_the_month() -> None:
    late = dt.datetime(2026, 12, 31, 23, 30, tzinfo=dt.UTC)
    assert glossary.cap_resets_at("day", late) == dt.datetime(2027, 1, 1, tzinfo=dt.UTC)
    assert glossary.cap_resets_at("month", late) == dt.datetime(2027, 1, 1, tzinfo=dt.UTC)
    assert glossary.resets_text("day", late) == "00:00 UTC"
    assert glossary.resets_text("month", dt.datetime(2026, 11, 30, tzinfo=dt.UTC)) == "1 Dec 00:00 UTC"


@pytest.mark.parametrize(("row", "words"), [
    (RUNNING, "Ready"),
    ({**RUNNING, "state": "starting", "provider_state": "initializing"}, "Starting (billing)"),
    ({**RUNNING, "state": "starting", "provider_state": "pending", "billing": False}, "Starting (waiting for a GPU)"),
    ({**RUNNING, "state": "cold", "provider_state": "scaledToZero", "billing": False},
     "Asleep, wakes on request (no charge)"),
    ({**RUNNING, "state": "paused", "provider_state": "paused", "billing": False}, "Paused (no charge)"),
    ({**RUNNING, "state": "paused", "provider_state": "paused", "billing": False, "lifecycle": {"wake_on_request": True}},
     "Paused, wakes on request (no charge)"),
    ({**RUNNING, "state": "unhealthy", "provider_state": "failed", "billing": False}, "Failed"),
    ({**RUNNING, "state": "ineligible", "reason": "budget reached: $0.45 of $0.45 per day"},
     "Over budget (paused until 00:00 UTC)"),
    ({**RUNNING, "state": "ineligible", "reason": "drifted: endpoint a/b changed outside Pairwise: x"},
     "Changed on Hugging Face (not used)"),
    ({**RUNNING, "state": "ineligible", "reason": "credential refused: 401"}, "Token refused (not used)"),
    ({**RUNNING, "provider_unreachable": "timed out"}, "Can't reach Hugging Face (may be billing)"),
    ({**RUNNING, "provider": "my-cloud", "provider_unreachable": "timed out"}, "Can't reach its provider (may be billing)"),
])
def test_every_state_in_plain_words(row: dict, words: str) -> None:
    assert glossary.rented_state(row) == words
    for internal in ("eligible", "scaledToZero", "when-no-local-node", "drifted", "sponsored"):
        assert internal not in glossary.rented_state(row)


def test_what_bills_is_summed_for_the_title() -> None:
    paused = {**RUNNING, "name": "b", "state": "paused", "provider_state": "paused", "billing": False,
              "cost": {"day_usd": 0.1}}
    rows = [{**RUNNING, "name": "a", "cost": {"day_usd": 0.32}}, paused]
    assert glossary.billing_summary(rows) == "1 GPU billing · $1.80/h · $0.42 today"
    assert glossary.billing_summary([paused]) is None


def test_resume_over_budget_is_refused_with_the_way_on() -> None:
    over = {**RUNNING, "state": "ineligible", "reason": "budget reached: $1.00 of $1.00 per day",
            "budget": {"usd_per_day": 1.0}}
    refusal = glossary.resume_refusal(over)
    assert refusal is not None and "$1.00/day" in refusal and "00:00 UTC" in refusal and "Raise" in refusal
    assert glossary.resume_refusal(RUNNING) is None


def test_policies_in_words() -> None:
    assert glossary.policy("when-no-local-node") == "Used only when no machine on your LAN has the model"
    assert glossary.policy("prefer").startswith("Used first")
