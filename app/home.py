"""Where a node keeps everything it writes: one directory per node ("home")."""

from __future__ import annotations

import errno
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

from app.services.errors import ConfigError, PairwiseError
from app.services.platform.files import read_text, replace_file
from app.services.platform.paths import default_home
from app.services.platform.permissions import modes_apply


def resolve_home(explicit: str | None) -> Path:
    """--home wins, then PAIRWISE_HOME, then the platform's user data dir."""
    from app.environment import environment

    chosen = explicit or environment().home
    if chosen:
        return Path(chosen).expanduser().resolve()
    return default_home()


def write_private(path: Path, data: bytes) -> None:
    """Write a file readable by its owner only, atomically (temp file + rename, retried while
    another process holds the old file open: ``platform.files.replace_file``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        replace_file(tmp, path)  # waits out a reader holding the old file (Windows)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


class NotSaved(PairwiseError):
    """A change could not be written, so it was not made (the running node keeps what it had)."""

    title = "Change not saved"
    status = 507


# What a person can do about it, by the reason the OS gave.
_WHY = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is used up",
    errno.EROFS: "the file system is read-only",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.EIO: "an input/output error (the disk may be failing)",
}


def why_not_written(exc: OSError) -> str:
    """The reason a write failed, in words (disk full, read-only, permission ...)."""
    known = _WHY.get(exc.errno or 0)
    if known:
        return known
    return exc.strerror or str(exc) or type(exc).__name__


def is_storage_trouble(exc: BaseException) -> bool:
    """Whether ``exc`` (an OSError, or SQLite's way of saying the same) is the disk refusing a write
    rather than damage: full, read-only, no permission, or out of quota."""
    if isinstance(exc, OSError):
        return exc.errno in _WHY
    text = str(exc).lower()
    return any(word in text for word in ("readonly", "read-only", "disk is full", "disk full",
                                         "unable to open database", "disk i/o error", "permission"))


def save_private(path: Path, data: bytes, what: str = "the change") -> None:
    """``write_private``, or ``NotSaved`` naming the file and why: callers write before they apply,
    so a refused write leaves nothing half-done."""
    try:
        write_private(path, data)
    except OSError as exc:
        raise NotSaved(f"{what} was not saved: {path} could not be written ({why_not_written(exc)}); "
                       "nothing was changed") from exc


class HomeTooOpen(ConfigError):
    title = "Home not private"


@dataclass(frozen=True)
class Home:
    """A node's home and every file in it (other modules ask here, never build names themselves).

    settings.json        what the user set (``app.settings``)
    state.db             jobs (SQLite; -wal and -shm beside it)
    logs/node.log        the node's log (rotated: node.log.1 ...)
    identity/            the node's certificate and private key
    control_token        the local control API token (0600)
    runtime.json         written by a running node: pid and bound addresses
    node.lock            held by the running node
    cluster/             trust.json (pinned peers), manual_peers.json, unpair_pending.json
    rented.json          rented node declarations
    rented_meter.json    rented nodes' cost totals from before spend accounts were shared (read once,
                         then removed; spend now lives in the shared spend dir, rented/spend.py)
    <provider>_*.json    what a provider's controller keeps of what it created here (``provider_file``)
    batches/             batches (batches.db) and their input, output and error files (files/): the user's
                         data, kept until the batch or the file is deleted
    """

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
    def log_file(self) -> Path:
        return self.logs_dir / "node.log"

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

    @property
    def cluster_dir(self) -> Path:
        return self.root / "cluster"

    @property
    def trust_file(self) -> Path:
        return self.cluster_dir / "trust.json"

    @property
    def manual_peers_file(self) -> Path:
        return self.cluster_dir / "manual_peers.json"

    @property
    def unpair_pending_file(self) -> Path:
        return self.cluster_dir / "unpair_pending.json"

    @property
    def rented_file(self) -> Path:
        return self.root / "rented.json"

    @property
    def rented_meter_file(self) -> Path:
        return self.root / "rented_meter.json"

    def provider_file(self, name: str) -> Path:
        """A provider's own records in the home (``<name>.json``, a name of the provider's choosing)."""
        return self.root / f"{name}.json"

    @property
    def batches_dir(self) -> Path:
        return self.root / "batches"

    @property
    def firstrun_file(self) -> Path:
        """First-run notes: Ollama asked to move off the front door, the welcome window seen."""
        return self.root / "firstrun.json"

    def ensure(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.logs_dir.mkdir(exist_ok=True, mode=0o700)

    def control_token(self) -> str:
        """The local control token, made on first use (0600)."""
        path = self.control_token_file
        if path.exists():
            return read_text(path).strip()
        token = secrets.token_urlsafe(32)
        write_private(path, token.encode())
        return token

    def make_private(self) -> list[str]:
        """At start: the home 0700 and every file in it owner-only (POSIX); returns what was repaired.

        A home created 0755 by an older version, or a control token widened to 0644, is repaired
        with a log line; what cannot be repaired (another owner) is refused, naming the file.
        Windows: nothing to do here (a user's profile directory is private by its ACL)."""
        if not modes_apply():
            return []
        repaired: list[str] = []
        for path, mode in self._private_paths():
            try:
                current = stat.S_IMODE(path.lstat().st_mode)
            except FileNotFoundError:
                continue
            if path.is_symlink() or current & 0o077 == 0:
                continue
            try:
                os.chmod(path, mode)
            except OSError as exc:
                raise HomeTooOpen(
                    f"{path} can be read by other users (mode {current:o}) and could not be made private: "
                    f"{exc.strerror or exc}; fix it with: chmod {mode:o} {path}") from exc
            repaired.append(f"{path} {current:o} -> {mode:o}")
        return repaired

    def _private_paths(self) -> list[tuple[Path, int]]:
        paths: list[tuple[Path, int]] = [(self.root, 0o700)]
        for directory in (self.logs_dir, self.identity_dir, self.cluster_dir):
            paths.append((directory, 0o700))
        for directory in (self.root, self.logs_dir, self.cluster_dir):
            if directory.is_dir():
                paths += [(p, 0o600) for p in sorted(directory.iterdir()) if p.is_file()]
        if self.identity_dir.is_dir():
            # The certificate is public by nature (0644 is fine); the private key is not.
            paths += [(p, 0o600) for p in sorted(self.identity_dir.iterdir()) if p.is_file() and p.suffix == ".key"]
        return paths
