"""Batches and money, against the simulated Hugging Face: a budget stops the batch's use of a rented
window at the budget (what HF bills during the batch within the budget and one billed minute) while
the local copy finishes; `batch plan` proposes a window whose cost is what HF bills for it after
`batch run --rent`. Needs a Secret Service (the HF token is in the keyring)."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any

from app.harness import wait_until
from app.simulator import SimulatorThread
from tests.batch.support import (
    chat_lines,
    client_of,
    results,
    upload_and_create,
    wait_engines,
    wait_final,
    write_input,
)
from tests.hf.conftest import start_sponsor
from tests.hf.support import wait_show

MODEL = "Qwen/Qwen2.5-0.5B-Instruct"
JOB_SIM = {"refuse_public_ports": True, "job_loading_s": 0.3}
L4_PER_MIN = 0.81 / 60  # l4x1 with its exposed port, per billed minute


def job_usd(sim: SimulatorThread, job_id: str) -> float:
    jobs = sim.control("GET", "/_sim/ledger")["jobs"]
    return float(jobs[job_id]["usd"]) if job_id in jobs else 0.0


class Timeline:
    """What HF had billed for a job at each step of a test, and when: the failure message of a money bound."""

    def __init__(self, sim: SimulatorThread, job_id: str) -> None:
        self.sim, self.job_id, self.began = sim, job_id, time.monotonic()
        self.steps: list[str] = []

    def mark(self, what: str, **facts: object) -> float:
        usd = job_usd(self.sim, self.job_id)
        told = "".join(f" {k}={v}" for k, v in facts.items())
        self.steps.append(f"{time.monotonic() - self.began:7.2f}s  HF billed ${usd:.4f}  {what}{told}")
        return usd

    def billed_at(self, wall: float, minute: float) -> float:
        """What HF had billed for the job at Unix time ``wall`` (per started minute of its RUNNING stretch)."""
        row = self.sim.control("GET", "/_sim/ledger")["jobs"][self.job_id]
        start = next(s["start"] for s in row["stretches"] if s["state"] == "RUNNING")
        at = wall - (time.time() - time.monotonic()) - self.sim.sim.state.origin  # on the ledger's clock
        return max(0, math.floor((at - start) / minute) + 1) * row["price_per_hour"] / 60

    def __str__(self) -> str:
        row = self.sim.control("GET", "/_sim/ledger")["jobs"].get(self.job_id, {})
        return "\n".join([*self.steps, f"HF's ledger: {row}"])


def sponsor_with_local_copy(node_factory: Any, tiny_factory: Any, sim: SimulatorThread, minute: float, *,
                            delay: float, capacity: int) -> Any:
    tiny = tiny_factory("--model", MODEL, "--first-byte-delay-s", str(delay))
    sponsor = start_sponsor(node_factory, sim, minute, name="A")
    sponsor.add_engine("local", tiny.url, capacity=capacity)
    wait_engines(sponsor, "local")
    return sponsor


def budget_run(sim_factory: Any, node_factory: Any, tiny_factory: Any, tmp_path: Path, total: int, *,
               local_delay: float, **sim_settings: Any) -> int:
    """A batch of ``total`` lines with a budget of 2.5 billed minutes, on a window and a local copy: it
    leaves the window at its budget, HF bills within the budget and one minute during it, all lines end;
    how many lines the window answered. Each line takes a set time on each copy (``local_delay``, the
    simulator's ``job_answer_delay_s``), so the batch outlasts its budget on any CPU: a batch that ended
    first would test nothing (and on a fast machine one did, in 2 s)."""
    minute = 1.0
    sim: SimulatorThread = sim_factory(minute_s=minute, **JOB_SIM, **sim_settings)
    sponsor = sponsor_with_local_copy(node_factory, tiny_factory, sim, minute, delay=local_delay, capacity=8)
    out = sponsor.cli("rented", "create", "win", "--provider", "huggingface-job", "--model", MODEL, "--gpu", "l4x1",
                      "--window", "2h", "--yes", "--json")
    window = json.loads(out.stdout)
    wait_show(sponsor, "win", "the window to serve", lambda r: r["state"] == "eligible", timeout=30)
    timeline = Timeline(sim, window["window_job"])
    timeline.mark("the window serves")
    budget = 2.5 * L4_PER_MIN
    client = client_of(sponsor)
    batch = upload_and_create(client, write_input(tmp_path, chat_lines(total, model=MODEL)),
                              metadata={"budget_usd": f"{budget:.6f}"})
    timeline.mark("batch created")
    started = wait_until(lambda: (b := client.batches.retrieve(batch.id)).model_extra["pairwise"]["rented_since"]
                         and b, 60, "the batch to begin using the window", interval=0.05)
    since = started.model_extra["pairwise"]["rented_since"]
    timeline.mark("the batch began using the window (seen)", at=since)
    # What HF had billed when the batch began (its cost counts from there), on HF's own clock, not when
    # this poll saw it: the window billed before the batch (upload, validation) is not the batch's.
    before = timeline.billed_at(since, minute)
    stopped = wait_until(lambda: (b := client.batches.retrieve(batch.id)).model_extra["pairwise"]["rented_stopped"]
                         and b, 60, "the batch to reach its budget", interval=0.05)
    timeline.mark("the batch left the window", why=stopped.model_extra["pairwise"]["rented_stopped"])
    assert "budget reached" in stopped.model_extra["pairwise"]["rented_stopped"]
    # The batch was the window's only user: the window is stopped, so HF bills no more.
    wait_show(sponsor, "win", "the window to be stopped", lambda r: r["state"] == "ended", timeout=30)
    timeline.mark("the window ended")
    done = wait_final(client, batch.id, timeout=240)
    assert done.status == "completed" and done.error_file_id is None
    assert sorted(line["custom_id"] for line in results(client, done.output_file_id)) == sorted(
        f"req-{i}" for i in range(total))
    copies = {row["copy"]: row["done"] for row in done.model_extra["pairwise"]["copies"]}
    assert copies.get("local", 0) > 0 and sum(copies.values()) == total
    cost = float(done.metadata["cost_usd"])  # type: ignore[index]
    billed = timeline.mark("the batch completed", cost_usd=cost) - before
    print(f"HF billed ${billed:.4f} during the batch (${before:.4f} before it)\n{timeline}")
    assert billed <= budget + L4_PER_MIN + 1e-9, f"HF billed ${billed:.4f} during the batch\n{timeline}"
    assert budget <= cost <= budget + L4_PER_MIN + 1e-9, f"the batch's cost ${cost:.4f}\n{timeline}"
    return copies.get("win", 0)


def test_a_budget_stops_rented_use_and_the_local_copy_finishes(sim_factory: Any, node_factory: Any,
                                                                tiny_factory: Any, tmp_path: Path) -> None:
    # At most 8 / 0.1 s locally and 4 / 0.05 s on the window: 1,500 lines take ≥ 9 s, the budget ~3 s.
    served = budget_run(sim_factory, node_factory, tiny_factory, tmp_path, 1500, local_delay=0.1,
                        job_answer_delay_s=0.05)
    assert served > 0  # the window served lines


def test_a_budget_stops_a_window_whose_answers_take_minutes(sim_factory: Any, node_factory: Any,
                                                            tiny_factory: Any, tmp_path: Path) -> None:
    """The window's answers take 4 billed minutes: no line ends before the budget is spent, so the budget
    is checked on the money clock (each minute HF starts), not when a line ends. The lines the cancel cut
    go to the local copy."""
    budget_run(sim_factory, node_factory, tiny_factory, tmp_path, 300, local_delay=0.02, job_answer_delay_s=4.0)


def test_plan_proposes_the_window_run_rent_starts_and_hf_bills_its_cost(sim_factory: Any, node_factory: Any,
                                                                         tiny_factory: Any, tmp_path: Path) -> None:
    minute = 1.0  # a 6-minute window lasts 6 s here
    sim: SimulatorThread = sim_factory(minute_s=minute, **JOB_SIM)
    sponsor = sponsor_with_local_copy(node_factory, tiny_factory, sim, minute, delay=0.2, capacity=2)
    path = write_input(tmp_path, chat_lines(5000, model="any"))
    plan = sponsor.cli_json("batch", "plan", str(path), "--model", MODEL, "--deadline", "6m")
    assert plan["meets_deadline"] is False and plan["local_time_s"] > 6 * 60
    rent = plan["rent"]
    assert rent is not None and rent["window_minutes"] == 6 and rent["model"] == MODEL
    assert abs(rent["window_cost_usd"] - 6 * rent["price_per_hour"] / 60) < 1e-6
    text = sponsor.cli("batch", "plan", str(path), "--model", MODEL, "--deadline", "6m").stdout
    assert "NOT met" in text and f"${rent['window_cost_usd']:.2f}" in text and "--rent" in text

    started = json.loads(sponsor.cli("batch", "run", str(path), "--model", MODEL, "--deadline", "6m", "--rent",
                                     "--detach", "--json", timeout=120).stdout)
    name = started["rented_window"]
    assert name and started["plan"]["rent"]["gpu"] == rent["gpu"]
    client = client_of(sponsor)
    batch_id = started["batch"]["id"]
    ended = wait_show(sponsor, name, "HF to end the window at its timeout", lambda r: r["state"] == "ended",
                      timeout=90)
    assert ended["provider_state"] == "TIMED_OUT"
    used = {c["copy"]: c["done"] for c in client.batches.retrieve(batch_id).model_extra["pairwise"]["copies"]}
    assert used.get(name, 0) > 0 and used.get("local", 0) > 0  # the window served the batch beside the local copy
    billed = job_usd(sim, ended["window_job"])
    assert abs(billed - rent["window_cost_usd"]) <= rent["price_per_hour"] / 60 + 1e-9, (billed, rent)
    client.batches.cancel(batch_id)
    assert wait_final(client, batch_id).status == "cancelled"
