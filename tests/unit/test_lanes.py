"""The lanes are found from what a test reaches: the suite's own tests, collected afresh, land where
they belong without a marker written by hand (tests/support/lanes.py)."""

from __future__ import annotations

import pytest

from tests.support.lanes import TESTS, left_out

# test id -> the kinds it must have; an empty set is the fast lane.
EXPECTED: dict[str, set[str]] = {
    # a fixture that starts node and engine processes (tiny_factory, node_factory)
    "node/test_clients.py::test_openai_client_lists_models_once": {"processes"},
    # NodeProc reached through a @contextmanager helper and a module-scoped fixture
    "cluster/test_cluster_failover.py::test_least_loaded_owner_in_the_cluster_wins": {"processes"},
    # a marker written by hand, plus the processes of its fixtures
    "node/test_engine_credential.py::test_engine_token_stored_in_keyring_and_used": {"processes", "keyring"},
    # the in-process simulated Hugging Face
    "hf/test_client.py::test_wrong_token_is_an_auth_error": {"simulator"},
    # a tray module named in the test body
    "unit/test_events.py::test_each_kind_has_a_rendering_in_the_tray": {"qt"},
    # pure functions
    "unit/test_translate.py::test_canonical_names": set(),
    "unit/test_events.py::test_an_unknown_kind_is_not_guessed": set(),
}


def test_each_test_gets_the_kinds_it_reaches_and_slow_with_any(pytester: pytest.Pytester) -> None:
    items, _ = pytester.inline_genitems(*(str(TESTS / test) for test in EXPECTED), "-p", "no:cacheprovider",
                                        f"--rootdir={TESTS.parent}")
    kinds = {"processes", "simulator", "qt", "keyring", "llama"}
    seen: set[str] = set()
    for item in items:
        test = next(t for t in EXPECTED if item.nodeid.removeprefix("tests/").startswith(t))
        seen.add(test)
        marks = {mark.name for mark in item.iter_markers()}
        assert marks & kinds == EXPECTED[test], item.nodeid
        assert ("slow" in marks) == bool(EXPECTED[test]), item.nodeid
    assert seen == set(EXPECTED)


@pytest.mark.parametrize(("expression", "imported"), [("not slow", False), ("not qt", False), ("qt", True),
                                                      ("slow and not keyring", True), ("", True)])
def test_the_trays_tests_are_not_even_imported_when_the_lane_leaves_out_qt(
        pytester: pytest.Pytester, expression: str, imported: bool) -> None:
    config = pytester.parseconfig(*(["-m", expression] if expression else []))
    assert left_out(TESTS / "ui" / "test_packaging.py", config) is not imported
    assert left_out(TESTS / "unit" / "test_lanes.py", config) is False
