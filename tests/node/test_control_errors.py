"""The CLI's client raises the class the node raised: the control API sends the error's kind and
app/control_client.py rebuilds it from the tree in app/services/errors.py, so a caller of a node in
another process catches the same branch as a caller in the same process."""

from __future__ import annotations

import pytest

from app.control_client import ControlClient, _tree_modules, error_class
from app.harness import NodeProc
from app.home import Home
from app.services.cluster.pairing_protocol import InvalidPin, PairingError, PairingUnavailable
from app.services.errors import ConfigError, NotFound, PairwiseError
from tests.unit.test_error_tree import PROVIDER_ERRORS, defined_errors


def test_each_error_comes_back_as_the_class_the_node_raised(node_factory: type[NodeProc]) -> None:
    node = node_factory("alpha").start()
    client = ControlClient(Home(node.home))

    with pytest.raises(NotFound) as missing:
        client.call("DELETE", "/engines/ghost")
    assert type(missing.value) is NotFound
    assert (missing.value.status, missing.value.title) == (404, "Not found")
    assert missing.value.message == "no engine named 'ghost'"

    with pytest.raises(ConfigError) as invalid:
        client.call("POST", "/engines", {"name": "x", "url": "ftp://engine", "api": "openai"})
    assert type(invalid.value) is ConfigError and invalid.value.status == 400

    # Defined outside errors.py (cluster/pairing_protocol.py), which this process had not needed.
    with pytest.raises(PairingError) as unavailable:
        client.call("POST", "/pair/join", {"address": "127.0.0.1:1", "pin": "123456"})
    assert type(unavailable.value) is PairingUnavailable and unavailable.value.status == 503
    with pytest.raises(InvalidPin):
        client.call("POST", "/pair/join", {"address": "127.0.0.1:1", "pin": "12"})

    # The CLI prints the node's message as is.
    result = node.cli("engines", "remove", "ghost", check=False)
    assert (result.returncode, result.stderr.strip()) == (1, "error: no engine named 'ghost'")


def test_every_error_of_the_tree_is_found_by_its_name() -> None:
    found = defined_errors()
    names = [cls.__name__ for cls in found.values()]
    assert len(names) == len(set(names)), "two errors share a name; the control API's kind would be ambiguous"
    modules = {cls.__module__ for cls in found.values()} - {"app.services.errors"}
    assert modules <= set(_tree_modules()) | set(PROVIDER_ERRORS.values()), \
        "name these modules in the tree at the top of errors.py"
    for cls in found.values():
        assert error_class(cls.__name__) is cls
    assert error_class("SomethingANewerNodeRaises") is PairwiseError


def test_a_cli_process_knows_a_providers_errors_and_events_from_its_commands() -> None:
    """errors.py's tree names a provider's errors only by convention: the CLI learns Hugging Face's
    error classes and event kinds from its commands' package (app/cli_hf), found as any provider's."""
    import subprocess
    import sys
    from pathlib import Path

    code = ("from app.cli import build_parser; build_parser(); "
            "from app.control_client import error_class; from app.services.events import kinds; "
            "print(error_class('HfAuthError').__module__, 'hf_signed_in' in kinds())")
    repo = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=repo,
                         env={"PYTHONPATH": str(repo), "PATH": "/usr/bin:/bin"}, timeout=120)
    assert out.stdout.split() == ["app.services.hf.errors", "True"]
