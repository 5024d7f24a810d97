"""One spelling of a rented node's settings, through a real node: the CLI's flags and the control route's
nested body land the same cap; a misspelt or older spelling is refused by name and nothing changes; a
body mixing a good and a bad field is refused whole; "off" removes a cap."""

from __future__ import annotations

from typing import Any

import pytest

from app.control_client import ControlClient
from app.harness import NodeProc
from app.home import Home
from app.services.errors import ConfigError


def rented_row(node: NodeProc, name: str = "gpu") -> dict[str, Any]:
    [row] = [r for r in node.cli_json("rented", "list") if r["name"] == name]
    return row


def test_cli_and_route_land_the_same_cap_and_a_misspelt_one_changes_nothing(
        node_factory: type[NodeProc], tls_tiny_factory: Any) -> None:
    tiny = tls_tiny_factory("--model", "rented-model")
    node = node_factory("A").start()
    node.cli_json("rented", "attach", "gpu", "--url", tiny.url, "--ca-file", tiny.ca_file, "--price-per-hour", "0.8")
    client = ControlClient(Home(node.home))

    node.cli("rented", "set", "gpu", "--budget-usd-per-day", "5", "--idle-pause-min", "15", "--managed", "on")
    by_flag = rented_row(node)
    assert by_flag["budget"] == {"usd_per_day": 5.0, "usd_per_month": None}
    assert by_flag["lifecycle"]["idle_pause_min"] == 15.0

    by_route = client.call("PATCH", "/rented/gpu", {"changes": {"budget": {"usd_per_day": 7.5}}})
    assert by_route["budget"] == {"usd_per_day": 7.5, "usd_per_month": None}
    assert rented_row(node)["budget"] == by_route["budget"]
    assert rented_row(node)["lifecycle"]["idle_pause_min"] == 15.0  # a left-out setting is left

    before = rented_row(node)
    refusals = [
        ({"budget": {"usd_per_dai": 1}}, "budget.usd_per_dai: Extra inputs are not permitted"),
        ({"budget.usd_per_day": 1}, """budget.usd_per_day: spelt {"budget": {"usd_per_day": ...}} now"""),
        ({"usd_per_day": 1}, """usd_per_day: spelt {"budget": {"usd_per_day": ...}} now"""),
        # A good field next to a bad one: refused whole, the good one is not applied either.
        ({"share_with_cluster": True, "budget": {"usd_per_month": 20, "usd_per_dya": 1}},
         "budget.usd_per_dya: Extra inputs are not permitted"),
        ({"budget": {"usd_per_month": 20}, "lifecycle": {"idle_pause_min": -3}},
         'lifecycle.idle_pause_min: Input should be greater than 0, or "off" to remove it'),
    ]
    for body, named in refusals:
        with pytest.raises(ConfigError) as refused:
            client.call("PATCH", "/rented/gpu", {"changes": body})
        assert (refused.value.status, refused.value.message) == (400, named)
        assert rented_row(node) == before, body  # nothing changed

    bad = node.cli("rented", "set", "gpu", "--budget-usd-per-day", "of", check=False)
    assert bad.returncode == 2 and "'of' is not a number (or 'off')" in bad.stderr
    assert rented_row(node) == before

    node.cli("rented", "set", "gpu", "--budget-usd-per-day", "off", "--budget-usd-per-month", "20")
    assert rented_row(node)["budget"] == {"usd_per_day": None, "usd_per_month": 20.0}
    cleared = client.call("PATCH", "/rented/gpu", {"changes": {"budget": {"usd_per_month": "off"},
                                                                "lifecycle": {"idle_pause_min": "off"}}})
    assert cleared["budget"] == {"usd_per_day": None, "usd_per_month": None}
    assert cleared["lifecycle"]["idle_pause_min"] is None and cleared["lifecycle"]["managed"] is True
