"""Settings' Keys section and the LAN switch, the tray's "LAN access on · 1 key" line, and a rented
node's per-peer limits and today's spend by requester in its detail."""

from __future__ import annotations

import ssl
from typing import Any

import httpx
from PySide6.QtGui import QGuiApplication

from tests.rented.test_sponsor_e2e import files_containing
from tests.ui.conftest import until
from tests.ui.helpers import find_action, open_menu


async def test_a_key_is_shown_once_with_a_copy_button_and_lan_access_switches(make_app: Any) -> None:
    app = await make_app()
    app.open_window()
    app.window.tabs.setCurrentIndex(2)
    settings = app.window.settings
    settings.refresh()
    box = settings.keys_box
    assert not box.lan_switch.isChecked() and "Off" in box.lan_status.text()
    assert not box.new_key.isVisible() and box.keys.count() == 0

    box.key_name.setText("phone")
    box.key_models.setText("llama3*, qwen*")
    box.key_usd.setValue(1.5)
    box.create_button.click()
    key = await until(lambda: box.new_key.text(), what="the new key")
    assert key.startswith("pw-") and box.new_key.isVisible() and "shown this once" in box.note.text()
    box.copy_button.click()
    assert QGuiApplication.clipboard().text() == key
    assert [box.keys.item(i).text() for i in range(box.keys.count())] == [
        "phone · models llama3*, qwen*; $1.5/day"]
    assert files_containing(app.node.home.root, key.encode()) == []

    box.lan_address.setText("127.0.0.2:0")
    box.lan_switch.setChecked(True)
    await until(lambda: "On at https://127.0.0.2:" in box.lan_status.text(), what="LAN access on")
    assert app.facade.lan_status()["fingerprint"] in box.lan_status.text()
    assert "LAN access on · 1 key" in open_menu(app)
    find_action(app.tray.menu, "LAN access on · 1 key").trigger()
    assert app.window.isVisible()
    url = app.facade.lan_status()["url"]
    # Clients pin the door's own name-constrained CA (issue 26), the one `pairwise lan cert` prints.
    pinned = ssl.create_default_context(cadata=(app.node.home.identity_dir / "lan_door_ca.crt").read_text())
    async with httpx.AsyncClient(verify=pinned) as client:
        assert (await client.get(f"{url}/api/tags")).status_code == 401

    box.keys.setCurrentRow(0)
    box.revoke_button.click()
    await until(lambda: "revoked" in box.keys.item(0).text(), what="the key revoked")
    assert not box.new_key.isVisible()
    box.lan_switch.setChecked(False)
    await until(lambda: "Off" in box.lan_status.text(), what="LAN access off")
    assert app.node.settings.lan_listen is None


async def test_per_peer_limits_in_the_rented_node_detail(make_app: Any, tiny_factory: Any) -> None:
    app = await make_app()
    tiny = tiny_factory("--api", "openai", "--model", "rented-model")
    await app.facade.rented_attach({"name": "gpu", "url": tiny.url, "price_per_hour": 1.0}, None)
    app.open_window()
    app.window.show_node("gpu")
    detail = app.window.detail
    assert detail.fact_text("By requester") == "today: no spend yet"
    detail.peer_usd.setText("laptop-b=2, *=5")
    detail.peer_rate.setText("*=30")
    detail.apply_settings()
    await until(lambda: app.facade.rented_row("gpu")["requesters"]["usd_per_day"] == {"laptop-b": 2, "*": 5},
                what="the per-peer caps")
    assert app.facade.rented_row("gpu")["requesters"]["requests_per_min"] == {"*": 30}
    detail.refresh()
    assert detail.peer_usd.text() == "laptop-b=2, *=5"
    detail.peer_usd.setText("*=5")  # laptop-b's own cap removed
    detail.apply_settings()
    await until(lambda: app.facade.rented_row("gpu")["requesters"]["usd_per_day"] == {"*": 5}, what="one removed")
    detail.peer_rate.setText("*=many")
    detail.apply_settings()
    assert "'many' is not a whole number" in detail.message.text()
