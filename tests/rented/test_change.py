"""The one change model of a rented node: spelt as the declaration nests it, a misspelt cap refused by
name, "off" the one way to remove a setting, and left-out fields left as they are."""

from __future__ import annotations

import pytest

from app.services.errors import ConfigError
from app.services.rented.change import NodeSettings, RentedChange, parse_given
from app.services.rented.decl import validate_decl

DECL = {"name": "gpu", "url": "https://gpu.example.com", "budget": {"usd_per_day": 5, "usd_per_month": 50},
        "lifecycle": {"managed": True, "idle_pause_min": 15},
        "requesters": {"usd_per_day": {"laptop-b": 2, "*": 5}}}


def merged(body: dict[str, object]) -> dict[str, object]:
    return validate_decl(parse_given(RentedChange, body).merged(validate_decl(DECL).model_dump(mode="json")))\
        .model_dump(mode="json")


def test_a_left_out_setting_is_left_and_null_leaves_it_too() -> None:
    after = merged({"budget": {"usd_per_month": 80}})
    assert after["budget"] == {"usd_per_day": 5, "usd_per_month": 80}
    assert merged({"budget": {"usd_per_day": None}})["budget"] == {"usd_per_day": 5, "usd_per_month": 50}
    assert merged({})["lifecycle"]["idle_pause_min"] == 15


def test_off_removes_a_cap_the_idle_pause_and_a_peers_entry() -> None:
    after = merged({"budget": {"usd_per_day": "off"}, "lifecycle": {"idle_pause_min": "off"},
                    "requesters": {"usd_per_day": {"laptop-b": "off", "desk": 1}}})
    assert after["budget"] == {"usd_per_day": None, "usd_per_month": 50}
    assert after["lifecycle"]["idle_pause_min"] is None and after["lifecycle"]["managed"] is True
    assert after["requesters"]["usd_per_day"] == {"*": 5, "desk": 1}
    assert merged({"budget": {"usd_per_day": 0}})["budget"]["usd_per_day"] == 0  # a $0 cap is a cap


@pytest.mark.parametrize(("body", "named"), [
    ({"budget": {"usd_per_dai": 5}}, "budget.usd_per_dai: Extra inputs are not permitted"),
    ({"budget": {"usd_per_day": -1}}, "budget.usd_per_day: Input should be greater than or equal to 0"),
    ({"budget": {"usd_per_day": "5"}}, "budget.usd_per_day: Input should be a valid number"),
    ({"budget": {"usd_per_day": "of"}}, 'budget.usd_per_day: Input should be a valid number, or "off" to remove it'),
    ({"budget.usd_per_day": 5}, """budget.usd_per_day: spelt {"budget": {"usd_per_day": ...}} now"""),
    ({"usd_per_day": 5}, """usd_per_day: spelt {"budget": {"usd_per_day": ...}} now"""),
    ({"requesters": {"usd_per_day": {"laptop-b": -2}}}, "requesters.usd_per_day.laptop-b: Input should be greater"),
    ({"routing": {"use": "sometimes"}}, "routing.use: Input should be 'when-no-local-node'"),
    ({"share_with_cluster": "yes"}, "share_with_cluster: Input should be a valid boolean"),
])
def test_a_wrong_field_is_refused_by_name(body: dict[str, object], named: str) -> None:
    with pytest.raises(ConfigError) as refused:
        parse_given(RentedChange, body)
    assert refused.value.status == 400 and named in refused.value.message


def test_a_creates_settings_nest_the_same_way() -> None:
    settings = parse_given(NodeSettings, {"budget": {"usd_per_day": 2, "usd_per_month": "off"},
                                          "lifecycle": {"idle_pause_min": 10}, "routing": {"use": "prefer"}})
    assert settings.declared() == {"budget": {"usd_per_day": 2.0, "usd_per_month": None},
                                   "lifecycle": {"idle_pause_min": 10.0}, "routing": {"use": "prefer"}}
    with pytest.raises(ConfigError, match="budget.usd_per_dya"):
        parse_given(NodeSettings, {"budget": {"usd_per_dya": 2}})
    with pytest.raises(ConfigError, match="gpu: Extra inputs"):  # a node's own field is no create setting
        parse_given(NodeSettings, {"gpu": "x"})
