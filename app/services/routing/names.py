"""One model under many names: the user's word that names are one model (``pairwise models same``).

A model has a different name on every engine (``qwen2.5:7b`` in Ollama, ``Qwen/Qwen2.5-7B-Instruct`` on
an endpoint, ``bartowski/Qwen2.5-7B-Instruct-GGUF`` in llama.cpp). Pairwise never decides they are one
model (a Q4 GGUF and a bf16 checkpoint are one only because the user says so); once the user says it,
every copy on this node that serves any of the names serves all of them. Groups are kept in settings
(written atomically, so a change is saved whole or not at all), with the groups before the last change
so it can be undone.
"""

from __future__ import annotations

from app.services.errors import ConfigError, NotFound
from app.services.translate.shapes import canonical_model
from app.settings import NodeSettings, SettingsStore

MAX_NAME = 300
MAX_GROUP = 32


def clean_name(name: str) -> str:
    name = name.strip()
    if not name or len(name) > MAX_NAME or any(c.isspace() or not c.isprintable() for c in name):
        raise ConfigError(f"{name[:60]!r} is not a model name (1-{MAX_NAME} printable characters, no spaces)")
    return name


class ModelNames:
    """The groups of names the user linked, and the lookups routing makes of them."""

    def __init__(self, settings: NodeSettings, store: SettingsStore | None) -> None:
        self.settings, self.store = settings, store
        self._index: dict[str, list[str]] = {}
        self._reindex()

    def _reindex(self) -> None:
        self._index = {}
        for group in self.settings.model_names:
            canon = [canonical_model(n) for n in group]
            for name in canon:
                self._index[name] = canon

    def groups(self) -> list[list[str]]:
        return [list(g) for g in self.settings.model_names]

    def names_of(self, canonical: str) -> list[str]:
        """Every canonical name of the model, the one asked first."""
        group = self._index.get(canonical)
        if group is None:
            return [canonical]
        return [canonical, *(n for n in group if n != canonical)]

    def group_of(self, name: str) -> list[str]:
        """The names as the user wrote them, for the model ``name`` belongs to (just ``name`` if unlinked)."""
        canonical = canonical_model(name)
        for group in self.settings.model_names:
            if canonical in {canonical_model(n) for n in group}:
                return list(group)
        return [name]

    def same(self, names: list[str]) -> list[str]:
        """Link the names as one model (joining any group one of them is in); returns the model's names."""
        cleaned = list(dict.fromkeys(clean_name(n) for n in names))
        if len({canonical_model(n) for n in cleaned}) < 2:
            raise ConfigError("name at least two different names to link as one model")
        merged: list[str] = []
        kept: list[list[str]] = []
        wanted = {canonical_model(n) for n in cleaned}
        for group in self.settings.model_names:
            if wanted & {canonical_model(n) for n in group}:
                merged.extend(group)
            else:
                kept.append(list(group))
        seen: set[str] = set()
        joined = []
        for name in [*merged, *cleaned]:
            if canonical_model(name) not in seen:
                seen.add(canonical_model(name))
                joined.append(name)
        if len(joined) > MAX_GROUP:
            raise ConfigError(f"a model may have at most {MAX_GROUP} names")
        self._save([*kept, joined])
        return joined

    def unlink(self, names: list[str]) -> list[list[str]]:
        """Take names out of the models they were linked into; returns the groups that changed."""
        gone = {canonical_model(clean_name(n)) for n in names}
        found = False
        groups: list[list[str]] = []
        changed: list[list[str]] = []
        for group in self.settings.model_names:
            left = [n for n in group if canonical_model(n) not in gone]
            if len(left) != len(group):
                found = True
                changed.append(left)
            if len(left) >= 2:
                groups.append(left)
        if not found:
            raise NotFound(f"{', '.join(names)} is not linked to any other name")
        self._save(groups)
        return changed

    def undo(self) -> list[list[str]]:
        """Back to the groups before the last change (once: an undo is undone by undoing again)."""
        before = self.settings.model_names_before
        if before is None:
            raise NotFound("no change of model names to undo")
        self._save([list(g) for g in before])
        return self.groups()

    def _save(self, groups: list[list[str]]) -> None:
        previous, previous_before = self.settings.model_names, self.settings.model_names_before
        self.settings.model_names_before = [list(g) for g in previous]
        self.settings.model_names = groups
        if self.store is not None:
            try:
                self.store.save(self.settings)
            except OSError as exc:  # not saved: not applied either
                self.settings.model_names, self.settings.model_names_before = previous, previous_before
                raise ConfigError(f"the model names could not be saved ({exc}); nothing changed") from exc
        self._reindex()
