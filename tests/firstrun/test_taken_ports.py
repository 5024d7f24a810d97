"""A taken port is a paragraph, not a traceback (issue 15): `serve` names who holds the front door
(Ollama, another Pairwise node, another program) or the cluster/pairing port, says the way on, exits
non-zero; after Ollama moves to the next port, the node starts and adopts it there."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import ollama
import pytest

from app.harness import REPO, NodeProc, TinyProc, child_env


def free_pair() -> int:
    """A port P with P+1 free too (Ollama's moved port is the front door's + 1)."""
    for _ in range(200):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        if port < 65535 and all(_free(p) for p in (port, port + 1)):
            return port
    raise AssertionError("no two consecutive free ports")


def _free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@contextlib.contextmanager
def silent_listener(port: int) -> Iterator[socket.socket]:
    """A program that holds a port and never answers HTTP."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", port))
    sock.listen(8)
    try:
        yield sock
    finally:
        sock.close()


def serve(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "app", "--home", str(home), "serve", "--cluster-listen",
                           "127.0.0.1:0", "--no-mdns", *args], capture_output=True, text=True,
                          env=child_env(), cwd=REPO, timeout=120)


def one_paragraph(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode != 0
    assert "Traceback" not in done.stderr and "Traceback" not in done.stdout, done.stderr
    text = done.stderr.strip()
    assert text.startswith("error: Pairwise cannot open its") and "\n" not in text, text
    return text


def test_ollama_on_the_front_door_then_moved_and_adopted(tmp_path: Path) -> None:
    port = free_pair()
    home = tmp_path / "home"
    fake_ollama = TinyProc("--api", "ollama", "--model", "llama3.2:latest", "--port", str(port))
    try:
        said = one_paragraph(serve(home, "--listen", f"127.0.0.1:{port}"))
        assert f"front door on 127.0.0.1:{port}: Ollama" in said
        assert f"OLLAMA_HOST=127.0.0.1:{port + 1}" in said and "systemctl" in said  # this machine's steps (Linux)
        assert f"--url http://127.0.0.1:{port + 1} --api ollama" in said and "--listen" in said
        assert "changes none of this itself" in said
    finally:
        fake_ollama.stop()
    # The user moves Ollama to the next port; the node starts on the front door and adopts it there.
    moved = TinyProc("--api", "ollama", "--model", "llama3.2:latest", "--port", str(port + 1))
    node = NodeProc(home, "desk", "--listen", f"127.0.0.1:{port}")
    try:
        node.start()
        assert node.runtime["listen"] == f"127.0.0.1:{port}"
        engines = node.cli_json("engines", "list")
        assert [(e["name"], e["url"], e["api"]) for e in engines] == [("ollama", f"http://127.0.0.1:{port + 1}",
                                                                       "ollama")]
        reply = ollama.Client(host=node.url).chat(model="llama3.2:latest",
                                                  messages=[{"role": "user", "content": "hi"}])
        assert reply.message.content
        assert moved.stats()["requests"] >= 1
        assert "ollama_move" not in (home / "firstrun.json").read_text()  # the promise was kept once
    finally:
        node.stop()
        moved.stop()


def test_another_pairwise_node_on_the_front_door(tmp_path: Path) -> None:
    port = free_pair()
    first = NodeProc(tmp_path / "first", "first", "--listen", f"127.0.0.1:{port}")
    try:
        first.start()
        said = one_paragraph(serve(tmp_path / "second", "--listen", f"127.0.0.1:{port}", "--name", "second"))
        assert "another Pairwise node 'first'" in said and "--listen 127.0.0.1:PORT" in said
        assert "Ollama" not in said
    finally:
        first.stop()


def test_an_unknown_program_on_the_front_door(tmp_path: Path) -> None:
    port = free_pair()
    with silent_listener(port):
        said = one_paragraph(serve(tmp_path / "home", "--listen", f"127.0.0.1:{port}"))
    assert f"another program, {Path(sys.executable).name}" in said or "another program" in said
    assert f"process {os.getpid()}" in said  # the OS named the holder: this test's own process
    assert "Stop that program" in said and "--listen" in said


def test_the_cluster_port_taken(tmp_path: Path) -> None:
    port = free_pair()
    with silent_listener(port):
        done = subprocess.run([sys.executable, "-m", "app", "--home", str(tmp_path / "home"), "serve", "--listen",
                               "127.0.0.1:0", "--cluster-listen", f"127.0.0.1:{port}", "--no-mdns"],
                              capture_output=True, text=True, env=child_env(), cwd=REPO, timeout=120)
    said = one_paragraph(done)
    assert f"cluster port on 127.0.0.1:{port}: another program" in said and "--cluster-listen" in said
    assert f"process {os.getpid()}" in said


def test_the_pairing_port_taken(tmp_path: Path) -> None:
    port = free_pair()
    node = NodeProc(tmp_path / "home", "desk", "--cluster-listen", f"127.0.0.1:{port}")
    try:
        node.start()
        with silent_listener(port + 1):
            done = node.cli("pair", "invite", check=False)
        assert done.returncode != 0 and "Traceback" not in done.stderr
        assert f"pairing port on 127.0.0.1:{port + 1}: another program" in done.stderr
        assert "--cluster-listen" in done.stderr and "PORT + 1" in done.stderr
    finally:
        node.stop()


@pytest.mark.parametrize("holder", ["ollama", "openai"])
def test_holder_kinds_seen_through_a_real_server(holder: str) -> None:
    """The identification alone: an OpenAI-only server is 'another program', not Ollama."""
    import asyncio

    from app.services.firstrun.holder import identify_holder

    tiny = TinyProc("--api", holder)
    try:
        port = int(tiny.url.rsplit(":", 1)[1])
        found = asyncio.run(identify_holder("127.0.0.1", port))
    finally:
        tiny.stop()
    assert found.kind == ("ollama" if holder == "ollama" else "other")
