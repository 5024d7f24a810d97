"""Hugging Face as the composition root finds it (``app/services/provider_plugins.py``): importing this
registers the ``"hf"`` section of settings.json (``settings_section.py``); ``attach`` gives a node its
endpoints, batch windows and router (``attach_hf``, after the rented nodes); ``register_api`` its part
of the service API and its routes (``routes.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import app.services.hf.settings_section  # noqa: F401  (registers the "hf" section before settings are read)
from app.services.hf import attach_hf
from app.services.hf.routes import register_hf_api

if TYPE_CHECKING:
    from app.services.node import Node


def attach(node: Node) -> None:
    attach_hf(node)


def register_api() -> None:
    register_hf_api()
