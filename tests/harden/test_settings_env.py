"""Settings hold only what the user set: environment overrides never reach settings.json."""

from __future__ import annotations

import json
from pathlib import Path

from app.environment import Environment
from app.harness import NodeProc, TinyProc
from app.services.hf.settings_section import HF_URLS
from app.settings import SettingsStore


def test_overrides_apply_to_the_running_node_only(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"name": "n1", "hf": {"hub": "https://mine.example"}}))
    env = Environment.read({"PAIRWISE_HF_HUB_URL": "https://sim.local/", "PAIRWISE_CA_FILE": "/tmp/ca.pem",
                            "PAIRWISE_MDNS": "off", "HOME": "/x"})
    store = SettingsStore(path, env)
    settings = store.load()
    assert (HF_URLS.of(settings).hub, settings.ca_file, settings.mdns) == ("https://sim.local", "/tmp/ca.pem", False)
    settings.listen = "127.0.0.1:9999"  # something the user changed in the running node
    store.save(settings)
    saved = json.loads(path.read_text())
    assert saved["hf"]["hub"] == "https://mine.example"
    assert saved["ca_file"] is None and saved["mdns"] is True
    assert saved["listen"] == "127.0.0.1:9999"
    # A later run without the overrides sees only what the user set.
    assert HF_URLS.of(SettingsStore(path, Environment.read({})).load()).hub == "https://mine.example"


def test_a_value_the_user_changes_while_overridden_is_theirs(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    store = SettingsStore(path, Environment.read({"PAIRWISE_HF_ROUTER_URL": "https://sim.local/v1"}))
    settings = store.load()
    HF_URLS.of(settings).router = "https://router.example/v1"
    store.save(settings)
    assert json.loads(path.read_text())["hf"]["router"] == "https://router.example/v1"


def test_a_node_run_with_overrides_does_not_save_them(node_factory: type[NodeProc],
                                                       tiny_factory: type[TinyProc]) -> None:
    tiny = tiny_factory("--api", "openai", "--model", "m")
    node = node_factory("envy", env={"PAIRWISE_HF_ENDPOINTS_URL": "https://sim.invalid/v2",
                                     "PAIRWISE_HF_HUB_URL": "https://sim.invalid"}).start()
    node.cli("engines", "add", "e1", "--url", tiny.url, "--api", "openai")  # the running node saves settings
    node.stop()
    saved = json.loads((node.home / "settings.json").read_text())
    assert saved["engines"][0]["name"] == "e1"
    assert "sim.invalid" not in json.dumps(saved)
    assert saved["mdns"] is True  # PAIRWISE_MDNS=off in the tests' environment is not the user's choice


def test_engine_url_with_user_info_is_refused(node_factory: type[NodeProc]) -> None:
    node = node_factory("creds").start()
    result = node.cli("engines", "add", "e2", "--url", "http://user:secret@127.0.0.1:9", "--api", "openai",
                      check=False)
    assert result.returncode != 0
    assert "must not carry a user name or password" in result.stderr + result.stdout
    assert "--token-stdin" in result.stderr + result.stdout
    node.stop()
    assert "secret" not in (node.home / "settings.json").read_text()
    # Offline (no node running) the same rule holds.
    result = node.cli("engines", "add", "e2", "--url", "https://user@127.0.0.1:9", "--api", "openai", check=False)
    assert result.returncode != 0 and "user name or password" in result.stderr + result.stdout
