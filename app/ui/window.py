"""The main window: Nodes (list and detail), Jobs, Settings, Batches. Closing it hides it; the app
stays in the tray until Quit."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QResizeEvent, QShowEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QPushButton,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.services.api import glossary
from app.ui.aio import Tasks
from app.ui.facade import NodeFacade
from app.ui.resources import app_icon
from app.ui.sizing import fit_to_screen
from app.ui.tray_model import money_line
from app.ui.views.batches import BatchesView
from app.ui.views.jobs import JobsView
from app.ui.views.node_detail import NodeDetail
from app.ui.views.nodes import NodeList
from app.ui.views.settings import SettingsView

COALESCE_MS = 200
COST_REFRESH_MS = 5000
NARROW_CHARS = 120


class MainWindow(QMainWindow):
    add_rented_requested = Signal()
    sign_in_requested = Signal(str)  # a provider's key: its sign-in page alone
    shown = Signal()

    def __init__(self, facade: NodeFacade, tasks: Tasks) -> None:
        super().__init__()
        self.facade, self.tasks = facade, tasks
        self.setWindowTitle(f"Pairwise — {facade.name}")
        self.setWindowIcon(app_icon())
        fit_to_screen(self, width_chars=200, height_lines=42)
        central = QWidget()
        outer = QVBoxLayout(central)
        header = QHBoxLayout()
        self.status = QLabel("")
        self.status.setObjectName("statusLine")
        add = QPushButton("Add rented GPU…")
        add.setObjectName("addRented")
        add.clicked.connect(self.add_rented_requested.emit)
        header.addWidget(self.status, 1)
        header.addWidget(add)
        outer.addLayout(header)
        self.money = QLabel("")  # what bills now comes before anything else a person reads
        self.money.setObjectName("moneyLine")
        self.money.setWordWrap(True)
        self.money.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        outer.addWidget(self.money)
        self.tabs = QTabWidget()
        outer.addWidget(self.tabs)
        self.setCentralWidget(central)

        self.node_list = NodeList(facade)
        self.detail = NodeDetail(facade, tasks)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.node_list)
        split.addWidget(self.detail)
        split.setStretchFactor(0, 3)  # the table keeps its columns readable; the detail takes what is left
        split.setStretchFactor(1, 2)
        split.setCollapsible(0, False)
        self.split = split
        self.node_list.node_selected.connect(self.detail.show_node)
        self.detail.changed.connect(self.refresh_soon)
        self.jobs = JobsView(facade)
        self.batches = BatchesView(facade, tasks)
        self.settings = SettingsView(facade, tasks)
        self.settings.sign_in_requested.connect(self.sign_in_requested.emit)
        self.tabs.addTab(split, "Nodes")
        self.tabs.addTab(self.jobs, "Jobs")
        self.tabs.addTab(self.settings, "Settings")
        self.tabs.addTab(self.batches, "Batches")  # after Settings: existing tab indexes stay as they were
        self.tabs.currentChanged.connect(lambda _i: self.refresh())

        self._pending = QTimer(self)
        self._pending.setSingleShot(True)
        self._pending.setInterval(COALESCE_MS)
        self._pending.timeout.connect(self.refresh)
        self._periodic = QTimer(self)
        self._periodic.setInterval(COST_REFRESH_MS)  # running costs and durations move without events
        self._periodic.timeout.connect(self._tick)

    def refresh_soon(self) -> None:
        if self.isVisible() and not self._pending.isActive():
            self._pending.start()

    def refresh(self) -> None:
        status = self.facade.status()
        self.status.setText(f"{status['name']} · apps use http://{status['listen']} · "
                            f"{glossary.plural(int(status['models']), 'model')} · "
                            f"{glossary.plural(int(status['active_jobs']), 'request')} running")
        line = money_line(self.facade.rented())
        self.money.setText(line)
        self.money.setVisible(bool(line))
        tab = self.tabs.currentIndex()
        if tab == 0:
            self.node_list.refresh()
            self.detail.refresh()
        elif tab == 1:
            self.jobs.refresh()
        elif tab == 2:
            self.settings.refresh()
        elif self.tabs.widget(tab) is self.batches:
            self.batches.refresh()

    def _tick(self) -> None:
        # Costs and durations move without events; Settings does not (and reads the keyring).
        if self.tabs.currentIndex() != 2:
            self.refresh()

    def show_node(self, name: str) -> None:
        self.tabs.setCurrentIndex(0)
        self.bring_forward()
        self.node_list.refresh()
        if self.node_list.select(name):
            self.detail.show_node(name)

    def open_engines(self) -> None:
        """From the welcome's Add an engine…: Settings, the cursor in the new engine's name."""
        self.tabs.setCurrentIndex(2)
        self.bring_forward()
        self.settings.engine_name.setFocus()

    def raise_budget(self, name: str) -> None:
        """From a budget pause (tray menu or its notification): the node's budget, ready to edit."""
        self.show_node(name)
        self.detail.raise_budget()

    def delete_node(self, name: str) -> None:
        """From the tray menu: the node, and the same question its Delete button asks (what is lost)."""
        self.show_node(name)
        if self.detail.name == name:
            self.detail.delete_button.click()

    def bring_forward(self) -> None:
        if self.isMinimized():
            self.showNormal()
        self.show()
        self.raise_()
        self.activateWindow()

    def shutdown(self) -> None:
        """Before the node stops: no more snapshots (its database is about to close)."""
        self._periodic.stop()
        self._pending.stop()
        self.hide()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt's name
        # On a narrow window the detail goes below the table instead of squeezing its columns.
        narrow = event.size().width() < self.fontMetrics().averageCharWidth() * NARROW_CHARS
        self.split.setOrientation(Qt.Orientation.Vertical if narrow else Qt.Orientation.Horizontal)
        super().resizeEvent(event)

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        self.refresh()
        self._periodic.start()
        self.shown.emit()

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt's name
        # Closing the window keeps Pairwise in the tray; Quit is in the tray menu.
        event.ignore()
        self._periodic.stop()
        self.hide()
