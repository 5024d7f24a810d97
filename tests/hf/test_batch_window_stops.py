"""Every way a batch window stops early CANCELS its job on Hugging Face, and what HF billed is what the
meter charged: idle stop, a budget cap, SIGTERM (pause on exit, on by default), SIGKILL then the next
start (reconcile by label, orphans included); and a job that errors while loading shows HF's message
and its last log lines. Simulated Hugging Face with a short minute; public ports refused throughout.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from typing import Any

from app.harness import REPO, wait_until
from app.simulator import SimulatorThread
from tests.hf.conftest import start_sponsor
from tests.hf.support import Events, hf_http, show, wait_show
from tests.hf.test_batch_window import JOB_SIM, MODEL, job_ledger, sim_job, streamed, window_create

MINUTE_S = 0.5
PRICE = 0.81  # l4x1 $0.80/h + the port's $0.01/h
ONE_MINUTE = PRICE / 60 + 1e-9


def stage(sim: SimulatorThread, row: dict[str, Any]) -> str:
    return str(sim_job(sim, row)["status"]["stage"])


def test_idle_stop_cancels_and_logs_follow_to_the_end(sim_factory: Any, node_factory: Any) -> None:
    sim: SimulatorThread = sim_factory(minute_s=MINUTE_S, **JOB_SIM)
    sponsor = start_sponsor(node_factory, sim, MINUTE_S)
    plan = sponsor.cli("rented", "create", "batch", "--provider", "huggingface-job", "--model", MODEL, "--gpu", "l4x1",
                       "--window", "2h", "--idle-stop-min", "0.2", stdin="n\n", check=False)
    assert "idle stop after 0.2 min" in plan.stdout and "CANCEL the job" in plan.stdout
    row = window_create(sponsor, "batch", "--idle-stop-min", "0.2", window="2h")
    follow = subprocess.Popen([sys.executable, "-m", "app", "--home", str(sponsor.home), "rented", "logs", "batch",
                               "--follow"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=sponsor.env,
                              cwd=REPO)
    wait_show(sponsor, "batch", "the model to answer", lambda r: r["state"] == "eligible")
    assert streamed(sponsor)
    ended = wait_show(sponsor, "batch", "the idle stop", lambda r: r["state"] == "ended", timeout=30)
    assert stage(sim, row) == "CANCELED" and "no workload for 0.2 min" in ended["ended_by"]
    out, err = follow.communicate(timeout=30)  # the stream ends with the job
    assert follow.returncode == 0, err
    assert "Application startup complete" in out and "Canceled by user" in out
    ledger = job_ledger(sim, row)
    assert 0 < ledger["usd"] < row["window_cost_usd"]
    charged = wait_show(sponsor, "batch", "the last minute charged", lambda r: r["window_charged_usd"] >= ledger["usd"])
    assert charged["window_charged_usd"] - ledger["usd"] <= ONE_MINUTE


def test_a_budget_cap_reached_during_the_window_cancels_it(sim_factory: Any, node_factory: Any) -> None:
    # A minute of 1 s and 4 s of scheduling: the cap is set before the window bills, on a busy machine too.
    sim: SimulatorThread = sim_factory(minute_s=1.0, **{**JOB_SIM, "job_scheduling_s": 4.0})
    sponsor = start_sponsor(node_factory, sim, 1.0)
    events = Events(sponsor)
    row = window_create(sponsor, "batch", window="2h")
    cap = 0.05  # less than 4 minutes at $0.81/h
    sponsor.cli("rented", "set", "batch", "--budget-usd-per-day", str(cap))
    spent_at_set = show(sponsor, "batch")["cost"]["day_usd"]
    ended = wait_show(sponsor, "batch", "the cap to cancel it", lambda r: r["window_stage"] == "CANCELED", timeout=60)
    assert "budget reached" in ended["ended_by"] and ended["state"] == "ineligible"  # the cap's reason shows
    assert job_ledger(sim, row)["usd"] <= max(cap, spent_at_set) + ONE_MINUTE
    # Announced as what it is: cancelled on HF, never "paused".
    stopped = events.wait("window_stopped", timeout=30)
    assert stopped["cause"] == "budget" and "budget reached" in stopped["reason"]
    assert "budget_paused" not in events.kinds()
    events.close()
    # A new window the cap cannot pay for today is refused, naming what is left.
    again = sponsor.cli("rented", "create", "batch", "--provider", "huggingface-job", "--model", MODEL, "--gpu",
                        "l4x1", "--window", "30m", "--yes", check=False)
    assert again.returncode != 0 and "left for batch" in again.stderr and "it cannot pay for a minute" in again.stderr


def test_sigterm_cancels_the_window(sim_factory: Any, node_factory: Any) -> None:
    sim: SimulatorThread = sim_factory(minute_s=MINUTE_S, **JOB_SIM)
    sponsor = start_sponsor(node_factory, sim, MINUTE_S)
    row = window_create(sponsor, "batch", "--budget-usd-per-day", "5", window="2h")
    wait_show(sponsor, "batch", "the model to answer", lambda r: r["state"] == "eligible")
    assert sponsor.signal(signal.SIGTERM) == 0
    assert stage(sim, row) == "CANCELED"  # canceled before the process ended
    assert job_ledger(sim, row)["usd"] <= 5 + ONE_MINUTE
    sponsor.start()
    after = wait_show(sponsor, "batch", "the restarted sponsor to read the end", lambda r: r["state"] == "ended")
    assert "the sponsor is stopping" in after["ended_by"]
    assert abs(after["window_charged_usd"] - job_ledger(sim, row)["usd"]) <= ONE_MINUTE


def test_sigkill_then_restart_cancels_by_label_and_charges_orphans(sim_factory: Any, node_factory: Any) -> None:
    sim: SimulatorThread = sim_factory(minute_s=MINUTE_S, **JOB_SIM)
    sponsor = start_sponsor(node_factory, sim, MINUTE_S)
    row = window_create(sponsor, "batch", "--budget-usd-per-day", "5", window="2h")
    wait_show(sponsor, "batch", "the model to answer", lambda r: r["state"] == "eligible")
    sponsor.kill()
    # A second job with this sponsor's labels that no rented node watches (a duplicate): an orphan.
    with hf_http(sim) as http:
        orphan = http.post("/api/jobs/demo-user", json={
            "flavor": "l4x1", "dockerImage": "vllm/vllm-openai", "timeoutSeconds": 7200,
            "labels": {"pairwise-sponsor": row["sponsor_id"], "pairwise-rented": "batch"},
            "command": ["vllm", "serve", MODEL], "expose": {"ports": [8000]}}).json()
    wait_until(lambda: sim.control("GET", "/_sim/ledger")["jobs"][f"demo-user/{orphan['id']}"]["usd"] > 0,
               what="the orphan to bill")
    assert stage(sim, row) == "RUNNING"  # nobody canceled it: the sponsor died
    sponsor.start()
    wait_until(lambda: stage(sim, row) == "CANCELED", timeout=30, what="the restarted sponsor to cancel the window")
    with hf_http(sim) as http:
        wait_until(lambda: http.get(f"/api/jobs/demo-user/{orphan['id']}").json()["status"]["stage"] == "CANCELED",
                   timeout=30, what="the orphan canceled")
    ended = wait_show(sponsor, "batch", "the end read", lambda r: r["state"] == "ended")
    assert "left running while the sponsor was down" in ended["ended_by"]
    ledger = sim.control("GET", "/_sim/ledger")["jobs"]
    billed = ledger[row["window_job"]]["usd"] + ledger[f"demo-user/{orphan['id']}"]["usd"]
    assert ledger[row["window_job"]]["usd"] <= 5 + ONE_MINUTE
    # The day's spend holds both jobs' minutes: the window's and the orphan's (same rented node).
    charged = wait_show(sponsor, "batch", "both charged", lambda r: r["cost"]["day_usd"] >= billed - 2 * ONE_MINUTE)
    assert charged["cost"]["day_usd"] <= billed + 2 * ONE_MINUTE
    assert "orphaned job" in (sponsor.home / "logs" / "node.log").read_text()


def test_a_job_that_errors_while_loading_shows_hf_message_and_last_lines(sim_factory: Any, node_factory: Any) -> None:
    sim: SimulatorThread = sim_factory(minute_s=MINUTE_S, **JOB_SIM)
    sim.control("POST", "/_sim/jobs/load-errors", {"model": MODEL, "message": "CUDA out of memory loading weights"})
    sponsor = start_sponsor(node_factory, sim, MINUTE_S)
    window_create(sponsor, "batch", window="1h")
    failed = wait_show(sponsor, "batch", "the load error", lambda r: r["state"] == "unhealthy" and r["last_log_lines"])
    assert failed["window_stage"] == "ERROR" and "CUDA out of memory loading weights" in failed["reason"]
    assert any("RuntimeError: CUDA out of memory" in line for line in failed["last_log_lines"])
    logs = sponsor.cli("rented", "logs", "batch").stdout
    assert "Loading model " + MODEL in logs and "RuntimeError: CUDA out of memory loading weights" in logs
    detail = sponsor.cli("rented", "show", "batch").stdout
    assert "RuntimeError: CUDA out of memory" in detail
    assert show(sponsor, "batch")["window_job"]


def test_stop_then_a_new_window_on_the_same_rented_node_shares_its_spend(sim_factory: Any, node_factory: Any) -> None:
    sim: SimulatorThread = sim_factory(minute_s=MINUTE_S, **JOB_SIM)
    sponsor = start_sponsor(node_factory, sim, MINUTE_S)
    first = window_create(sponsor, "batch", "--budget-usd-per-day", "5", window="2h")
    busy = sponsor.cli("rented", "create", "batch", "--provider", "huggingface-job", "--model", MODEL, "--gpu", "l4x1",
                       "--window", "1h", "--yes", check=False)
    assert busy.returncode != 0 and "still" in busy.stderr and "rented stop batch" in busy.stderr
    wait_show(sponsor, "batch", "the first window to serve", lambda r: r["state"] == "eligible")
    stopped = sponsor.cli_json("rented", "stop", "batch")
    assert stopped["window_stage"] == "CANCELED" and stopped["ended_by"] == "stopped by the user"
    assert stage(sim, first) == "CANCELED"
    spent_first = wait_show(sponsor, "batch", "the first window charged",
                            lambda r: r["window_charged_usd"] >= job_ledger(sim, first)["usd"])["cost"]["day_usd"]

    second = window_create(sponsor, "batch", window="1h")  # the same rented node: one account, the cap kept
    assert second["window_job"] != first["window_job"] and second["budget"]["usd_per_day"] == 5
    assert second["state"] == "starting" and second["window_stage"] in ("SCHEDULING", "RUNNING")  # not ready yet
    wait_show(sponsor, "batch", "the second window to serve", lambda r: r["state"] == "eligible")
    assert streamed(sponsor)
    sponsor.cli("rented", "stop", "batch")
    both = job_ledger(sim, first)["usd"] + job_ledger(sim, second)["usd"]
    row = wait_show(sponsor, "batch", "both windows in today's spend", lambda r: r["cost"]["day_usd"] > spent_first)
    assert abs(row["cost"]["day_usd"] - both) <= 2 * ONE_MINUTE
    # One account per rented node (HF's host, namespace and the node's name), whatever the job id.
    assert row["spend_account"].startswith("hf-job:") and row["spend_account"].endswith("/demo-user/batch")

    # Detached and created again, the node finds its account: what it spent today still counts.
    sponsor.cli("rented", "detach", "batch")
    over = sponsor.cli("rented", "create", "batch", "--provider", "huggingface-job", "--model", MODEL, "--gpu",
                       "l4x1", "--window", "1h", "--budget-usd-per-day", f"{row['cost']['day_usd'] + 0.1:.4f}",
                       "--yes", check=False)
    assert over.returncode != 0 and "it can pay for 7m" in over.stderr


def test_a_run_sent_twice_leaves_no_stray_job_billing(sim_factory: Any, node_factory: Any) -> None:
    """HF starts the job but its answer is lost; the client sends the run again and a second job starts.
    The first (same labels, watched by nobody) is canceled at once, and what it billed is charged."""
    sim: SimulatorThread = sim_factory(minute_s=MINUTE_S, **JOB_SIM)
    sponsor = start_sponsor(node_factory, sim, MINUTE_S)
    sim.control("POST", "/_sim/faults", {"target": "hub", "kind": "cut_stream", "count": 1,
                                         "path": "/api/jobs/demo-user"})
    row = window_create(sponsor, "batch", window="2h")
    with hf_http(sim) as http:
        jobs = http.get("/api/jobs/demo-user").json()
    assert len(jobs) == 2  # the first run did start
    stray = next(j for j in jobs if f"demo-user/{j['id']}" != row["window_job"])
    assert stray["labels"]["pairwise-rented"] == "batch" and stray["status"]["stage"] == "CANCELED"
    assert stage(sim, row) in ("SCHEDULING", "RUNNING")
    assert "canceling orphaned job" in (sponsor.home / "logs" / "node.log").read_text()
