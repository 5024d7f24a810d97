"""Start the tray app at login — written only when the user turns it on in Settings.

| OS | where | what |
| --- | --- | --- |
| Linux | ``$XDG_CONFIG_HOME/autostart/pairwise.desktop`` | an XDG autostart desktop entry |
| macOS | ``~/Library/LaunchAgents/org.pairwise.tray.plist`` | a launch agent, RunAtLoad, no KeepAlive (Quit means quit) |
| Windows | ``HKCU\\Software\\Microsoft\\Windows\\CurrentVersion\\Run``, value ``Pairwise`` | the command line |

All three are per user and need no administrator. Turning it off removes exactly what was written.
"""

from __future__ import annotations

import plistlib
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from app.services.platform.paths import launch_agents_dir, macos_log_dir, xdg_autostart_dir

LAUNCH_AGENT_LABEL = "org.pairwise.tray"
RUN_KEY = r"Software\Microsoft\Windows\CurrentVersion\Run"
RUN_VALUE = "Pairwise"


WINDOWS_TRAY_EXE = "pairwise-tray.exe"  # the bundle's windowed program (packaging/pairwise.spec)


def tray_command(home: Path | None = None) -> list[str]:
    """The command that starts this installation's tray app (a frozen bundle runs itself). On
    Windows always a windowed program: ``python.exe`` at login opens a console window whose closing
    kills the tray, so the bundle's or pip's ``pairwise-tray.exe``, else ``pythonw.exe``."""
    program = Path(sys.executable)
    if getattr(sys, "frozen", False):
        windowed = program.with_name(WINDOWS_TRAY_EXE)
        command = [str(windowed if sys.platform == "win32" and windowed.exists() else program)]
    elif sys.platform == "win32":
        command = windows_windowed_command(program)
    else:
        command = [sys.executable, "-m", "app"]
    if home is not None:
        command += ["--home", str(home)]
    return command


def windows_windowed_command(python: Path) -> list[str]:
    """pip's ``pairwise-tray.exe`` (a gui-script: no console) beside this Python or in its
    ``Scripts`` folder; else ``pythonw.exe -m app``, the same interpreter without a console."""
    for folder in (python.parent, python.parent / "Scripts"):
        if (folder / WINDOWS_TRAY_EXE).is_file():
            return [str(folder / WINDOWS_TRAY_EXE)]
    pythonw = python.with_name("pythonw.exe")
    return [str(pythonw if pythonw.is_file() else python), "-m", "app"]


@dataclass(frozen=True)
class Autostart:
    command: list[str]

    def where(self) -> str:
        """Where the login item lives on this OS (shown next to the Settings switch)."""
        if sys.platform == "win32":
            return f"HKEY_CURRENT_USER\\{RUN_KEY} ({RUN_VALUE})"
        return str(self._file())

    def enabled(self) -> bool:
        if sys.platform == "win32":
            return _read_run_value() is not None
        return self._file().exists()

    def enable(self) -> None:
        if sys.platform == "win32":
            _write_run_value(subprocess.list2cmdline(self.command))
            return
        path = self._file()
        path.parent.mkdir(parents=True, exist_ok=True)
        if sys.platform == "darwin":
            macos_log_dir().mkdir(parents=True, exist_ok=True)
        path.write_bytes(self._content())

    def disable(self) -> None:
        if sys.platform == "win32":
            _delete_run_value()
            return
        self._file().unlink(missing_ok=True)

    def _file(self) -> Path:
        if sys.platform == "darwin":
            return launch_agents_dir() / f"{LAUNCH_AGENT_LABEL}.plist"
        return xdg_autostart_dir() / "pairwise.desktop"

    def _content(self) -> bytes:
        if sys.platform == "darwin":
            log_file = str(macos_log_dir() / "tray.log")  # launchd does not make the folder: enable() does
            return plistlib.dumps({
                "Label": LAUNCH_AGENT_LABEL, "ProgramArguments": self.command, "RunAtLoad": True,
                "KeepAlive": False, "LimitLoadToSessionType": "Aqua", "ProcessType": "Interactive",
                "StandardOutPath": log_file, "StandardErrorPath": log_file,
            })
        exec_line = " ".join(_desktop_quote(part) for part in self.command)
        return ("[Desktop Entry]\nType=Application\nName=Pairwise\n"
                "Comment=Start Pairwise in the tray when you log in\n"
                f"Exec={exec_line}\nIcon=pairwise\nTerminal=false\nNoDisplay=true\n"
                "X-GNOME-Autostart-enabled=true\nX-GNOME-Autostart-Delay=5\n"
                "X-KDE-autostart-after=panel\n").encode()


def _desktop_quote(arg: str) -> str:
    # The desktop entry spec: quote arguments with reserved characters; escape " ` $ \ inside.
    if arg and not any(c in arg for c in " \t\n\"'\\><~|&;$*?#()`"):
        return arg
    escaped = "".join("\\" + c if c in '"`$\\' else c for c in arg)
    return f'"{escaped}"'


def _read_run_value() -> str | None:
    if sys.platform == "win32":
        import winreg

        try:
            with winreg.OpenKey(winreg.HKEY_CURRENT_USER, RUN_KEY, 0, winreg.KEY_READ) as key:
                value, _kind = winreg.QueryValueEx(key, RUN_VALUE)
        except FileNotFoundError:
            return None
        return str(value)
    return None


def _write_run_value(command_line: str) -> None:
    if sys.platform == "win32":
        import winreg

        with winreg.CreateKeyEx(winreg.HKEY_CURRENT_USER, RUN_KEY, 0, winreg.KEY_SET_VALUE) as key:
            winreg.SetValueEx(key, RUN_VALUE, 0, winreg.REG_SZ, command_line)


def _delete_run_value() -> None:
    if sys.platform == "win32":
        import winreg

        try:
            with winreg.OpenKey(winreg.HKEY_CURRENT_USER, RUN_KEY, 0, winreg.KEY_SET_VALUE) as key:
                winreg.DeleteValue(key, RUN_VALUE)
        except FileNotFoundError:
            pass
