"""History survives SIGKILL; SIGTERM and SIGINT stop in order; status, nodes and events."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import openai

from app.harness import REPO, NodeProc, TinyProc, wait_until
from app.services.upstream_facts import EngineFacts
from tests.node.conftest import TwoEngines


def ask(node: NodeProc, model: str = "oa-model") -> None:
    client = openai.OpenAI(base_url=f"{node.url}/v1", api_key="x", max_retries=0)
    client.chat.completions.create(model=model, messages=[{"role": "user", "content": "hi"}])


def test_history_survives_sigkill(two_engines: TwoEngines) -> None:
    node = two_engines.node
    ask(node)
    ask(node, "ol-model")
    before = node.cli_json("jobs")
    node.kill()
    node.start()
    after = node.cli_json("jobs")
    assert [j["id"] for j in after] == [j["id"] for j in before]
    assert {j["state"] for j in after} == {"completed"}
    # The engines came back from settings too.
    ask(node)


def test_sigterm_and_sigint_stop_cleanly(node_factory: type[NodeProc], tiny_factory: type[TinyProc]) -> None:
    for sig in (signal.SIGTERM, signal.SIGINT):
        node = node_factory(f"stop-{sig.name.lower()}").start()
        assert node.signal(sig) == 0
        assert not (node.home / "runtime.json").exists()
        assert "stopping" in node.log.read_text()


def test_status_nodes_and_events(two_engines: TwoEngines) -> None:
    node = two_engines.node
    status = node.cli_json("status")
    assert status["name"] == "alpha" and status["engines"] == 2 and status["models"] == 2
    nodes = node.cli_json("nodes")
    assert nodes[0]["kind"] == "local" and nodes[0]["online"] is True
    assert sorted(nodes[0]["models"]) == ["oa-model", "ol-model:latest"]
    assert {e["name"] for e in nodes[0]["engines"]} == {"oa", "ol"}
    for row in [*nodes[0]["engines"], *node.cli_json("engines", "list")]:  # Upstream.describe(), as typed
        assert set(row) == EngineFacts.__required_keys__ and row["kind"] == "engine" and row["node"] == "alpha"

    follower = subprocess.Popen([sys.executable, "-m", "app", "--home", str(node.home), "events", "--follow"],
                                stdout=subprocess.PIPE, text=True, cwd=REPO, env=node.env)
    try:
        assert follower.stdout is not None
        assert json.loads(follower.stdout.readline())["kind"] == "subscribed"
        ask(node)
        kinds = []
        while "workload_finished" not in kinds:
            kinds.append(json.loads(follower.stdout.readline())["kind"])
        assert kinds[0] == "workload_started"
        # A follower does not hold the node up: it is told, and the stream ends.
        assert node.signal(signal.SIGTERM) == 0
        rest = [json.loads(line)["kind"] for line in follower.stdout]
        assert "node_stopping" in rest
    finally:
        follower.terminate()
        follower.wait(5)


def test_second_node_on_same_home_is_refused(two_engines: TwoEngines) -> None:
    node = two_engines.node
    result = subprocess.run([sys.executable, "-m", "app", "--home", str(node.home), "serve", "--listen", "127.0.0.1:0",
                             "--cluster-listen", "127.0.0.1:0", "--no-mdns"], capture_output=True, text=True,
                            cwd=REPO, env=node.env, timeout=30)
    assert result.returncode == 1 and "already running" in result.stderr
    wait_until(lambda: node.cli_json("status")["name"] == "alpha", what="first node still serving")
