"""Liveness without signals, and files replaced while another process holds them (issue 28, 1 and 3).

The Windows calls are faked here (``sys.platform``, the sharing-violation error); the real ones run
in the Windows lane (``windows/suite``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.control_client import ControlClient
from app.home import Home, write_private
from app.services.cluster.identity import atomic_write
from app.services.platform import files, process
from app.services.platform.process import pid_alive


def _exited_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_pid_alive_tells_running_from_gone() -> None:
    assert pid_alive(os.getpid())
    assert not pid_alive(_exited_pid())
    assert not pid_alive(0) and not pid_alive(-1)


def test_a_zombie_is_not_a_running_node() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)  # exited, not reaped: a zombie
    try:
        assert not pid_alive(proc.pid)
    finally:
        proc.wait()


def _home_with_runtime(tmp_path: Path, pid: int) -> Home:
    home = Home(tmp_path / "home")
    home.ensure()
    write_private(home.runtime_file, json.dumps({"pid": pid, "listen": "127.0.0.1:1"}).encode())
    return home


def test_the_cli_finds_a_running_node_on_windows_without_sending_it_ctrl_c(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_signal_zero(pid: int, sig: int) -> None:
        raise AssertionError(f"os.kill({pid}, {sig}) sends CTRL_C_EVENT on Windows")

    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setattr(os, "kill", no_signal_zero)
    # psutil's Windows answer (OpenProcess + GetExitCodeProcess), faked; it runs for real in the Windows lane.
    monkeypatch.setattr(process.psutil, "pid_exists", lambda pid: pid == os.getpid())
    running = _home_with_runtime(tmp_path / "a", os.getpid())
    assert ControlClient.runtime(running) == {"pid": os.getpid(), "listen": "127.0.0.1:1"}
    stale = _home_with_runtime(tmp_path / "b", _exited_pid())
    assert ControlClient.runtime(stale) is None


def sharing_violation() -> PermissionError:
    error = PermissionError(13, "The process cannot access the file because it is being used by another process")
    error.winerror = 32  # type: ignore[attr-defined]  # what Windows sets; Linux never does
    return error


class HeldFor:
    """``os.replace`` as Windows answers it while a reader holds the target for ``times`` attempts."""

    def __init__(self, times: int) -> None:
        self.times = times
        self.attempts = 0
        self.real = os.replace

    def __call__(self, source: str | Path, target: str | Path) -> None:
        self.attempts += 1
        if self.attempts <= self.times:
            raise sharing_violation()
        self.real(source, target)


@pytest.mark.parametrize("writer", [write_private, atomic_write])
def test_a_file_held_open_is_replaced_once_the_reader_lets_go(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, writer: object) -> None:
    target = tmp_path / "settings.json"
    target.write_bytes(b"old")
    held = HeldFor(times=20)
    monkeypatch.setattr(os, "replace", held)
    writer(target, b"new \xc3\x81")  # type: ignore[operator]
    assert held.attempts == 21
    assert target.read_bytes() == b"new \xc3\x81"
    assert [p.name for p in tmp_path.iterdir()] == ["settings.json"]  # no temp file left


def test_a_file_held_for_longer_than_the_retry_is_an_error_and_the_old_file_stays(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "runtime.json"
    target.write_bytes(b"old")
    now = [0.0]
    monkeypatch.setattr(os, "replace", HeldFor(times=10**6))
    monkeypatch.setattr(files.time, "sleep", lambda s: now.__setitem__(0, now[0] + s))
    monkeypatch.setattr(files.time, "monotonic", lambda: now[0])
    with pytest.raises(PermissionError):
        write_private(target, b"new")
    assert files.RETRY_FOR_S <= now[0] < files.RETRY_FOR_S + 1
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["runtime.json"]


def test_a_permission_error_that_is_not_a_sharing_violation_is_raised_at_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    attempts = []

    def denied(source: str | Path, target: str | Path) -> None:
        attempts.append(target)
        raise PermissionError(13, "Permission denied")  # POSIX: no winerror, retrying would not help

    monkeypatch.setattr(os, "replace", denied)
    with pytest.raises(PermissionError):
        files.replace_file(tmp_path / "a", tmp_path / "b")
    assert len(attempts) == 1


def test_a_reader_waits_out_the_instant_of_a_replace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "control_token"
    path.write_bytes("tökén".encode())
    real, calls = Path.read_bytes, []

    def busy_then_real(self: Path) -> bytes:
        calls.append(self)
        if len(calls) < 3:
            raise sharing_violation()
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", busy_then_real)
    assert files.read_text(path) == "tökén"
    assert len(calls) == 3
