"""Simulator settings: where it listens and how fast simulated time runs.

All durations are real seconds so tests stay fast. `minute_s` is how many real seconds one
Hugging Face billing minute lasts; HF values given in minutes (scaleToZeroTimeout) and job
timeouts are scaled by it, so a 15-minute scale-to-zero timeout lasts 15 × minute_s.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

# Settings that POST /_sim/settings may change while running (the rest are fixed at start).
LIVE_SETTINGS = ("pending_s", "initializing_s", "job_scheduling_s", "job_run_s", "job_loading_s", "minute_s")


@dataclass
class SimSettings:
    host: str = "127.0.0.1"
    port: int = 0
    # Where the CA and server certificate are written; None = a temporary directory removed on stop.
    state_dir: Path | None = None
    pending_s: float = 0.5
    initializing_s: float = 1.0
    job_scheduling_s: float = 0.5
    # How long a job runs before COMPLETED; None = until canceled or timed out (a server job).
    job_run_s: float | None = None
    # How long a running job's server loads its model before its exposed port answers (jobs_model.py).
    job_loading_s: float = 0.0
    # How long a running job's server takes to answer anything but /v1/models (a slow model: an answer that
    # takes minutes); a job ended meanwhile answers 502, as HF's proxy does when the server behind it is gone.
    job_answer_delay_s: float = 0.0
    # Refuse any job spec that asks for a public port (tests prove Pairwise never does).
    refuse_public_ports: bool = False
    minute_s: float = 60.0
    namespace: str = "demo-user"
    org: str = "demo-org"
    demo_token: str = "hf_sim_demo_token"

    def update(self, changes: dict[str, Any]) -> None:
        unknown = set(changes) - set(LIVE_SETTINGS)
        if unknown:
            raise ValueError(f"unknown or fixed setting(s): {', '.join(sorted(unknown))}")
        for key, value in changes.items():
            if value is None and key == "job_run_s":
                self.job_run_s = None
                continue
            if not isinstance(value, int | float) or isinstance(value, bool) or value < 0:
                raise ValueError(f"{key} must be a non-negative number")
            if key == "minute_s" and value <= 0:
                raise ValueError("minute_s must be positive")
            setattr(self, key, float(value))

    def live(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name in LIVE_SETTINGS}
