"""The tray's provider table: the generic views word a rented GPU by its provider's registered parts
(name, site, what ends its billing), Hugging Face's are found by convention in app/ui/hf, and a
provider nobody registered is still named (by its id), never shown blank."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from app.ui import providers
from app.ui.compose import provider_packages, register_providers
from app.ui.quitting import QuitDialog, StillBilling
from app.ui.tray_model import stop_tip
from app.ui.wizard.attach import attach_choices, declaration

ACME = providers.TrayProvider(
    key="acme", name="Acme Cloud", ids=frozenset({"acme-gpu"}),
    backstop="until you stop it in Acme Cloud's console (it never scales to zero)",
    console_url=lambda endpoint: f"https://console.acme.example/{endpoint}",
    attach=(providers.AttachChoice("acme-gpu", "Acme Cloud GPU"),))


@pytest.fixture
def acme() -> Iterator[providers.TrayProvider]:
    providers.register(ACME)
    try:
        yield ACME
    finally:
        providers.unregister(ACME.key)


def test_hugging_face_registers_from_its_own_folder() -> None:
    register_providers()
    assert provider_packages() == ["app.ui.hf"]
    for provider_id in ("huggingface-endpoint", "huggingface-job", "huggingface-router"):
        assert providers.display_name(provider_id) == "Hugging Face"
    assert providers.display_name("openai-compatible") == "openai-compatible"  # nobody registered it: its id
    assert providers.display_name(None) == "its provider"
    assert [p.key for p in providers.renting()] == ["huggingface"]
    assert providers.rent_names() == "Hugging Face"


def test_a_registered_provider_words_the_generic_views(qapp: Any, acme: providers.TrayProvider,
                                                        monkeypatch: Any) -> None:
    from PySide6.QtGui import QDesktopServices

    opened: list[str] = []
    monkeypatch.setattr(QDesktopServices, "openUrl", lambda url: opened.append(url.toString()))
    dialog = QuitDialog(["box"])
    dialog.blocked([StillBilling("box", 1.25, "team/box", "Acme Cloud did not answer", provider="acme-gpu")])
    assert dialog.open_site.text() == "Open on Acme Cloud" and not dialog.open_site.isHidden()
    assert "Pairwise keeps asking Acme Cloud meanwhile" in dialog.step.text()
    assert "until you stop it in Acme Cloud's console" in dialog.step.text()
    dialog.open_site.click()
    assert opened == ["https://console.acme.example/team/box"]
    dialog.finish()
    assert "on Acme Cloud: billing stops" in stop_tip({"provider": "acme-gpu"})
    assert ("acme-gpu", "Acme Cloud GPU") in [(c.provider, c.label) for c in attach_choices()]
    decl = declaration(name="box", provider="acme-gpu", where="https://box.acme.example/v1", models="", gpu="",
                       price=0, share=False, use="overflow", managed=False)
    assert decl["url"] == "https://box.acme.example/v1" and "endpoint" not in decl


def test_a_provider_nobody_registered_still_shows_what_bills(qapp: Any) -> None:
    """A row of an unknown provider: named by its id, no site to open, the generic way its billing ends."""
    dialog = QuitDialog(["odd"])
    dialog.blocked([StillBilling("odd", 2.0, "x/odd", "refused", provider="odd-cloud")])
    assert dialog.open_site.isHidden()
    assert "Pairwise keeps asking odd-cloud meanwhile" in dialog.step.text()
    assert providers.GENERIC_BACKSTOP in dialog.step.text()
    dialog.finish()


def test_an_endpoint_by_name_is_declared_as_hugging_face_wants() -> None:
    register_providers()
    decl = declaration(name="gpu", provider="huggingface-endpoint", where="me/gpu", models="", gpu="", price=0,
                       share=True, use="overflow", managed=True)
    assert decl["endpoint"] == "me/gpu" and decl["lifecycle"] == {"managed": True} and "url" not in decl
    by_url = declaration(name="gpu", provider="huggingface-endpoint", where="https://x.endpoints.example", models="",
                         gpu="", price=0, share=True, use="overflow", managed=True)
    assert by_url["url"] == "https://x.endpoints.example" and "endpoint" not in by_url
