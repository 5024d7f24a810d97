"""The Windows suite, run from Linux by scripts/test-windows.sh: Windows' own CPython under Wine
for the node and the CLI, Linux clients for the front door. Not part of the Linux suite (it needs
the lane's Wine environment)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest

from app.harness import TinyProc
from tests.windows.suite import wine

NAME = "Zoë 工作站"


def test_the_platform_layer_inside_windows() -> None:
    inside = wine.ROOT / "tests" / "windows" / "suite" / "inside"
    # --confcutdir: Windows' CPython runs these alone, without the Linux suite's conftest above them.
    result = wine.run("-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "ignore::pytest.PytestConfigWarning",
                      f"--confcutdir={inside}", str(inside), timeout=600)
    out = result.stdout.decode("utf-8", "replace")
    print(out)
    assert result.returncode == 0, out + result.stderr.decode("utf-8", "replace")


@pytest.fixture(scope="module")
def tiny() -> Iterator[TinyProc]:
    proc = TinyProc("--model", "tiny-model", "--api", "openai")
    yield proc
    proc.stop()


@pytest.fixture(scope="module")
def node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[wine.Proc, Path, str]]:
    home = tmp_path_factory.mktemp("win") / "home"
    home.mkdir()
    port = _free_port()
    proc = wine.Proc("-m", "app", "--home", wine.win(home), "serve", "--listen", f"127.0.0.1:{port}",
                     "--cluster-listen", "127.0.0.1:0", "--no-mdns", "--name", NAME)
    try:
        proc.wait_for("the front door", lambda: "serving on" in proc.text and (home / "runtime.json").exists())
        yield proc, home, f"http://127.0.0.1:{port}"
    finally:
        proc.kill()


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_serve_and_the_cli_from_a_second_process(node: tuple[wine.Proc, Path, str], tiny: TinyProc) -> None:
    proc, home, url = node
    assert f"Pairwise node {NAME} serving on {url}" in proc.text  # to a pipe, cp1252 machine, no PYTHONUTF8
    status = wine.pairwise(home, "status")
    assert status.returncode == 0, status.stderr.decode("utf-8", "replace")
    assert f"name: {NAME}" in status.stdout.decode("utf-8")
    added = wine.pairwise(home, "engines", "add", "tiny", "--url", tiny.url, "--api", "openai")
    assert added.returncode == 0, added.stderr.decode("utf-8", "replace")
    listing = json.loads(wine.pairwise(home, "engines", "list", "--json").stdout)
    assert [e["name"] for e in listing] == ["tiny"]

    client = openai.OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0, timeout=60)
    answer = client.chat.completions.create(model="tiny-model", messages=[{"role": "user", "content": "hi"}])
    assert answer.choices[0].finish_reason == "stop" and answer.usage is not None and answer.usage.completion_tokens > 0
    chunks = list(client.chat.completions.create(model="tiny-model", stream=True,
                                                 messages=[{"role": "user", "content": "hi"}]))
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices]
    assert len(finishes) > 2 and finishes[-1] == "stop"
    jobs = json.loads(wine.pairwise(home, "jobs", "--json").stdout)
    assert len(jobs) == 2 and {j["state"] for j in jobs} == {"completed"}


def test_a_second_node_on_the_same_home_is_refused(node: tuple[wine.Proc, Path, str]) -> None:
    _, home, _ = node
    second = wine.pairwise(home, "serve", "--listen", "127.0.0.1:0", "--cluster-listen", "127.0.0.1:0", "--no-mdns")
    assert second.returncode == 1 and "already running" in second.stderr.decode("utf-8")


def test_ctrl_c_stops_the_node_with_pause_on_exit_first(node: tuple[wine.Proc, Path, str]) -> None:
    proc, home, _ = node
    began = time.monotonic()
    code = proc.ctrl_c()
    assert code == 0 and "stopping..." in proc.text
    log = (home / "logs" / "node.log").read_text(encoding="utf-8")
    assert "stop step: rented: pause on sponsor exit" in log  # pause on exit was reached
    assert not (home / "runtime.json").exists()  # the stop ran to its end
    print(f"Ctrl+C to exit: {time.monotonic() - began:.1f} s")


def test_a_restart_keeps_the_history_and_the_name(node: tuple[wine.Proc, Path, str]) -> None:
    _, home, url = node  # stopped by Ctrl+C above
    again = wine.Proc("-m", "app", "--home", wine.win(home), "serve", "--listen", url.removeprefix("http://"),
                      "--cluster-listen", "127.0.0.1:0", "--no-mdns")  # no --name: the saved one
    try:
        again.wait_for("the front door", lambda: "serving on" in again.text and (home / "runtime.json").exists())
        assert f"Pairwise node {NAME} serving on" in again.text
        jobs = json.loads(wine.pairwise(home, "jobs", "--json").stdout)
        assert len(jobs) == 2
        assert again.ctrl_c() == 0
    finally:
        again.kill()


def test_the_tray_starts_and_quits_under_xvfb(tmp_path: Path) -> None:
    if not os.environ.get("DISPLAY"):
        pytest.skip("no X display (scripts/test-windows.sh starts Xvfb)")
    home = tmp_path / "home"
    home.mkdir()
    tray = wine.Proc("-m", "app", "--home", wine.win(home), "--listen", f"127.0.0.1:{_free_port()}",
                     "--cluster-listen", "127.0.0.1:0", "--no-mdns", "--name", NAME)
    try:
        tray.wait_for("the tray's node", lambda: (home / "runtime.json").exists(), timeout=240)
        assert tray.ctrl_c() == 0, tray.text
        assert "stop step: rented: pause on sponsor exit" in (home / "logs" / "node.log").read_text(encoding="utf-8")
        assert not (home / "runtime.json").exists()
    finally:
        tray.kill()

