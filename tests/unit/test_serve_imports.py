"""`pairwise serve` imports none of the other commands' modules (issue 31: idle memory and start-up): the
command groups (keys, batch, rented, sim, demo...), the simulator's CLI and psutil (the control client's
pid check) are for the commands that use them. Read from a real `pairwise serve` process: a
sitecustomize on its path writes the modules it had loaded when it stopped."""

from __future__ import annotations

import json
import os
from pathlib import Path

from app.cli import build_parser, command_of
from app.harness import NodeProc

DUMP = '''
import atexit, json, os, sys
if "serve" in sys.argv:
    atexit.register(lambda: open(os.environ["MODULES_OUT"], "w").write(json.dumps(sorted(sys.modules))))
'''
NOT_FOR_SERVE = ("app.cli_keys", "app.cli_batch", "app.cli_rented", "app.cli_rented_hf", "app.cli_demo",
                 "app.cli_sim", "app.cli_hf", "app.cli_models", "app.cli_settings", "app.cli_cluster",
                 "app.simulator", "psutil")


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
    loaded = set(json.loads(out.read_text(encoding="utf-8")))
    assert "app.services.node" in loaded and "app.cli" in loaded  # it is the node, run by the CLI
    assert not loaded & set(NOT_FOR_SERVE), sorted(loaded & set(NOT_FOR_SERVE))


def test_the_command_is_read_past_the_options_before_it() -> None:
    assert command_of(["serve", "--listen", "127.0.0.1:0"]) == "serve"
    assert command_of(["--home", "/tmp/h", "--name", "serve", "status"]) == "status"
    assert command_of(["--no-mdns", "serve"]) == "serve"
    assert command_of([]) is None and command_of(["-h"]) is None
    # Every other command still finds its group, and serve parses the same without them.
    assert build_parser().parse_args(["keys", "list"]).command == "keys"
    served = build_parser(extensions=False).parse_args(["--home", "/tmp/h", "serve", "--name", "n", "--no-mdns"])
    assert (served.command, served.name, served.home, served.no_mdns) == ("serve", "n", "/tmp/h", True)
