"""Rent the bigger copy (issue 23): a prompt no local copy holds is refused with the command that rents
one that does; after that command (the simulated Hugging Face, a real node process), the same request
goes to the new rented copy, through the real `openai` and `ollama` clients."""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

import ollama
import openai
import pytest

from app.harness import wait_until
from tests.hf.conftest import sim_factory, start_sponsor  # noqa: F401  (sim_factory: a fixture)
from tests.hf.support import L4, control, hf_endpoint, wait_show
from tests.routing.conftest import LOCAL, LOCAL_WINDOW, MINUTE_S, REPO

# About 6,900 tokens by Pairwise's estimate: more than the local 1024 and than the usual 4096.
LONG = [{"role": "user", "content": "hello " * 4000}]
WANTED = 8192


def test_too_long_names_the_command_then_routes_to_the_rented_copy(sim_factory: Any, node_factory: Any,  # noqa: F811
                                                                    tiny_factory: Any) -> None:
    sim = sim_factory(pending_s=0.1, initializing_s=0.2, minute_s=MINUTE_S)
    local = tiny_factory("--api", "openai", "--model", LOCAL, "--context-window", str(LOCAL_WINDOW))
    node = start_sponsor(node_factory, sim, MINUTE_S)
    node.cli("engines", "add", "local", "--url", local.url, "--api", "openai", "--capacity", "64")
    client = openai.OpenAI(base_url=node.url + "/v1", api_key="x", max_retries=0)

    with pytest.raises(openai.BadRequestError) as refused:
        client.chat.completions.create(model=LOCAL, messages=LONG, max_tokens=8)
    message = refused.value.message
    assert f"local holds {LOCAL_WINDOW}" in message
    found = re.search(r"'(pairwise rented create [^']+)'", message)
    assert found, message
    command = shlex.split(found.group(1))
    assert command[-4:] == ["--context-window", str(WANTED), "--same-as", LOCAL]
    assert command[command.index("--model") + 1] == "OWNER/NAME"  # no linked name says the repository
    assert "asks before anything is billed" in message
    assert node.cli_json("rented", "list") == []  # words only: nothing was rented
    assert local.stats()["inferences"] == 0

    # The user fills in the repository and runs it; --yes stands for their answer to "Create it?".
    command[command.index("--model") + 1] = REPO
    name = command[3]
    out = node.cli(*command[1:], *L4, "--engine", "vllm", "--scale-to-zero-min", "600", "--yes", "--json")
    assert json.loads(out.stdout)["name"] == name
    endpoint = hf_endpoint(sim, name)
    assert endpoint is not None and endpoint["model"]["image"]["vLLM"]["maxModelLen"] == WANTED
    wait_show(node, name, "the endpoint to run",
              lambda r: r["provider_state"] == "running" and r["state"] == "eligible" and r.get("url"))
    control(node).call("POST", f"/rented/{name}/probe")
    row = next(m for m in node.cli_json("models") if LOCAL in m["names"])
    assert set(row["names"]) == {LOCAL, REPO}
    assert {(c["kind"], c["window"]) for c in row["copies"]} == {("engine", LOCAL_WINDOW), ("rented", WANTED)}

    raw = client.chat.completions.with_raw_response.create(model=LOCAL, messages=LONG, max_tokens=8)
    assert raw.parse().model == LOCAL and raw.parse().choices[0].message.content
    route = raw.headers["x-pairwise-route"]
    assert f"too small: local (window {LOCAL_WINDOW})" in route and f"{name} window {WANTED}" in route
    parts = list(ollama.Client(host=node.url).chat(model=LOCAL, messages=LONG, stream=True,
                                                   options={"num_predict": 5}))
    assert {p.model for p in parts} == {LOCAL} and parts[-1].done
    wait_until(lambda: node.cli_json("jobs", "--limit", "1")[0]["state"] == "completed", 10, "the job to close")
    job = node.cli_json("jobs", "--limit", "1")[0]
    assert (job["rented_node"], job["model"]) == (name, LOCAL)
    assert local.stats()["inferences"] == 0  # the local copy was never asked
