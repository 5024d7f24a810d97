"""Hugging Face's own events: the account signed in or out. They join the one catalog
(``app/services/events.py``: ``Event`` registers each kind) and keep their ``kind`` strings, which
``pairwise events`` and the tray (``app/ui/notify.py``) read; the tray renders each kind as it does
the catalog's."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from app.services.events import Event


@dataclass(frozen=True)
class HfSignedIn(Event):
    kind: ClassVar[str] = "hf_signed_in"
    user: str
    namespaces: list[str]

    def summary(self) -> str:
        return f"signed in to Hugging Face as {self.user}"


@dataclass(frozen=True)
class HfSignedOut(Event):
    kind: ClassVar[str] = "hf_signed_out"

    def summary(self) -> str:
        return "signed out of Hugging Face"
