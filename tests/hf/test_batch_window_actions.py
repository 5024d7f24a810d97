"""An endpoint's actions on a batch window (issue 19), from the CLI against the simulated Hugging Face:
`rented pause`, `resume` and `delete` are refused naming why (a Job has no pause, no resume and no
endpoint) and what to run instead, and change nothing on HF; `rented stop` ends the window. The row
says what can be done: never pausable or resumable, stoppable until it has ended, billing while it runs.
"""

from __future__ import annotations

from typing import Any

from app.harness import NodeProc
from app.simulator import SimulatorThread
from tests.hf.conftest import start_sponsor
from tests.hf.support import wait_show
from tests.hf.test_batch_window import JOB_SIM, sim_job, window_create


def refused(node: NodeProc, *args: str) -> str:
    out = node.cli("rented", *args, check=False)
    assert out.returncode != 0, out.stdout
    return out.stderr


def test_a_window_refuses_pause_resume_and_delete_naming_the_way_on(sim_factory: Any, node_factory: Any) -> None:
    sim: SimulatorThread = sim_factory(minute_s=0.5, **JOB_SIM)
    sponsor = start_sponsor(node_factory, sim, 0.5)
    row = window_create(sponsor, "batch", window="2h")
    running = wait_show(sponsor, "batch", "the window to run", lambda r: r["window_stage"] == "RUNNING")
    assert (running["pausable"], running["resumable"], running["stoppable"], running["billing"]) == (
        False, False, True, True)

    pause = refused(sponsor, "pause", "batch")
    assert "refused to pause batch: a batch window (a Hugging Face Job) cannot be paused" in pause
    assert "'pairwise rented stop batch' ends it now" in pause and "endpoint" not in pause
    resume = refused(sponsor, "resume", "batch")
    assert "refused to resume batch: a batch window (a Hugging Face Job) cannot be resumed" in resume
    assert "'pairwise rented create batch --provider huggingface-job" in resume
    delete = refused(sponsor, "delete", "batch", "--yes")
    assert "has no endpoint to delete" in delete and "'pairwise rented stop batch'" in delete
    job = sim_job(sim, row)
    assert job["status"]["stage"] == "RUNNING", "a refused action changes nothing on Hugging Face"

    sponsor.cli("rented", "stop", "batch")
    ended = wait_show(sponsor, "batch", "the window to end", lambda r: r["window_stage"] == "CANCELED")
    assert (ended["stoppable"], ended["billing"], ended["pausable"], ended["resumable"]) == (False, False, False, False)
    assert sim_job(sim, row)["status"]["stage"] == "CANCELED"
    assert "cannot be resumed" in refused(sponsor, "resume", "batch")
