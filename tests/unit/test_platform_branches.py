"""The platform layer's Windows and macOS branches, with their system calls faked; Linux for real."""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import errno
import functools
import os
import plistlib
import signal
import socket
import stat
import sys
import time
import types
from pathlib import Path
from typing import Any

import pytest

from app.services.platform import autostart, clock, hardware, lock, permissions, signals, sockets

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="exercises the real POSIX calls")


# -- the single-instance lock ----------------------------------------------------------------------------


@posix_only
def test_lock_is_exclusive_until_released(tmp_path: Path) -> None:
    first, second = lock.InstanceLock(tmp_path / "node.lock"), lock.InstanceLock(tmp_path / "node.lock")
    assert first.try_acquire() and first.held
    assert not second.try_acquire() and not second.held
    first.release()
    assert second.try_acquire()
    second.release()


class FakeMsvcrt(types.ModuleType):
    """``msvcrt.locking`` over a table of locked files (byte 0), keyed by inode as Windows keys by file."""

    LK_NBLCK, LK_UNLCK = 2, 0

    def __init__(self) -> None:
        super().__init__("msvcrt")
        self.locked: dict[int, int] = {}
        self.calls: list[tuple[int, int]] = []

    def locking(self, fd: int, mode: int, nbytes: int) -> None:
        assert nbytes == 1 and os.lseek(fd, 0, os.SEEK_CUR) == 0
        key = os.fstat(fd).st_ino
        self.calls.append((mode, nbytes))
        if mode == self.LK_NBLCK:
            if key in self.locked:
                raise PermissionError(13, "Permission denied")
            self.locked[key] = fd
        elif mode == self.LK_UNLCK:
            self.locked.pop(key, None)


def test_lock_on_windows_uses_msvcrt_locking(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeMsvcrt()
    monkeypatch.setitem(sys.modules, "msvcrt", fake)
    monkeypatch.setattr(sys, "platform", "win32")
    first, second = lock.InstanceLock(tmp_path / "node.lock"), lock.InstanceLock(tmp_path / "node.lock")
    assert first.try_acquire()
    assert not second.try_acquire()
    first.release()
    assert fake.locked == {}
    assert second.try_acquire()
    second.release()
    assert fake.calls == [(2, 1), (2, 1), (0, 1), (2, 1), (0, 1)]


# -- stop signals -----------------------------------------------------------------------------------------


@posix_only
async def test_sigterm_stops_through_the_loop_on_posix() -> None:
    stop, uninstall = signals.stop_event(asyncio.get_running_loop())
    try:
        os.kill(os.getpid(), signal.SIGTERM)
        await asyncio.wait_for(stop.wait(), timeout=30)
    finally:
        uninstall()
    assert signals.stop_signals() == (signal.SIGINT, signal.SIGTERM)


async def test_windows_ctrl_c_and_ctrl_break_go_through_signal_signal(monkeypatch: pytest.MonkeyPatch) -> None:
    sigbreak = signal.Signals.SIGUSR2 if hasattr(signal, "SIGUSR2") else signal.SIGTERM  # stands in for SIGBREAK
    monkeypatch.setattr(signal, "SIGBREAK", sigbreak, raising=False)
    installed: dict[int, Any] = {}
    monkeypatch.setattr(signal, "signal", lambda sig, handler: installed.__setitem__(sig, handler))
    monkeypatch.setattr(signal, "getsignal", lambda sig: "previous")
    loop = asyncio.get_running_loop()

    def no_loop_handlers(*_: Any) -> None:
        raise AssertionError("Windows' loop has no add_signal_handler; it must not be called")

    monkeypatch.setattr(loop, "add_signal_handler", no_loop_handlers)
    monkeypatch.setattr(sys, "platform", "win32")
    stop, uninstall = signals.stop_event(loop)
    assert set(installed) == {signal.SIGINT, sigbreak}
    installed[sigbreak](sigbreak, None)  # Ctrl+Break, as Windows delivers it to the main thread
    await asyncio.wait_for(stop.wait(), timeout=30)
    uninstall()
    assert installed == {signal.SIGINT: "previous", sigbreak: "previous"}


# -- memory and GPUs --------------------------------------------------------------------------------------


def test_memory_on_linux_from_sysconf() -> None:
    hardware.total_memory_bytes.cache_clear()
    if sys.platform.startswith("linux"):
        assert hardware.total_memory_bytes() == os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    summary = hardware.hardware_summary()
    assert summary["cpus"] == os.cpu_count() and summary["memory_gb"] and summary["memory_gb"] > 0


def test_memory_on_windows_from_global_memory_status_ex(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, int] = {}

    def global_memory_status_ex(pointer: Any) -> int:
        status = pointer._obj  # the structure byref() points at
        seen["length"] = status.dwLength
        status.ullTotalPhys = 24 * 2**30
        return 1

    fake_windll = types.SimpleNamespace(kernel32=types.SimpleNamespace(GlobalMemoryStatusEx=global_memory_status_ex))
    monkeypatch.setattr(ctypes, "windll", fake_windll, raising=False)
    monkeypatch.setattr(sys, "platform", "win32")
    hardware.total_memory_bytes.cache_clear()
    try:
        assert hardware.total_memory_bytes() == 24 * 2**30
        assert hardware.memory_gb() == 24.0
    finally:
        hardware.total_memory_bytes.cache_clear()
    assert seen["length"] == 64  # sizeof(MEMORYSTATUSEX): Windows refuses a wrong dwLength


def test_memory_on_macos_from_sysctl_hw_memsize(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[bytes] = []

    class FakeLibc:
        def sysctlbyname(self, name: bytes, value: Any, size: Any, new: Any, new_size: Any) -> int:
            asked.append(name)
            assert size._obj.value == 8
            value._obj.value = 36 * 2**30
            return 0

    monkeypatch.setattr(ctypes.util, "find_library", lambda name: "libc.dylib" if name == "c" else None)
    monkeypatch.setattr(ctypes, "CDLL", lambda path: FakeLibc())
    monkeypatch.setattr(sys, "platform", "darwin")
    monkeypatch.setattr(hardware.platform, "machine", lambda: "arm64")
    hardware.total_memory_bytes.cache_clear()
    try:
        summary = hardware.hardware_summary()
    finally:
        hardware.total_memory_bytes.cache_clear()
    assert asked == [b"hw.memsize"] and summary["memory_gb"] == 36.0
    assert summary["gpus"] == [{"name": "Apple silicon (unified memory)", "vram_gb": None}]


@posix_only
async def test_nvidia_smi_where_present(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "nvidia-smi"
    fake.write_text("#!/bin/sh\necho 'NVIDIA GeForce RTX 3090, 24576'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert await hardware.nvidia_gpus() == [{"name": "NVIDIA GeForce RTX 3090", "vram_gb": 24.0}]
    probed = await hardware.probe_hardware()
    assert probed["gpus"] == [{"name": "NVIDIA GeForce RTX 3090", "vram_gb": 24.0}]
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    assert await hardware.nvidia_gpus() == []


def test_amd_gpus_from_sysfs(tmp_path: Path) -> None:
    device = tmp_path / "card0" / "device"
    device.mkdir(parents=True)
    (device / "mem_info_vram_total").write_text(str(16 * 2**30))
    (device / "product_name").write_text("Radeon RX 7800 XT\n")
    assert hardware.amd_gpus(tmp_path) == [{"name": "Radeon RX 7800 XT", "vram_gb": 16.0}]


# -- the clock that counts sleep --------------------------------------------------------------------------


def test_awake_clock_source_per_platform(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "win32")
    assert clock.pick_awake_clock() is time.monotonic  # GetTickCount64 / QueryPerformanceCounter count sleep
    monkeypatch.setattr(sys, "platform", "darwin")
    darwin = clock.pick_awake_clock()
    assert isinstance(darwin, functools.partial) and darwin.args == (time.CLOCK_MONOTONIC,)
    monkeypatch.setattr(sys, "platform", "linux")
    if hasattr(time, "CLOCK_BOOTTIME"):
        linux = clock.pick_awake_clock()
        assert isinstance(linux, functools.partial) and linux.args == (time.CLOCK_BOOTTIME,)
        before = time.clock_gettime(time.CLOCK_BOOTTIME)
        assert before <= linux() <= time.clock_gettime(time.CLOCK_BOOTTIME)


# -- permissions -------------------------------------------------------------------------------------


@posix_only
def test_posix_modes_are_checked_and_tightened(tmp_path: Path) -> None:
    home = tmp_path / "home"
    permissions.make_private_dir(home)
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    assert permissions.loose_permissions(home, permissions.PRIVATE_DIR) is None
    home.chmod(0o755)
    problem = permissions.loose_permissions(home, permissions.PRIVATE_DIR)
    assert problem is not None and "0755" in problem and "0700" in problem
    permissions.tighten(home, permissions.PRIVATE_DIR)
    assert stat.S_IMODE(home.stat().st_mode) == 0o700


def test_windows_does_not_pretend_with_chmod(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "key.pem"
    target.write_text("x")

    def refuse(*_: Any) -> None:
        raise AssertionError("chmod on Windows only toggles read-only; it must not be used to pretend privacy")

    monkeypatch.setattr(os, "chmod", refuse)
    monkeypatch.setattr(os, "fchmod", refuse, raising=False)
    monkeypatch.setattr(sys, "platform", "win32")
    assert not permissions.modes_apply()
    permissions.tighten(target, permissions.PRIVATE_FILE)
    permissions.tighten_fd(0, permissions.PRIVATE_FILE)
    assert permissions.loose_permissions(target, permissions.PRIVATE_FILE) is None
    assert "ACL" in permissions.privacy_note(tmp_path)


# -- autostart --------------------------------------------------------------------------------------------


def test_autostart_linux_xdg_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    entry = autostart.Autostart(["/opt/pair wise/bin/python", "-m", "app", "--home", "/h"])
    assert not entry.enabled()
    entry.enable()
    text = (tmp_path / "autostart" / "pairwise.desktop").read_text()
    assert 'Exec="/opt/pair wise/bin/python" -m app --home /h\n' in text and "Type=Application" in text
    assert entry.enabled() and entry.where() == str(tmp_path / "autostart" / "pairwise.desktop")
    entry.disable()
    assert not entry.enabled() and not (tmp_path / "autostart" / "pairwise.desktop").exists()


def test_autostart_macos_launch_agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    monkeypatch.setenv("HOME", str(tmp_path))
    entry = autostart.Autostart(["/Applications/Pairwise.app/Contents/MacOS/pairwise"])
    entry.enable()
    agent = plistlib.loads((tmp_path / "Library" / "LaunchAgents" / "org.pairwise.tray.plist").read_bytes())
    assert agent["Label"] == "org.pairwise.tray" and agent["RunAtLoad"] is True and agent["KeepAlive"] is False
    assert agent["ProgramArguments"] == ["/Applications/Pairwise.app/Contents/MacOS/pairwise"]
    entry.disable()
    assert not entry.enabled()


class FakeWinreg(types.ModuleType):
    HKEY_CURRENT_USER, KEY_READ, KEY_SET_VALUE, REG_SZ = "HKCU", 1, 2, 1

    def __init__(self) -> None:
        super().__init__("winreg")
        self.values: dict[tuple[str, str], tuple[str, int]] = {}

    class _Key:
        def __init__(self, reg: FakeWinreg, path: str) -> None:
            self.reg, self.path = reg, path

        def __enter__(self) -> FakeWinreg._Key:
            return self

        def __exit__(self, *_: object) -> None:
            return None

    def OpenKey(self, root: str, path: str, reserved: int, access: int) -> FakeWinreg._Key:  # noqa: N802
        return self._Key(self, f"{root}\\{path}")

    CreateKeyEx = OpenKey

    def QueryValueEx(self, key: FakeWinreg._Key, name: str) -> tuple[str, int]:  # noqa: N802
        if (key.path, name) not in self.values:
            raise FileNotFoundError(2, "The system cannot find the file specified")
        return self.values[(key.path, name)]

    def SetValueEx(self, key: FakeWinreg._Key, name: str, reserved: int, kind: int, value: str) -> None:  # noqa: N802
        self.values[(key.path, name)] = (value, kind)

    def DeleteValue(self, key: FakeWinreg._Key, name: str) -> None:  # noqa: N802
        if self.values.pop((key.path, name), None) is None:
            raise FileNotFoundError(2, "The system cannot find the file specified")


def test_autostart_windows_run_key(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeWinreg()
    monkeypatch.setitem(sys.modules, "winreg", fake)
    monkeypatch.setattr(sys, "platform", "win32")
    entry = autostart.Autostart([r"C:\Program Files\Pairwise\pairwise.exe"])
    assert not entry.enabled()
    entry.enable()
    run = r"HKCU\Software\Microsoft\Windows\CurrentVersion\Run"
    assert fake.values == {(run, "Pairwise"): (r'"C:\Program Files\Pairwise\pairwise.exe"', 1)}
    assert entry.enabled() and entry.where().endswith(r"CurrentVersion\Run (Pairwise)")
    entry.disable()
    entry.disable()  # already off: nothing to remove, no error
    assert fake.values == {} and not entry.enabled()


# -- listening sockets ------------------------------------------------------------------------------------


def test_windows_binds_without_reuseaddr_and_knows_its_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    assert sockets.reuse_address() is (sys.platform != "win32")
    taken = OSError(errno.EADDRINUSE, "Address already in use")
    assert sockets.address_in_use(taken) and not sockets.address_in_use(OSError(errno.ENOENT, "x"))
    monkeypatch.setattr(sys, "platform", "win32")
    assert not sockets.reuse_address()  # SO_REUSEADDR on Windows lets a second program share the port
    refused = OSError(errno.EACCES, "An attempt was made to access a socket in a way forbidden")
    refused.winerror = 10013  # type: ignore[attr-defined]  # what Windows sets on its OSErrors
    assert sockets.address_in_use(refused)


def test_port_is_free_and_who_holds_it() -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)
        port = holder.getsockname()[1]
        assert not sockets.port_is_free("127.0.0.1", port)
        found = sockets.listening_process(port)
        assert found is not None and found.pid == os.getpid()
        assert found.describe() == f"{found.name} (process {os.getpid()})"
    assert sockets.port_is_free("127.0.0.1", port)


def test_macos_lists_only_own_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    """macOS refuses the system-wide socket list to non-root: the user's own processes are asked."""
    import psutil

    def refuse(*_: Any, **__: Any) -> None:
        raise psutil.AccessDenied()

    monkeypatch.setattr(psutil, "net_connections", refuse)
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)
        found = sockets.listening_process(holder.getsockname()[1])
    assert found is not None and found.pid == os.getpid()


def test_tray_command_per_installation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert autostart.tray_command() == [sys.executable, "-m", "app"]
    assert autostart.tray_command(tmp_path / "h")[-2:] == ["--home", str(tmp_path / "h")]
    console, windowed = tmp_path / "pairwise.exe", tmp_path / "pairwise-tray.exe"
    console.write_bytes(b"")
    windowed.write_bytes(b"")
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", str(console))
    monkeypatch.setattr(sys, "platform", "win32")
    assert autostart.tray_command() == [str(windowed)]  # no console window at login
    monkeypatch.setattr(sys, "platform", "darwin")
    assert autostart.tray_command() == [str(console)]
