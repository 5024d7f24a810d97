"""The home is private, and a damaged database is one clear line (issue 14, rows 13 and 14)."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from app.harness import NodeProc
from app.home import Home

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX file modes")


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_an_open_home_and_token_are_made_private_at_start(node_factory: type[NodeProc]) -> None:
    node = node_factory("private").start()
    node.stop()
    home = node.home
    for path in (home / "state.db", home / "logs" / "node.log", home / "control_token", home / "settings.json"):
        assert mode(path) & 0o077 == 0, (path, oct(mode(path)))
    os.chmod(home, 0o755)
    os.chmod(home / "control_token", 0o644)
    os.chmod(home / "state.db", 0o644)
    node.start()
    assert mode(home) == 0o700
    assert mode(home / "control_token") == 0o600 and mode(home / "state.db") == 0o600
    assert "made private (it was readable by other users)" in (home / "logs" / "node.log").read_text()
    # The node works as before with the repaired token.
    assert node.cli("status").returncode == 0


def test_a_token_that_cannot_be_made_private_is_refused_by_name(tmp_path: Path) -> None:
    home = Home(tmp_path / "home")
    home.ensure()
    home.control_token()
    os.chmod(home.control_token_file, 0o644)
    real_chmod = os.chmod

    def refusing(path: str | os.PathLike[str], mode: int) -> None:
        if os.fspath(path) == str(home.control_token_file):
            raise PermissionError(1, "Operation not permitted")
        real_chmod(path, mode)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "chmod", refusing)
        with pytest.raises(Exception, match=r"control_token can be read by other users \(mode 644\).*chmod 600"):
            home.make_private()


def test_a_damaged_database_is_named_with_the_command_that_sets_it_aside(node_factory: type[NodeProc]) -> None:
    node = node_factory("damaged").start()
    node.stop()
    db = node.home / "state.db"
    for suffix in ("-wal", "-shm"):
        (node.home / f"state.db{suffix}").unlink(missing_ok=True)
    db.write_bytes(b"this is not a database, it was damaged" * 200)
    result = node.cli("serve", "--listen", "127.0.0.1:0", "--cluster-listen", "127.0.0.1:0", check=False)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert f"the job database {db} is damaged" in lines[0]
    assert "pairwise database set-aside" in lines[0]
    moved = node.cli("database", "set-aside").stdout
    assert "(kept)" in moved
    kept = [p for p in node.home.iterdir() if p.name.startswith("state.db.damaged-")]
    assert len(kept) == 1 and kept[0].read_bytes().startswith(b"this is not a database")
    node.start()  # a fresh database
    assert node.cli_json("jobs") == []
