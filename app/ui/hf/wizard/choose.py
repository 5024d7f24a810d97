"""Choosing what to rent: a model from Hugging Face's catalog (search, or type any repository
id), then an Endpoint or a Batch window (window.py) and a GPU from Hugging Face's list with price
per hour, GPU memory and free quota (for a window: the Jobs flavors, with the whole window's cost).
GPUs that cannot be rented now are listed, greyed, with the reason."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWizardPage,
)

from app.services.api import glossary
from app.services.hf.api import CatalogRow, HardwareOffer
from app.ui.aio import Tasks
from app.ui.facade import NodeFacade
from app.ui.hf.facade import HfFacade
from app.ui.hf.wizard.fit import cheapest_fit, fits, is_embedding, memory_needed_gb, size_hint
from app.ui.hf.wizard.state import WizardState, state_of
from app.ui.hf.wizard.window import WINDOW, KindChoice, flavor_of, flavor_row, window_preview
from app.ui.sizing import scrolling
from app.ui.wizard.context import ContextChoice

SEARCH_DELAY_MS = 300
GPU_COLUMNS = ["GPU", "GPU memory", "Fits the model", "Price", "Free quota", "Where", "Available"]


class ModelPage(QWizardPage):
    rent_state: WizardState | None = None

    def __init__(self, hf: HfFacade, tasks: Tasks) -> None:
        super().__init__()
        self.hf, self.tasks = hf, tasks
        self.setTitle("Choose a model")
        self.setSubTitle("From Hugging Face's catalog of models tested on Inference Endpoints, "
                         "or type any repository id.")
        layout = scrolling(self, QVBoxLayout)
        self.search = QLineEdit()
        self.search.setObjectName("modelSearch")
        self.search.setPlaceholderText("Search the catalog…")
        self.results = QListWidget()
        self.results.setObjectName("modelResults")
        self.repo = QLineEdit()
        self.repo.setObjectName("repoId")
        self.repo.setPlaceholderText("owner/model, e.g. HuggingFaceTB/SmolLM2-1.7B-Instruct")
        self.status = QLabel("")
        self.status.setWordWrap(True)
        layout.addWidget(self.search)
        layout.addWidget(self.results)
        layout.addWidget(QLabel("Repository id"))
        layout.addWidget(self.repo)
        layout.addWidget(self.status)
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(SEARCH_DELAY_MS)
        self._debounce.timeout.connect(self.load)
        self.search.textChanged.connect(lambda _t: self._debounce.start())
        self.results.currentItemChanged.connect(self._picked)
        self.repo.textChanged.connect(lambda _t: self.completeChanged.emit())
        self.loads = 0  # finished catalog loads (tests wait on it)

    def initializePage(self) -> None:  # noqa: N802 - Qt's name
        if not self.results.count():
            self.load()

    def load(self) -> None:
        query = self.search.text().strip() or None
        self.status.setText("Loading the catalog…")

        async def run() -> None:
            models = await self.hf.catalog(query)
            if query != (self.search.text().strip() or None):
                return  # the user typed on; a newer search is coming
            self.fill(models, query)
            self.loads += 1

        self.tasks.spawn(run(), name="catalog", on_error=lambda t, m: self.status.setText(f"{t}: {m}"))

    def fill(self, models: list[CatalogRow], query: str | None) -> None:
        """Chat and text models first, embedding models apart under their own heading, each with
        its size and the GPU memory it needs."""
        self.results.clear()
        chat = [m for m in models if not is_embedding(m)]
        embedding = [m for m in models if is_embedding(m)]
        for heading, group in (("Chat and text generation", chat), ("Embeddings (for search, not chat)", embedding)):
            if not group:
                continue
            header = QListWidgetItem(heading)
            header.setFlags(Qt.ItemFlag.NoItemFlags)
            font = header.font()
            font.setBold(True)
            header.setFont(font)
            self.results.addItem(header)
            for model in group:
                recipes = model.get("recipes") or []
                label = f"{model['repo_id']}  ·  {size_hint(model)}"
                if recipes:
                    label += f"  ·  {glossary.plural(len(recipes), 'tested setup')}"
                item = QListWidgetItem(label)
                item.setData(Qt.ItemDataRole.UserRole, model["repo_id"])
                item.setToolTip(f"Task: {model.get('task') or 'not stated'}")
                self.results.addItem(item)
        where = f" matching “{query}”" if query else " in the catalog"
        if not models:
            self.status.setText(f"No models{where}. Try another search, or type a repository id below.")
        else:
            self.status.setText(glossary.plural(len(models), "model") + where)

    def _picked(self, item: QListWidgetItem | None) -> None:
        if item is not None and item.data(Qt.ItemDataRole.UserRole):
            self.repo.setText(str(item.data(Qt.ItemDataRole.UserRole)))

    def model(self) -> str:
        return self.repo.text().strip()

    def isComplete(self) -> bool:  # noqa: N802 - Qt's name
        parts = self.model().split("/")
        return len(parts) == 2 and all(parts)

    def validatePage(self) -> bool:  # noqa: N802 - Qt's name
        wizard = state_of(self)
        wizard.choice.model = self.model()
        return True


def gpu_label(row: HardwareOffer) -> str:
    count = row.get("numAccelerators") or 1
    return f"{count}× {row.get('instanceType')} ({row.get('instanceSize')})"


class GpuPage(QWizardPage):
    rent_state: WizardState | None = None

    def __init__(self, facade: NodeFacade, hf: HfFacade, tasks: Tasks) -> None:
        super().__init__()
        self.facade, self.hf, self.tasks = facade, hf, tasks
        self.setTitle("Choose a GPU")
        self.setSubTitle("Hugging Face's GPUs for your account. Billing is per minute while the endpoint "
                         "initializes and runs.")
        layout = scrolling(self, QVBoxLayout)
        self.namespace = QComboBox()
        self.namespace.setObjectName("namespace")
        self.namespace_label = QLabel("Billed to")
        self.table = QTableWidget(0, len(GPU_COLUMNS))
        self.table.setObjectName("gpuTable")
        self.table.setHorizontalHeaderLabels(GPU_COLUMNS)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.status = QLabel("")
        self.status.setWordWrap(True)
        self.kind = KindChoice()
        layout.addWidget(self.kind)
        self.context = ContextChoice()
        layout.addWidget(self.context)
        self.suggestion = QLabel("")
        self.suggestion.setObjectName("gpuSuggestion")
        self.suggestion.setWordWrap(True)
        layout.addWidget(self.namespace_label)
        layout.addWidget(self.namespace)
        layout.addWidget(self.table)
        layout.addWidget(self.suggestion)
        layout.addWidget(self.status)
        self.rows: list[HardwareOffer] = []
        self.table.itemSelectionChanged.connect(self.completeChanged.emit)
        self.table.itemSelectionChanged.connect(self.update_preview)
        self.namespace.currentTextChanged.connect(lambda _t: self.load())
        self.kind.group.buttonToggled.connect(lambda _b, on: self.load() if on else None)
        self.kind.changed.connect(self.update_preview)
        self.context.changed.connect(self._window_changed)
        self.loads = 0

    def initializePage(self) -> None:  # noqa: N802 - Qt's name
        wizard = state_of(self)
        names = wizard.choice.namespaces
        self.namespace.blockSignals(True)
        self.namespace.clear()
        self.namespace.addItems(names)
        self.namespace.blockSignals(False)
        self.namespace.setVisible(len(names) > 1)
        self.namespace_label.setVisible(len(names) > 1)
        model = wizard.choice.model or ""
        self.context.blockSignals(True)
        self.context.show_copies(model, self.facade.model_copies_like(model) if model else [])
        self.context.blockSignals(False)
        self.load()

    def _window_changed(self) -> None:
        """A bigger window needs more GPU memory (its KV cache): which GPUs fit, and the suggestion, follow."""
        self.fill(self.rows)
        if self.rows:
            self.suggest()

    def load(self) -> None:
        namespace = self.namespace.currentText() or None
        self.status.setText("Asking Hugging Face for GPUs…")
        self.fill([])

        async def run() -> None:
            if self.kind.kind == WINDOW:
                rows: list[HardwareOffer] = [flavor_row(f) for f in await self.facade.window_flavors() if f.get("gpu")]
            else:
                rows = [r for r in await self.hf.hardware(namespace) if r.get("accelerator") == "gpu"]
            rows.sort(key=lambda r: (r.get("unavailable_reason") is not None, r.get("pricePerHour") or 1e9))
            self.context.setVisible(self.kind.kind != WINDOW)  # a batch window serves its model's own window
            self.fill(rows)
            usable = sum(1 for r in rows if not r.get("unavailable_reason"))
            self.status.setText(f"{usable} of {glossary.plural(len(rows), 'GPU')} can be rented now.")
            self.suggest()
            self.loads += 1

        self.tasks.spawn(run(), name="hardware", on_error=lambda t, m: self.status.setText(f"{t}: {m}"))

    def context_window(self) -> int | None:
        return None if self.kind.kind == WINDOW else self.context.tokens()

    def need_gb(self) -> float | None:
        wizard = state_of(self)
        model = wizard.choice.model if wizard is not None else None
        return memory_needed_gb(model, self.context_window()) if model else None

    def suggest(self) -> None:
        """Preselect the cheapest GPU that fits the model (and the window's KV cache), and say why."""
        index, why = cheapest_fit(self.rows, self.need_gb(), self.context_window())
        self.suggestion.setText(why)
        if index is not None:
            self.table.selectRow(index)

    def fill(self, rows: list[HardwareOffer]) -> None:
        self.rows = rows
        need = self.need_gb()
        self.table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            memory = row.get("gpuMemoryGb")
            free, most = row.get("quotaFree"), row.get("quotaMax")
            fit = "–" if need is None or memory is None else ("yes" if fits(row, need) else "too small")
            cells = [gpu_label(row), f"{memory:g} GB" if memory is not None else "–", fit,
                     glossary.per_hour(row.get("pricePerHour")),
                     f"{free} of {most}" if free is not None else "–", f"{row.get('vendor')} {row.get('region')}",
                     row.get("unavailable_reason") or "yes"]
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if row.get("unavailable_reason"):
                    item.setFlags(Qt.ItemFlag.NoItemFlags)  # listed with its reason, not selectable
                    item.setToolTip(f"Cannot be rented now: {row['unavailable_reason']}")
                self.table.setItem(r, c, item)

    def select(self, instance_type: str, instance_size: str | None = None, *, vendor: str | None = None,
               region: str | None = None) -> bool:
        for r, row in enumerate(self.rows):
            wanted = {"instanceType": instance_type, "instanceSize": instance_size, "vendor": vendor, "region": region}
            if all(value is None or row.get(key) == value for key, value in wanted.items()):
                if row.get("unavailable_reason"):
                    return False
                self.table.selectRow(r)
                return True
        return False

    def selected(self) -> HardwareOffer | None:
        rows = self.table.selectionModel().selectedRows() if self.table.selectionModel() else []
        if not rows:
            return None
        row = self.rows[rows[0].row()]
        return None if row.get("unavailable_reason") else row

    def isComplete(self) -> bool:  # noqa: N802 - Qt's name
        return self.selected() is not None

    def update_preview(self) -> None:
        row = self.selected()
        self.kind.preview.setText(window_preview(flavor_of(row), self.kind.hours.value()))

    def validatePage(self) -> bool:  # noqa: N802 - Qt's name
        wizard = state_of(self)
        wizard.choice.hardware = self.selected()
        wizard.choice.namespace = self.namespace.currentText() or None
        wizard.choice.window = self.kind.window_text() if self.kind.kind == WINDOW else None
        wizard.choice.context_window = self.context_window()
        wizard.choice.same_as = [] if self.kind.kind == WINDOW else self.context.same_as()
        return True
