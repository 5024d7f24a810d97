"""Listening sockets: binding the way each OS means it, and who holds a port.

``SO_REUSEADDR`` means two things: on POSIX, "bind even while old connections of a previous run
linger in TIME_WAIT" (what a server restarting wants); on Windows, "bind even while another
program listens on the port" (port stealing — Ollama and Pairwise would then share 11434 and
split the requests at random). So it is set on POSIX only.
"""

from __future__ import annotations

import errno
import socket
import sys
from dataclasses import dataclass

WSAEADDRINUSE = 10048
WSAEACCES = 10013  # Windows answers this when another program holds the port exclusively


def reuse_address() -> bool:
    return sys.platform != "win32"


def address_in_use(exc: BaseException) -> bool:
    """Whether a bind failed because the address is taken (errno differs per OS)."""
    if not isinstance(exc, OSError):
        return False
    if exc.errno == errno.EADDRINUSE:
        return True
    return sys.platform == "win32" and getattr(exc, "winerror", None) in (WSAEADDRINUSE, WSAEACCES)


def port_is_free(host: str, port: int) -> bool:
    """Can a listener bind host:port now (with the options the node's own listeners use)?"""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        if reuse_address():
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
            sock.listen(1)
        except OSError as exc:
            if address_in_use(exc):
                return False
            raise
    return True


@dataclass(frozen=True)
class ListeningProcess:
    pid: int
    name: str
    command: list[str]

    def describe(self) -> str:
        return f"{self.name} (process {self.pid})"


def listening_process(port: int) -> ListeningProcess | None:
    """The process listening on ``port``, when the OS will tell this user (psutil; None otherwise).

    Linux and Windows list every socket with its process; macOS lists them only to root, so there
    the user's own processes are asked one by one.
    """
    import psutil

    try:
        connections = psutil.net_connections(kind="tcp")
    except psutil.AccessDenied:
        return _own_process_listening(port)
    for conn in connections:
        if conn.status == psutil.CONN_LISTEN and conn.laddr and conn.laddr.port == port and conn.pid:
            return _describe(conn.pid)
    return None


def _own_process_listening(port: int) -> ListeningProcess | None:
    import psutil

    for proc in psutil.process_iter(["pid"]):
        try:
            for conn in proc.net_connections(kind="tcp"):
                if conn.status == psutil.CONN_LISTEN and conn.laddr and conn.laddr.port == port:
                    return _describe(proc.pid)
        except (psutil.AccessDenied, psutil.NoSuchProcess, psutil.ZombieProcess):
            continue
    return None


def _describe(pid: int) -> ListeningProcess | None:
    import psutil

    try:
        proc = psutil.Process(pid)
        name = proc.name()
        try:
            command = proc.cmdline()
        except (psutil.AccessDenied, psutil.ZombieProcess):
            command = []
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return None
    return ListeningProcess(pid, name, command)
