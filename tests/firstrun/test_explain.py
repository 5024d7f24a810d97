"""The paragraphs themselves, for every OS's Ollama (only Linux's can be seen end to end here)."""

from __future__ import annotations

import pytest

from app.services.firstrun.adopt import free_name
from app.services.firstrun.explain import (
    CLUSTER,
    PAIRING,
    front_door_taken,
    listener_taken,
    moved_ollama_address,
)
from app.services.firstrun.holder import PortHolder
from app.services.platform.sockets import ListeningProcess


@pytest.mark.parametrize(("os_name", "expected"), [
    ("darwin", ["launchctl setenv OLLAMA_HOST 127.0.0.1:11435", "quit Ollama from the menu bar"]),
    ("win32", ["setx OLLAMA_HOST 127.0.0.1:11435", "quit Ollama from its icon", "Start menu"]),
    ("linux", ["sudo systemctl edit ollama.service", 'Environment="OLLAMA_HOST=127.0.0.1:11435"',
               "sudo systemctl restart ollama", "OLLAMA_HOST=127.0.0.1:11435 ollama serve"]),
])
def test_ollama_paragraph_per_os(os_name: str, expected: list[str]) -> None:
    taken = front_door_taken("127.0.0.1:11434", PortHolder("ollama", version="0.5.7"), os_name=os_name)
    assert taken.message.startswith("Pairwise cannot open its front door on 127.0.0.1:11434: Ollama 0.5.7 is "
                                   "already listening there.")
    assert "\n" not in taken.message
    for text in expected:
        assert text in taken.message
        assert any(text in step for step in taken.steps)
    assert taken.moved_to == "127.0.0.1:11435" and taken.holder_kind == "ollama" and taken.status == 409
    assert "pairwise engines add ollama --url http://127.0.0.1:11435 --api ollama" in taken.message
    assert "apps keep using 127.0.0.1:11434, now Pairwise" in taken.message


def test_other_holders_and_listeners() -> None:
    program = ListeningProcess(4242, "nginx", ["nginx", "-g", "daemon off;"])
    other = front_door_taken("127.0.0.1:11434", PortHolder("other", process=program))
    assert "another program, nginx (process 4242)" in other.message and other.steps == [] and other.moved_to is None
    node = front_door_taken("127.0.0.1:11434", PortHolder("pairwise", node_name="desk"))
    assert "another Pairwise node 'desk'" in node.message and "--listen" in node.message
    cluster = listener_taken(CLUSTER, "0.0.0.0:14330", PortHolder("pairwise", process=program))
    assert "Only one node per machine can use this cluster port" in cluster.message
    assert "--cluster-listen" in cluster.message
    pairing = listener_taken(PAIRING, "0.0.0.0:14331", PortHolder("other"))
    assert "pairing port on 0.0.0.0:14331" in pairing.message and "PORT + 1" in pairing.message
    assert "did not name it" in pairing.message


def test_moved_address_and_free_names() -> None:
    assert moved_ollama_address("127.0.0.1:11434") == "127.0.0.1:11435"
    assert moved_ollama_address("[::1]:11434") == "[::1]:11435"
    assert free_name("ollama", set(), "http://127.0.0.1:11435") == "ollama"
    assert free_name("ollama", {"ollama"}, "http://127.0.0.1:11435") == "ollama-11435"
    assert free_name("ollama", {"ollama", "ollama-11435"}, "http://127.0.0.1:11435") == "ollama-11435-2"
