"""A provider's section of settings.json, registered from its folder (``app.settings.register_section``):
Hugging Face's ``"hf"`` round-trips as the file has it, a bad URL in it is refused by its name, a change
that cannot be saved changes nothing, and a key no one registered in this process is kept as read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import BaseModel

import app.settings
from app.environment import Environment
from app.home import NotSaved
from app.services.errors import ConfigError
from app.services.hf.settings_section import HF_URLS
from app.settings import NodeSettings, SettingsStore, register_section

SIM = {"endpoints": "https://127.0.0.1:4443/v2", "hub": "https://127.0.0.1:4443",
       "catalog": "https://127.0.0.1:4443/api/catalog", "router": "http://127.0.0.1:4444/v1"}


def _store(path: Path, **env: str) -> SettingsStore:
    return SettingsStore(path, Environment.read(env))


def test_an_hf_section_round_trips_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    written = {**NodeSettings(name="n1").model_dump(mode="json"), "hf": SIM}
    assert "hf" not in NodeSettings.model_fields  # the section is the provider's, not a field of the core's
    path.write_text(json.dumps(written, indent=2))
    store = _store(path)
    settings = store.load()
    assert HF_URLS.of(settings).model_dump() == SIM
    store.save(settings)
    assert json.loads(path.read_text()) == written  # the same keys and values, "hf" still the section's key
    once = path.read_bytes()
    _store(path).save(_store(path).load())
    assert path.read_bytes() == once


def test_an_old_file_without_the_section_gets_the_defaults(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"name": "old"}))
    store = _store(path)
    settings = store.load()
    assert HF_URLS.of(settings).router == "https://router.huggingface.co/v1"
    store.save(settings)
    assert json.loads(path.read_text())["hf"]["hub"] == "https://huggingface.co"


@pytest.mark.parametrize(("field", "value"), [("router", "router.example/v1"), ("hub", "ftp://hub.example"),
                                              ("catalog", "https://cat alog.example"), ("endpoints", 5)])
def test_a_bad_url_in_the_section_is_refused_by_its_name(tmp_path: Path, field: str, value: object) -> None:
    path = tmp_path / "settings.json"
    text = json.dumps({"name": "n1", "mdns": "sometimes", "hf": {**SIM, field: value}})
    path.write_text(text)
    with pytest.raises(ConfigError) as refused:
        _store(path).load()
    said = str(refused.value)
    assert str(path) in said and f"hf.{field}" in said
    assert "mdns" in said  # the core's own errors are named with it, in one refusal
    assert path.read_text() == text  # nothing rewritten


def test_a_bad_url_from_the_environment_is_refused_by_its_variable(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="PAIRWISE_HF_ROUTER_URL='router.sim'"):
        _store(tmp_path / "settings.json", PAIRWISE_HF_ROUTER_URL="router.sim").load()


def test_a_change_to_the_section_that_cannot_be_saved_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    store = _store(path)
    settings = store.load()
    before = HF_URLS.of(settings).router
    path.mkdir()  # the file cannot be written now

    def move(draft: NodeSettings) -> None:
        HF_URLS.of(draft).router = "https://router.example/v1"

    with pytest.raises(NotSaved, match="router base"):
        store.change(settings, move, "the router base")
    assert HF_URLS.of(settings).router == before


def test_a_key_no_one_registered_here_is_kept_as_read(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    theirs = {"api": "https://gpu.cloud.example/v1", "regions": ["eu", "us"]}
    path.write_text(json.dumps({"name": "n1", "cloud-not-loaded": theirs}))
    store = _store(path)
    settings = store.load()
    settings.off_lan = "deny"
    store.save(settings)
    saved = json.loads(path.read_text())
    assert saved["cloud-not-loaded"] == theirs and saved["off_lan"] == "deny"


class _Later(BaseModel):
    api: str = "https://later.example"


def test_a_section_registered_after_the_file_was_read_is_checked_when_read(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(app.settings, "_SECTIONS", dict(app.settings._SECTIONS))  # forgotten after the test
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"name": "n1", "later-cloud": {"api": ["not", "a", "url"]}}))
    settings = _store(path).load()
    later = register_section("later-cloud", _Later)
    with pytest.raises(ConfigError, match="'later-cloud' is not valid"):
        later.of(settings)
    with pytest.raises(ValueError, match="would hide the setting"):
        register_section("off_lan", _Later)
