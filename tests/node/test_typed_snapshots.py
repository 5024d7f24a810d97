"""The service API's snapshots are the TypedDicts it declares (app/services/api/snapshots.py): what a
real node sends over the control API has every required key of its type, and no key the type does
not name, so the tray, the CLI's ``--json`` and mypy read the same shapes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import NotRequired, get_origin, get_type_hints

import openai
import pytest

from app.control_client import ControlClient
from app.harness import NodeProc, TinyProc
from app.home import Home
from app.services.api.snapshots import EngineRow, InviteStatus, JobRow, KeyListRow, NewKeyRow, RequesterRow
from app.services.errors import ConfigError
from app.services.platform.hardware import HardwareFacts


def keys_of(row: Mapping[str, object], typed: type) -> None:
    # From the hints, not __required_keys__: under postponed annotations that cannot see NotRequired.
    hints = get_type_hints(typed, include_extras=True)
    allowed = set(hints)
    required = {k for k, hint in hints.items() if get_origin(hint) is not NotRequired and typed.__total__}
    assert required <= row.keys(), f"{typed.__name__} lacks {sorted(required - row.keys())}"
    assert row.keys() <= allowed, f"{typed.__name__} does not name {sorted(row.keys() - allowed)}"


def test_jobs_engines_keys_and_pairing_are_their_types(node_factory: type[NodeProc],
                                                        tiny_factory: type[TinyProc]) -> None:
    tiny = tiny_factory("--api", "openai", "--model", "typed-model")
    node = node_factory("typed").start()
    node.cli("engines", "add", "tiny", "--url", tiny.url, "--api", "openai")
    client = ControlClient(Home(node.home))

    [engine] = client.call("GET", "/engines")["engines"]
    keys_of(engine, EngineRow)
    assert engine["models"] == ["typed-model"]

    answer = openai.OpenAI(base_url=f"{node.url}/v1", api_key="unused", max_retries=0).chat.completions.create(
        model="typed-model", messages=[{"role": "user", "content": "hi"}], max_tokens=4)
    assert answer.usage is not None
    [job] = client.call("GET", "/jobs")["jobs"]
    keys_of(job, JobRow)
    keys_of(job["requester"], RequesterRow)
    assert job["state"] == "completed" and "duration_s" in job

    [local] = [row for row in client.call("GET", "/nodes")["nodes"] if row["kind"] == "local"]
    keys_of(local["hardware"], HardwareFacts)
    for listed in local["engines"]:
        keys_of(listed, EngineRow)

    created = client.call("POST", "/keys", {"name": "ci-bot", "usd_per_day": 2})
    keys_of(created, NewKeyRow)
    [listed_key] = client.call("GET", "/keys")["keys"]
    keys_of(listed_key, KeyListRow)
    assert "key" not in listed_key and "digest" not in listed_key

    keys_of(client.call("GET", "/pair/invite"), InviteStatus)


def test_a_change_is_refused_by_the_field_it_names(node_factory: type[NodeProc]) -> None:
    """One spelling per setting: a misspelt field is refused by name (a cap that is silently dropped
    is no cap), and the CLI's client raises the class the node raised."""
    node = node_factory("strict-changes").start()
    client = ControlClient(Home(node.home))
    with pytest.raises(ConfigError) as misspelt:
        client.call("POST", "/keys", {"name": "bot", "usd_a_day": 2})
    assert (misspelt.value.status, misspelt.value.message) == (400, "usd_a_day: Extra inputs are not permitted")
    with pytest.raises(ConfigError) as wrong_type:
        client.call("POST", "/keys", {"name": "bot", "usd_per_day": "two"})
    assert wrong_type.value.message.startswith("usd_per_day: ")
    with pytest.raises(ConfigError) as batch:
        client.call("POST", "/batches", {"content": "{}", "deadlin": "2h"})
    assert type(batch.value).__name__ == "BatchInvalid" and batch.value.message.startswith("deadlin: ")
    assert client.call("GET", "/keys")["keys"] == []  # nothing was half-made
