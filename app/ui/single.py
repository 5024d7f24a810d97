"""One tray app per home (the aw-qt lesson): a lock file decides who runs, a QLocalServer named
after the home lets a second start bring the first one's window forward.

The lock is the platform layer's ``InstanceLock`` on ``tray.lock`` in the home (an OS lock), so a crashed app leaves nothing stale
behind; whoever holds it may remove a leftover socket before listening. A second start finds the
lock held, connects to the first one's local server, says ``show`` and exits.
"""

from __future__ import annotations

import getpass
import hashlib
import sys
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

from app.services.platform.lock import InstanceLock

LOCK_NAME = "tray.lock"
SHOW = b"show\n"
CONNECT_TIMEOUT_MS = 2000


def server_name(home: Path) -> str:
    """A local-socket name per home; short, because Unix socket paths are limited to ~100 bytes."""
    digest = hashlib.sha256(str(home.resolve()).encode()).hexdigest()[:16]
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no user name in the environment nor in the password database
        user = "user"
    return f"pairwise-{user}-{digest}"


class SingleInstance(QObject):
    """``acquire()`` → True for the first instance (which then listens); False for a second one."""

    show_requested = Signal()

    def __init__(self, home: Path, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.home = home
        self.name = server_name(home)
        self._lock = InstanceLock(home / LOCK_NAME)
        self._server: QLocalServer | None = None

    def acquire(self) -> bool:
        if not self._lock.try_acquire():
            return False
        QLocalServer.removeServer(self.name)  # ours to remove: we hold the lock
        server = QLocalServer(self)
        server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        if not server.listen(self.name):
            # The lock still guarantees one instance; only "bring forward" is lost.
            print(f"pairwise: cannot listen on {self.name}: {server.errorString()}", file=sys.stderr)
        server.newConnection.connect(self._on_connection)
        self._server = server
        return True

    def _on_connection(self) -> None:
        assert self._server is not None
        while self._server.hasPendingConnections():
            sock = self._server.nextPendingConnection()
            sock.readyRead.connect(lambda s=sock: self._read(s))
            sock.disconnected.connect(sock.deleteLater)

    def _read(self, sock: QLocalSocket) -> None:
        data = bytes(sock.readAll().data())
        if SHOW.strip() in data:
            self.show_requested.emit()
        sock.disconnectFromServer()

    def release(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        self._lock.release()


def ask_first_to_show(home: Path, timeout_ms: int = CONNECT_TIMEOUT_MS) -> bool:
    """From a second start: ask the running instance to bring its window forward."""
    sock = QLocalSocket()
    sock.connectToServer(server_name(home))
    if not sock.waitForConnected(timeout_ms):
        return False
    sock.write(SHOW)
    ok = sock.waitForBytesWritten(timeout_ms)
    sock.disconnectFromServer()
    return ok
