"""Timing knobs of the Hugging Face adapter, from the environment (fractions accepted everywhere).

PAIRWISE_BILLING_MINUTE_S   real seconds in one billed minute (60; tests shorten it to match the
                            simulator's minute_s so the meter and HF's ledger agree)
PAIRWISE_HF_TIMEOUT_S       per-attempt timeout of a management call (20)
PAIRWISE_HF_CONTROL_TIMEOUT_S the one attempt of a lifecycle poll or pause (min(timeout, 10)); the loop
                            tries again itself, so an owed pause never waits behind a retry sleep
PAIRWISE_HF_RETRIES         retries after a 429, 5xx, timeout or network error (4)
PAIRWISE_HF_BACKOFF_S       first backoff; doubles per retry, capped (0.5)
PAIRWISE_HF_POLL_STARTING_S state poll while an endpoint starts or wakes (min(2, minute/8))
PAIRWISE_HF_POLL_STEADY_S   state poll while it is steady (min(30, minute/2))
PAIRWISE_HF_STOP_TIMEOUT_S  how long pause-on-exit may take before the node says which endpoint still
                            bills (15)
PAIRWISE_HF_EXIT_GIVE_UP_S  how long pause-on-exit keeps trying in all before the node stops anyway (60)
"""

from __future__ import annotations

from dataclasses import dataclass

from app.environment import environment


def _env_float(name: str, default: float, *, minimum: float = 0.0) -> float:
    return environment().number(name, default, minimum=minimum)


@dataclass(frozen=True)
class HfTuning:
    billing_minute_s: float = 60.0
    request_timeout_s: float = 20.0
    control_timeout_s: float = 10.0
    retries: int = 4
    backoff_s: float = 0.5
    max_backoff_s: float = 30.0
    poll_starting_s: float = 2.0
    poll_steady_s: float = 30.0
    stop_timeout_s: float = 15.0
    exit_give_up_s: float = 60.0

    @classmethod
    def from_env(cls) -> HfTuning:
        minute = _env_float("PAIRWISE_BILLING_MINUTE_S", 60.0, minimum=0.001)
        timeout = _env_float("PAIRWISE_HF_TIMEOUT_S", 20.0, minimum=0.01)
        return cls(
            billing_minute_s=minute,
            request_timeout_s=timeout,
            control_timeout_s=_env_float("PAIRWISE_HF_CONTROL_TIMEOUT_S", min(timeout, 10.0), minimum=0.01),
            retries=int(_env_float("PAIRWISE_HF_RETRIES", 4)),
            backoff_s=_env_float("PAIRWISE_HF_BACKOFF_S", 0.5),
            max_backoff_s=_env_float("PAIRWISE_HF_MAX_BACKOFF_S", 30.0),
            poll_starting_s=_env_float("PAIRWISE_HF_POLL_STARTING_S", min(2.0, minute / 8), minimum=0.001),
            poll_steady_s=_env_float("PAIRWISE_HF_POLL_STEADY_S", min(30.0, minute / 2), minimum=0.001),
            stop_timeout_s=_env_float("PAIRWISE_HF_STOP_TIMEOUT_S", 15.0, minimum=0.1),
            exit_give_up_s=_env_float("PAIRWISE_HF_EXIT_GIVE_UP_S", 60.0, minimum=0.1),
        )
