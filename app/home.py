"""Where a node keeps everything it writes: one directory per node ("home")."""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from app.services.platform.paths import default_home


def resolve_home(explicit: str | None) -> Path:
    """--home wins, then PAIRWISE_HOME, then the platform's user data dir."""
    from app.environment import environment

    chosen = explicit or environment().home
    if chosen:
        return Path(chosen).expanduser().resolve()
    return default_home()


def write_private(path: Path, data: bytes) -> None:
    """Write a file readable by its owner only, atomically (temp file + rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


@dataclass(frozen=True)
class Home:
    root: Path

    @property
    def settings_file(self) -> Path:
        return self.root / "settings.json"

    @property
    def database(self) -> Path:
        return self.root / "state.db"

    @property
    def logs_dir(self) -> Path:
        return self.root / "logs"

    @property
    def identity_dir(self) -> Path:
        return self.root / "identity"

    @property
    def control_token_file(self) -> Path:
        return self.root / "control_token"

    @property
    def runtime_file(self) -> Path:
        """Written by a running node: its pid and the addresses it actually bound."""
        return self.root / "runtime.json"

    @property
    def lock_file(self) -> Path:
        return self.root / "node.lock"

    def ensure(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.logs_dir.mkdir(exist_ok=True, mode=0o700)

    def control_token(self) -> str:
        """The local control token, made on first use (0600)."""
        path = self.control_token_file
        if path.exists():
            return path.read_text().strip()
        token = secrets.token_urlsafe(32)
        write_private(path, token.encode())
        return token
