"""The demo's tray is a sandbox: no login item switch (the real entry is never written or removed),
"simulated" wherever Hugging Face or billing is named, and no link to the real Hugging Face site."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QLabel

from app.cli_hf.demo import write_demo_settings
from app.home import Home
from app.simulator import SimulatedHF
from app.ui.views.settings import SettingsView
from tests.ui.conftest import until
from tests.ui.helpers import hf, running_gpu
from tests.ui.test_money_first import hf_down, hf_up
from tests.ui.test_wizard import open_wizard


async def test_the_demo_tray_names_the_simulation_and_keeps_off_the_real_install(
        sim: SimulatedHF, make_app: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    real_entry = config / "autostart" / "pairwise.desktop"
    real_entry.parent.mkdir(parents=True)
    real_entry.write_text("[Desktop Entry]\nExec=pairwise\n")
    write_demo_settings(Home(tmp_path / "home-demo"), sim)  # the home make_app("demo") builds on
    app = await make_app("demo")
    assert app.facade.is_demo()

    settings = app.window.settings
    assert isinstance(settings, SettingsView) and settings.login_item is None
    assert any(label.objectName() == "demoNoLoginItem" for label in settings.findChildren(QLabel))
    assert real_entry.read_text() == "[Desktop Entry]\nExec=pairwise\n"

    wizard = await open_wizard(app)
    assert "(simulated)" in wizard.windowTitle()
    assert "simulated Hugging Face" in wizard.intro.rent_button("huggingface").text()
    assert "simulated" in hf(wizard).sign_in.title() and "simulated" in hf(wizard).confirm.agree.text()
    wizard.close()

    await running_gpu(app, sim)
    await hf_down(sim)
    app.request_quit()
    dialog = await until(lambda: app.quit_dialog if app.quit_dialog and app.quit_dialog.billing else None,
                         timeout=40, what="the quit blocked")
    assert "gpu (simulated) is still billing" in dialog.step.text()
    assert "the simulated Hugging Face" in dialog.step.text()
    assert dialog.open_site.isHidden()  # nothing to open on the real site
    await hf_up(sim)
    dialog.keep_trying.click()
    await until(lambda: app.is_closed(), timeout=40, what="the quit")
