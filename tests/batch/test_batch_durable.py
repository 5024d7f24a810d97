"""A batch survives SIGKILL of its node: restarted, it completes with every custom_id exactly once;
a cancelled batch keeps the lines it had done."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from app.harness import wait_until
from tests.batch.support import (
    chat_lines,
    client_of,
    results,
    two_engines,
    upload_and_create,
    wait_final,
    write_input,
)


def test_sigkill_at_random_points_loses_and_repeats_no_line(node_factory: Any, tiny_factory: Any,
                                                             tmp_path: Path) -> None:
    node, _, _ = two_engines(node_factory, tiny_factory, fast_delay=0.02, slow_delay=0.06)
    total = 400
    batch = upload_and_create(client_of(node), write_input(tmp_path, chat_lines(total)))
    rng = random.Random()
    done_before = 0
    for round_ in range(3):
        at = done_before + rng.randint(10, 80)

        def reached(at: int = at) -> bool:
            counts = client_of(node).batches.retrieve(batch.id).request_counts
            return counts is not None and counts.completed >= at

        wait_until(reached, 60, f"round {round_}: {at} lines done", interval=0.01)
        node.kill()  # SIGKILL: no stop hooks, lines in flight are lost mid-way
        node.start(wait_answer=True)
        counts = client_of(node).batches.retrieve(batch.id).request_counts
        assert counts is not None and counts.completed >= at  # what was written before the kill stays
        done_before = counts.completed
    done = wait_final(client_of(node), batch.id, timeout=180)
    assert done.status == "completed"
    client = client_of(node)
    out = results(client, done.output_file_id)
    assert done.error_file_id is None
    ids = [line["custom_id"] for line in out]
    assert len(ids) == total and set(ids) == {f"req-{i}" for i in range(total)}
    copies = {row["copy"]: row["done"] for row in done.model_extra["pairwise"]["copies"]}  # type: ignore[index]
    assert set(copies) == {"fast", "slow"} and sum(copies.values()) == total  # counted across the restarts


def test_cancel_keeps_the_done_lines(node_factory: Any, tiny_factory: Any, tmp_path: Path) -> None:
    node, _, _ = two_engines(node_factory, tiny_factory, fast_delay=0.1, slow_delay=0.2, capacity=2)
    client = client_of(node)
    batch = upload_and_create(client, write_input(tmp_path, chat_lines(200)))
    wait_until(lambda: (c := client.batches.retrieve(batch.id).request_counts) is not None and c.completed >= 5,
               60, "some lines done")
    cancelling = client.batches.cancel(batch.id)
    assert cancelling.status == "cancelling" and cancelling.cancelling_at is not None
    done = wait_final(client, batch.id)
    assert done.status == "cancelled" and done.cancelled_at is not None
    out, errors = results(client, done.output_file_id), results(client, done.error_file_id)
    assert done.request_counts is not None and done.request_counts.completed == len(out) >= 5
    assert all(line["response"]["status_code"] == 200 for line in out)
    assert {line["error"]["code"] for line in errors} == {"batch_cancelled"}
    assert sorted(line["custom_id"] for line in out + errors) == sorted(f"req-{i}" for i in range(200))


def test_lines_not_done_within_the_completion_window_expire(node_factory: Any, tiny_factory: Any,
                                                             tmp_path: Path) -> None:
    node, _, _ = two_engines(node_factory, tiny_factory, fast_delay=0.3, slow_delay=0.3, capacity=2)
    client = client_of(node)
    batch = upload_and_create(client, write_input(tmp_path, chat_lines(200)), window="3s")
    done = wait_final(client, batch.id)
    assert done.status == "expired" and done.expired_at is not None and done.expires_at == done.created_at + 3
    out, errors = results(client, done.output_file_id), results(client, done.error_file_id)
    assert errors and {line["error"]["code"] for line in errors} == {"batch_expired"}
    assert sorted(line["custom_id"] for line in out + errors) == sorted(f"req-{i}" for i in range(200))
    assert done.request_counts is not None and done.request_counts.completed == len(out)
