"""`pairwise engines discover`: a fake Ollama and an OpenAI-compatible server found on loopback,
nothing on closed or silent ports, Pairwise itself left out; --add adopts them and their models are
served through the front door."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
from pathlib import Path

import ollama
import openai

from app.harness import REPO, NodeProc, TinyProc, child_env
from app.services.firstrun.discover import discover


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])  # closed again when the block ends


def port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


def pairwise(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "app", "--home", str(home), *args], capture_output=True, text=True,
                          env=child_env(), cwd=REPO, timeout=120)


def test_discover_finds_ollama_and_openai_and_nothing_elsewhere(tmp_path: Path, tiny_factory: type[TinyProc],
                                                                 node_factory: type[NodeProc]) -> None:
    fake_ollama = tiny_factory("--api", "ollama", "--model", "llama3.2:latest", "--model", "qwen2.5:0.5b")
    fake_openai = tiny_factory("--api", "openai", "--model", "lmstudio-community/gemma")
    node = node_factory("desk").start()
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)  # accepts connections, never answers: given up at the deadline
    try:
        ports = [port_of(fake_ollama.url), port_of(fake_openai.url), closed_port(), silent.getsockname()[1],
                 port_of(node.url)]
        done = pairwise(node.home, "engines", "discover", "--ports", ",".join(map(str, ports)), "--json")
    finally:
        silent.close()
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert [{k: f[k] for k in ("url", "api", "models")} for f in found] == [
        {"url": fake_ollama.url, "api": "ollama", "models": ["llama3.2:latest", "qwen2.5:0.5b"]},
        {"url": fake_openai.url, "api": "openai", "models": ["lmstudio-community/gemma"]},
    ]

    # --add adopts both through the running node; their models are served through the front door.
    added = pairwise(node.home, "engines", "discover", "--ports", ",".join(map(str, ports[:2])), "--add")
    assert added.returncode == 0, added.stderr
    assert f"adopted {fake_ollama.url} as engine ollama" in added.stdout
    assert f"adopted {fake_openai.url} as engine openai-{port_of(fake_openai.url)}" in added.stdout
    engines = {e["name"]: e for e in node.cli_json("engines", "list")}
    assert engines["ollama"]["url"] == fake_ollama.url and engines["ollama"]["api"] == "ollama"
    reply = openai.OpenAI(base_url=f"{node.url}/v1", api_key="unused").chat.completions.create(
        model="lmstudio-community/gemma", messages=[{"role": "user", "content": "hi"}])
    assert reply.choices[0].message.content
    chat = ollama.Client(host=node.url).chat(model="qwen2.5:0.5b", messages=[{"role": "user", "content": "hi"}])
    assert chat.message.content
    assert fake_openai.stats()["requests"] >= 1 and fake_ollama.stats()["requests"] >= 1

    again = pairwise(node.home, "engines", "discover", "--ports", ",".join(map(str, ports[:2])), "--add")
    assert "Every engine found was adopted already." in again.stdout


def test_discover_add_without_a_running_node_writes_the_settings(tmp_path: Path,
                                                                 tiny_factory: type[TinyProc]) -> None:
    fake_ollama = tiny_factory("--api", "ollama")
    home = tmp_path / "home"
    done = pairwise(home, "engines", "discover", "--ports", str(port_of(fake_ollama.url)), "--add", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)[0]["adopted_as"] == "ollama"
    settings = json.loads((home / "settings.json").read_text())
    assert [(e["name"], e["url"], e["api"]) for e in settings["engines"]] == [("ollama", fake_ollama.url, "ollama")]


def test_discover_with_nothing_listening_says_so(tmp_path: Path) -> None:
    done = pairwise(tmp_path / "home", "engines", "discover", "--ports", str(closed_port()))
    assert done.returncode == 0 and done.stdout.strip() == "No engine answered on loopback."
    bad = pairwise(tmp_path / "home", "engines", "discover", "--ports", "11434,x")
    assert bad.returncode == 2 and "ports must be numbers" in bad.stderr


def test_each_port_is_asked_once(tiny_factory: type[TinyProc]) -> None:
    """No retry loop: one look asks an Ollama port at most twice (version, tags) and nothing more."""
    fake_ollama = tiny_factory("--api", "ollama")
    before = fake_ollama.stats()["requests"]
    found = asyncio.run(discover([port_of(fake_ollama.url)] * 3))  # a port named twice is looked at once
    assert [f.api for f in found] == ["ollama"]
    assert fake_ollama.stats()["requests"] - before == 2
