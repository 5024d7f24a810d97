"""Run by Windows' own CPython (under Wine): the platform layer's Windows branches for real.

Collected only by ``scripts/test-windows.sh`` (through windows/suite/test_windows.py), never by
the Linux suite: every test here calls Windows APIs.
"""

from __future__ import annotations

import json
import locale
import os
import subprocess
import sys
import time
import winreg
from pathlib import Path

import keyring
import pytest

from app.cli_rented import read_declarations
from app.control_client import ControlClient
from app.home import Home, write_private
from app.services.platform import session_end
from app.services.platform.autostart import RUN_KEY, RUN_VALUE, Autostart, tray_command
from app.services.platform.lock import InstanceLock
from app.services.platform.process import pid_alive
from app.services.secrets import SecretStore

assert sys.platform == "win32"


def _child(code: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


def _wait_for(path: Path, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while not path.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.01)


def test_the_code_page_is_not_utf8_here() -> None:
    assert locale.getpreferredencoding() == "cp1252" and not sys.flags.utf8_mode  # as on a Western PC


def test_liveness_is_asked_without_a_signal(tmp_path: Path) -> None:
    done = _child("pass")
    done.communicate()
    assert pid_alive(os.getpid()) and not pid_alive(done.pid)
    home = Home(tmp_path / "home")
    home.ensure()
    write_private(home.runtime_file, json.dumps({"pid": os.getpid(), "listen": "127.0.0.1:1"}).encode())
    assert ControlClient.runtime(home) is not None  # and this process got no Ctrl+C for asking


def test_a_file_another_process_holds_open_is_replaced_once_it_lets_go(tmp_path: Path) -> None:
    target, ready = tmp_path / "runtime.json", tmp_path / "holding"
    target.write_bytes(b"old")
    holder = _child(f"import time, pathlib; f = open({str(target)!r}, 'rb'); "
                    f"pathlib.Path({str(ready)!r}).write_bytes(b''); time.sleep(1.5); f.close()")
    _wait_for(ready, holder)
    tmp = tmp_path / "plain.tmp"
    tmp.write_bytes(b"x")
    with pytest.raises(PermissionError):  # what write_private met before: one attempt fails here
        os.replace(tmp, target)
    began = time.monotonic()
    write_private(target, "new É".encode())
    waited = time.monotonic() - began
    holder.communicate(timeout=30)
    assert target.read_bytes() == "new É".encode() and waited > 0.3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["holding", "plain.tmp", "runtime.json"]


def test_one_node_per_home(tmp_path: Path) -> None:
    lock_file, ready = tmp_path / "node.lock", tmp_path / "locked"
    holder = _child(f"from pathlib import Path; from app.services.platform.lock import InstanceLock; "
                    f"import sys; lock = InstanceLock(Path({str(lock_file)!r})); assert lock.try_acquire(); "
                    f"Path({str(ready)!r}).write_bytes(b''); sys.stdin.read()")
    _wait_for(ready, holder)
    assert not InstanceLock(lock_file).try_acquire()
    holder.communicate(b"", timeout=30)
    second = InstanceLock(lock_file)
    assert second.try_acquire()
    second.release()


def test_credentials_live_in_the_credential_manager() -> None:
    assert type(keyring.get_keyring()).__name__ == "WinVaultKeyring"
    store = SecretStore("windows-lane")
    store.set("engine:tiny", "tök-123")
    try:
        assert store.get("engine:tiny") == "tök-123"
        assert keyring.get_password("pairwise:windows-lane", "engine:tiny") == "tök-123"
    finally:
        store.delete("engine:tiny")
    assert store.get("engine:tiny") is None


def test_the_login_item_runs_a_windowed_program() -> None:
    command = tray_command()
    assert Path(command[0]).name.lower() in ("pythonw.exe", "pairwise-tray.exe")
    entry = Autostart(command)
    entry.enable()
    try:
        with winreg.OpenKey(winreg.HKEY_CURRENT_USER, RUN_KEY) as key:
            value, _ = winreg.QueryValueEx(key, RUN_VALUE)
        assert "pythonw.exe" in value.lower() or "pairwise-tray.exe" in value.lower()
        assert entry.enabled()
    finally:
        entry.disable()
    assert not entry.enabled()


def test_a_utf8_yaml_reads_on_a_cp1252_machine(tmp_path: Path) -> None:
    path = tmp_path / "gpu.yaml"
    path.write_bytes("# Árvíztűrő tükörfúrógép\nrented_node:\n  name: gpu\n  provider: openai-compatible\n"
                     "  url: https://gpu.example:8443\n  models: [m]\n  gpu: 1× A100\n".encode())
    with pytest.raises(UnicodeDecodeError):
        path.read_text()  # the locale's cp1252: what `rented apply` met before
    (decl,) = read_declarations(str(path))
    assert decl["gpu"] == "1× A100"


def test_output_to_a_pipe_holds_any_name() -> None:
    code = "import sys; {setup}print('Zoë 工作站'); sys.stdout.flush()"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONUTF8", "PYTHONIOENCODING")}
    before = subprocess.run([sys.executable, "-c", code.format(setup="")], capture_output=True, env=env, timeout=60)
    assert before.returncode != 0 and b"UnicodeEncodeError" in before.stderr
    setup = "from app.services.platform.console import setup_console_output; setup_console_output(); "
    after = subprocess.run([sys.executable, "-c", code.format(setup=setup)], capture_output=True, env=env, timeout=60)
    assert after.returncode == 0 and after.stdout.decode("utf-8").strip() == "Zoë 工作站"


def test_the_console_control_handler_registers() -> None:
    session = session_end.follow_console_session_end(lambda: None)
    assert session_end._KEEP and not session.ending
