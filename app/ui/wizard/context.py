"""The context window of the copy being rented, on the GPU step: "a bigger-context copy of a model you have".

It shows what this model's copies on the LAN hold (from the names the user linked, else a name that looks
like the same model), preselects the smallest window bigger than theirs, and offers to link the new copy's
name with theirs as one model: only when the user ticks it, since a Q4 GGUF and a bf16 checkpoint are
one model because the user says so. The GPU list then says which GPUs hold the weights and that window's
KV cache, and the suggestion its price.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QComboBox, QFormLayout, QLabel, QWidget

from app.services.api.models import CopyRow

WINDOWS = (4096, 8192, 16384, 32768, 65536, 131072)


def window_label(tokens: int) -> str:
    return f"{tokens // 1024}K tokens ({tokens:,})"


def bigger_than(windows: list[int]) -> int | None:
    """The smallest offered window bigger than every known one of the LAN copies."""
    if not windows:
        return None
    return next((w for w in WINDOWS if w > max(windows)), None)


class ContextChoice(QWidget):
    changed = Signal()

    def __init__(self) -> None:
        super().__init__()
        form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        self.combo = QComboBox()
        self.combo.setObjectName("contextWindow")
        self.combo.addItem("The engine's default for this model", None)
        for tokens in WINDOWS:
            self.combo.addItem(window_label(tokens), tokens)
        self.note = QLabel("")
        self.note.setObjectName("contextNote")
        self.note.setWordWrap(True)
        self.link = QCheckBox("")
        self.link.setObjectName("linkSame")
        form.addRow("Context window", self.combo)
        form.addRow(self.note)
        form.addRow(self.link)
        self.copies: list[CopyRow] = []
        self.repo = ""
        self.combo.currentIndexChanged.connect(lambda _i: self._changed())

    def show_copies(self, repo: str, copies: list[CopyRow]) -> None:
        """What the LAN's copies of the model hold; the window preselected is the smallest bigger one."""
        self.repo, self.copies = repo, copies
        windows = [c["window"] for c in copies if c["window"]]
        wanted = bigger_than(windows)
        self.combo.setCurrentIndex(max(0, self.combo.findData(wanted)) if wanted else 0)
        names = self.names_to_link()
        self.link.setVisible(bool(names))
        self.link.setChecked(False)
        self.link.setText(f"Link it with {', '.join(names)} as one model: a request for any of these names may go "
                          "to either copy, and one their window cannot hold goes to this one")
        self._changed()

    def tokens(self) -> int | None:
        value = self.combo.currentData()
        return int(value) if value else None

    def names_to_link(self) -> list[str]:
        seen: list[str] = []
        for copy in self.copies:
            if copy["name"].lower() != self.repo.lower() and copy["name"] not in seen:
                seen.append(copy["name"])
        return seen

    def same_as(self) -> list[str]:
        return self.names_to_link() if self.link.isVisible() and self.link.isChecked() else []

    def _changed(self) -> None:
        self.note.setText(self.describe())
        self.changed.emit()

    def describe(self) -> str:
        window = self.tokens()
        if not self.copies:
            return ("None of your machines has this model." + (f" This copy will hold {window:,} tokens a request."
                                                                 if window else ""))
        held = "; ".join(f"{c['name']} on {c['copy']} holds "
                         + (f"{c['window']:,} tokens" if c["window"] else "an unknown window") for c in self.copies)
        text = f"Your copies of this model: {held}."
        known = [c["window"] for c in self.copies if c["window"]]
        if window and known and window > max(known):
            text += (f" This copy will hold {window:,} tokens a request, {window / max(known):g}× theirs: the prompts "
                     "they cannot hold go to it.")
        elif window and known:
            text += f" A {window:,}-token window is no bigger than theirs: choose a bigger one for long prompts."
        elif window:
            text += f" This copy will hold {window:,} tokens a request."
        return text
