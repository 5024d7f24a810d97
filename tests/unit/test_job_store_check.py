"""The history's page-level check: at start while it is cheap or after an unclean stop, in the background
for a large history closed cleanly, and damage found there stops writes into the damaged file."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from app.services.jobs.records import Workload
from app.services.jobs.requester import Requester
from app.services.jobs.store import SET_ASIDE_COMMAND, DatabaseDamaged, JobStore

RECORDS = 600


def record(number: int) -> Workload:
    return Workload(model="m", api="openai", requester=Requester("node-a", "o"), origin_node="o",
                    origin_node_id="node-a", id=f"job-{number}", state="completed", error="x" * 400)


def history(path: Path) -> None:
    """A history of several hundred pages, closed cleanly."""
    store = JobStore(path)
    for number in range(RECORDS):
        store.save(record(number))
    store.flush()
    store.close()
    assert not path.with_name(path.name + "-wal").exists()


def damage_the_middle(path: Path) -> None:
    """Garbage over pages in the middle of the file; the header (page 1) stays whole, so it opens."""
    with sqlite3.connect(path) as db:
        page = db.execute("PRAGMA page_size").fetchone()[0]
        pages = db.execute("PRAGMA page_count").fetchone()[0]
    db.close()
    assert pages > 20
    with path.open("r+b") as file:
        for number in range(pages // 3, pages // 3 + 4):
            file.seek(number * page)
            file.write(bytes((n * 37 + 11) % 251 for n in range(page)))


def test_a_large_history_closed_cleanly_is_checked_in_the_background_and_damage_stops_writes(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    history(path)
    damage_the_middle(path)
    told: list[str | None] = []
    store = JobStore(path, check_at_start_bytes=1024)  # larger than that: it opens without reading every page
    store.on_trouble = told.append
    assert store.checked.wait(30)
    assert store.damage is not None and f"the job database {path} is damaged" in store.damage
    assert SET_ASIDE_COMMAND in store.damage
    before = path.read_bytes()
    store.save(record(RECORDS + 1))
    store.flush()
    assert told == [store.damage]  # told once, with the way out
    assert store.unsaved == 1  # kept in memory, not written into the damaged file
    assert path.read_bytes() == before
    store.close()


def test_the_same_damage_is_one_clear_error_at_start_when_the_history_is_small(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    history(path)
    damage_the_middle(path)
    with pytest.raises(DatabaseDamaged, match=SET_ASIDE_COMMAND):
        JobStore(path)  # the default bound holds this history: checked before the node serves


def test_after_an_unclean_stop_a_large_history_is_checked_at_start(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    history(path)
    damage_the_middle(path)
    # A -wal file left behind is what a killed node leaves (SQLite removes it at a clean close).
    shutil.copy(path, tmp_path / "copy.db")
    with sqlite3.connect(tmp_path / "copy.db") as other:
        other.execute("PRAGMA journal_mode=WAL")
    path.with_name(path.name + "-wal").write_bytes(b"")
    with pytest.raises(DatabaseDamaged):
        JobStore(path, check_at_start_bytes=1024)


def test_a_whole_large_history_checks_clean_and_keeps_writing(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    history(path)
    told: list[str | None] = []
    store = JobStore(path, check_at_start_bytes=1024)
    store.on_trouble = told.append
    assert store.checked.wait(30)
    assert store.damage is None
    store.save(record(RECORDS + 1))
    store.flush()
    assert store.unsaved == 0 and told == []
    assert store.get(f"job-{RECORDS + 1}") is not None
    store.close()
