"""The service API's rows carry what a view needs: whether a rented node bills, and what can be done."""

from __future__ import annotations

from typing import Any

import pytest

from app.services.api.rented import with_actions

MANAGED = {"lifecycle": {"managed": True}, "price_per_hour": 0.8}
NOT_HF = {"lifecycle": {"managed": False}, "hf_state": None}


@pytest.mark.parametrize(("row", "billing", "pausable", "resumable"), [
    ({**MANAGED, "hf_state": "running", "state": "eligible"}, True, True, False),
    ({**MANAGED, "hf_state": "initializing", "state": "starting"}, True, True, False),
    ({**MANAGED, "hf_state": "scaledToZero", "state": "cold"}, False, True, False),
    ({**MANAGED, "hf_state": "paused", "state": "paused"}, False, False, True),
    ({**MANAGED, "hf_state": "failed", "state": "unhealthy"}, False, False, True),
    ({**MANAGED, "lifecycle": {"managed": False}, "hf_state": "running", "state": "eligible"}, True, False, False),
    # Not an HF endpoint (hf_state None, as local_row writes it): an eligible node with a price is taken
    # to bill; nothing to pause.
    ({**NOT_HF, "state": "eligible", "price_per_hour": 1.2}, True, False, False),
    ({**NOT_HF, "state": "eligible", "price_per_hour": None}, False, False, False),
    ({**NOT_HF, "state": "ineligible", "price_per_hour": 1.2}, False, False, False),
])
def test_rented_rows_say_billing_pausable_resumable(row: dict[str, Any], billing: bool, pausable: bool,
                                                     resumable: bool) -> None:
    out = with_actions(row)
    assert (out["billing"], out["pausable"], out["resumable"]) == (billing, pausable, resumable)
    assert {k: out[k] for k in row} == row  # the row itself is unchanged
