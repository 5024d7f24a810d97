"""Settings' "Peers' rented GPUs": a paired peer shares a rented node (a real pinned peer speaking
the cluster protocol, its facts set by the test); this node's policy for it is changed in the view,
saved in settings, and a save the disk refuses shows the error and keeps the old choice."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from tests.cluster.hostile import HostilePeer
from tests.cluster.test_hostile_peer import rented_fact
from tests.ui.conftest import until


async def test_changing_a_peers_rented_policy_in_settings_persists_it(make_app: Any, node_factory: Any) -> None:
    app = await make_app()
    beta = node_factory("beta").start()
    invite = await app.facade.pair_invite()
    await asyncio.to_thread(beta.cli, "pair", "join", invite["address"], "--pin", invite["pin"])
    await until(lambda: any(p.get("name") == "beta" and p.get("online") for p in app.facade.peers()),
                timeout=30, what="beta paired")
    address = beta.runtime["cluster"]
    beta.stop()
    hostile = HostilePeer(beta.home, address, "beta")
    hostile.facts["shared_nodes"] = [rented_fact(sponsor="beta", sponsor_id=hostile.node_id)]
    hostile.start()
    try:
        await until(lambda: app.facade.peer_rented(), timeout=30, what="beta's rented node seen")
        app.open_window()
        settings = app.window.settings
        settings.refresh()
        box = settings.peer_rented_box
        combo = box.combos["rent-gpu-1"]
        assert combo.currentData() == "default" and not box.empty.isVisible()
        assert combo.currentText() == "Default: used only when no machine on your LAN has the model"
        assert "beta proposes: used first" in " ".join(
            w.text() for w in box.findChildren(type(box.empty)))  # the sponsor's wish, shown only

        combo.setCurrentIndex(combo.findData("never"))
        await until(lambda: "Saved" in box.note.text(), what="the policy saved")
        saved = json.loads((app.node.home.root / "settings.json").read_text(encoding="utf-8"))
        assert saved["peer_rented"] == {"rent-gpu-1": "never"}
        assert app.facade.peer_rented()[0]["policy"] == "never"

        # A save the disk refuses: the error is shown, the old choice stays (in the view and the node).
        settings_file = app.node.home.root / "settings.json"
        kept = settings_file.read_bytes()
        settings_file.unlink()
        settings_file.mkdir()  # where the settings go is now a folder: the save is refused
        try:
            combo.setCurrentIndex(combo.findData("prefer"))
            await until(lambda: "Saved" not in box.note.text(), what="the refusal shown")
        finally:
            settings_file.rmdir()
            settings_file.write_bytes(kept)
        assert "settings" in box.note.text().lower()
        assert combo.currentData() == "never"
        assert app.node.settings.peer_rented == {"rent-gpu-1": "never"}

        combo.setCurrentIndex(combo.findData("default"))
        await until(lambda: "Saved: default" in box.note.text(), what="the rule forgotten")
        saved = json.loads(settings_file.read_text(encoding="utf-8"))
        assert saved["peer_rented"] == {}
    finally:
        hostile.stop()
