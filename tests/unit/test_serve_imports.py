"""`pairwise serve` imports none of the other commands' modules (issue 31: idle memory and start-up): the
command groups (keys, batch, rented, sim, demo...), the simulator's CLI and psutil (the control client's
pid check) are for the commands that use them. Read from a real `pairwise serve` process: a
sitecustomize on its path writes the modules it had loaded when it stopped."""

from __future__ import annotations

import gc
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli import build_parser, command_of, main
from app.harness import NodeProc

DUMP = '''
import atexit, gc, json, os, sys
if "serve" in sys.argv:
    atexit.register(lambda: open(os.environ["MODULES_OUT"], "w").write(json.dumps({
        "modules": sorted(name for name, module in sys.modules.items() if module is not None),
        "collector_on": gc.isenabled(), "frozen": gc.get_freeze_count()})))
'''
NOT_FOR_SERVE = ("app.cli_keys", "app.cli_batch", "app.cli_rented", "app.cli_rented_hf", "app.cli_demo",
                 "app.cli_sim", "app.cli_hf", "app.cli_models", "app.cli_settings", "app.cli_cluster",
                 "app.simulator", "psutil", "keyring.backends.macOS.api")


def test_a_served_node_loads_no_other_commands_modules(tmp_path: Path) -> None:
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(DUMP, encoding="utf-8")
    out = tmp_path / "modules.json"
    probe = NodeProc(tmp_path / "home", "imports")
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(hook), probe.env.get("PYTHONPATH")])),
           "MODULES_OUT": str(out)}
    node = NodeProc(tmp_path / "home", "imports", env=env).start(wait_answer=True)
    assert node.control("GET", "/status")["name"] == "imports"
    node.stop()
    dump = json.loads(out.read_text(encoding="utf-8"))
    loaded = set(dump["modules"])
    assert "app.services.node" in loaded and "app.cli" in loaded  # it is the node, run by the CLI
    assert not loaded & set(NOT_FOR_SERVE), sorted(loaded & set(NOT_FOR_SERVE))
    # The cyclic collector, off while the node's modules were imported, is on again, with them frozen.
    assert dump["collector_on"] is True and dump["frozen"] > 10_000


def test_a_start_that_fails_leaves_the_collector_on(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`serve` turns the cyclic collector off while it imports the node; a start refused (the front door's
    port is held by another program) ends the command, and a caller in the same process keeps its collector."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        code = main(["--home", str(tmp_path / "home"), "serve", "--listen", f"127.0.0.1:{port}",
                     "--cluster-listen", "127.0.0.1:0", "--name", "taken", "--no-mdns"])
    assert code == 1
    assert str(port) in capsys.readouterr().err
    assert gc.isenabled()


def test_the_command_is_read_past_the_options_before_it() -> None:
    assert command_of(["serve", "--listen", "127.0.0.1:0"]) == "serve"
    assert command_of(["--home", "/tmp/h", "--name", "serve", "status"]) == "status"
    assert command_of(["--no-mdns", "serve"]) == "serve"
    assert command_of([]) is None and command_of(["-h"]) is None
    # Every other command still finds its group, and serve parses the same without them.
    assert build_parser().parse_args(["keys", "list"]).command == "keys"
    served = build_parser(extensions=False).parse_args(["--home", "/tmp/h", "serve", "--name", "n", "--no-mdns"])
    assert (served.command, served.name, served.home, served.no_mdns) == ("serve", "n", "/tmp/h", True)


KEYRING_CHOICE = """
import json, sys
if sys.argv[1] == "app":
    import app.services.secrets
import keyring, keyring.backend
chosen = keyring.get_keyring()
print(json.dumps({"chosen": [type(chosen).__module__, type(chosen).__qualname__, chosen.priority],
                  "viable": sorted(type(k).__module__ + "." + type(k).__qualname__ for k in keyring.backend.get_all_keyring()),
                  "helper_loaded": sys.modules.get("keyring.backends.macOS.api") is not None}))
"""


@pytest.mark.skipif(sys.platform == "darwin", reason="on macOS the Keychain's helper is imported as keyring does")
def test_the_keyring_backend_is_chosen_as_keyring_chooses_it_without_the_macos_helper() -> None:
    """The node refuses the import of keyring's macOS helper off macOS (a find_library search that
    runs ldconfig and gcc at start); keyring must still pick the backend it picks on its own."""

    def choice(mode: str) -> dict[str, object]:
        done = subprocess.run([sys.executable, "-c", KEYRING_CHOICE, mode], capture_output=True, text=True,
                              cwd=Path(__file__).resolve().parents[2], timeout=120)
        assert done.returncode == 0, done.stderr[-3000:]
        result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
        return result

    plain, ours = choice("plain"), choice("app")
    assert plain["helper_loaded"] is False  # it fails off macOS either way: after the search, or at once
    assert ours["helper_loaded"] is False
    assert ours["chosen"] == plain["chosen"] and ours["viable"] == plain["viable"]
