"""Windows processes under Wine, driven from Linux: the embeddable CPython the lane installed
(tests/windows/setup.sh), this checkout on its path, stdio as pipes (Wine 8 cannot give a Windows
program a Unix file as stdout: CPython then fails at start with WinError 6)."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
CACHE = Path(os.environ.get("PAIRWISE_WINE_CACHE") or Path.home() / ".cache" / "pairwise-wine")
PYTHON = CACHE / "python" / "python.exe"


def win(path: Path) -> str:
    """A Linux path as Windows programs under Wine see it (drive Z: is /)."""
    return "Z:" + str(path.resolve()).replace("/", "\\")


def env(**extra: str) -> dict[str, str]:
    """No PYTHONUTF8 and no PYTHONIOENCODING: the code page (cp1252) is what Windows would use."""
    base = {k: v for k, v in os.environ.items() if k not in ("PYTHONUTF8", "PYTHONIOENCODING", "PYTHONPATH")}
    base.update(WINEPREFIX=str(CACHE / "prefix"), WINEDEBUG="-all", PAIRWISE_MDNS="off", PYTHONUNBUFFERED="1")
    base.update(extra)
    return base


def run(*args: str, timeout: float = 180, stdin: str = "", **extra: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["wine", str(PYTHON), *args], input=stdin.encode("utf-8"), capture_output=True,
                          env=env(**extra), timeout=timeout, cwd=ROOT)


def pairwise(home: Path, *args: str, stdin: str = "", timeout: float = 180) -> subprocess.CompletedProcess[bytes]:
    """A CLI command as a second Windows process."""
    return run("-m", "app", "--home", win(home), *args, stdin=stdin, timeout=timeout)


class Proc:
    """A long-running Windows process; its output (a pipe) is collected as it comes."""

    def __init__(self, *args: str, **extra: str) -> None:
        self.proc = subprocess.Popen(["wine", str(PYTHON), *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, env=env(**extra), cwd=ROOT)
        self.output = bytearray()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for chunk in iter(lambda: self.proc.stdout.read1(65536), b""):  # type: ignore[union-attr,attr-defined]
            self.output += chunk

    @property
    def text(self) -> str:
        return self.output.decode("utf-8")  # what the node writes to a pipe: UTF-8, whatever the code page

    def wait_for(self, what: str, check: object, timeout: float = 180) -> None:
        deadline = time.monotonic() + timeout
        while not check():  # type: ignore[operator]
            if self.proc.poll() is not None:
                raise AssertionError(f"exited ({self.proc.returncode}) before {what}: {self.text[-3000:]}")
            if time.monotonic() > deadline:
                raise AssertionError(f"no {what} after {timeout} s: {self.text[-3000:]}")
            time.sleep(0.05)

    def ctrl_c(self, timeout: float = 90) -> int:
        """Ctrl+C as Wine delivers a terminal's: SIGINT becomes the console's CTRL_C_EVENT."""
        self.proc.send_signal(2)
        code = self.proc.wait(timeout)
        self._reader.join(10)
        return code

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(30)
