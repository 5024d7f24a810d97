"""Hugging Face Jobs wire shapes (hf-api.md §4), read tolerantly, and what a batch window needs from them:
the Job object, job hardware with its price, the run body for a serving engine, and window durations.

A batch window is a Job that serves a model on one token-protected exposed port for a fixed time:
HF's ``timeoutSeconds`` is the hard stop HF enforces even if every machine of the cluster is gone.
Ports are only ever in ``expose.ports``, never ``portsPublic`` (anyone could call a public port).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from app.services.errors import ConfigError

if TYPE_CHECKING:
    from app.services.api.plans import WindowFlavor

STAGES = ("SCHEDULING", "RUNNING", "UPDATING", "COMPLETED", "CANCELED", "ERROR", "DELETED")
TERMINAL = ("COMPLETED", "CANCELED", "ERROR", "DELETED")
EXIT_STOP = "the sponsor is stopping (pause on exit cancels a batch window)"  # why an exit cancels a window
PORT_FEE_PER_HOUR = 0.01  # HF's flat fee per job with an exposed port, on top of the hardware
LABEL_SPONSOR, LABEL_RENTED = "pairwise-sponsor", "pairwise-rented"
LABEL_VALUE = re.compile(r"^[A-Za-z0-9._-]{1,100}$")
# Each engine's official serving image and how it serves REPO on PORT, bound to 0.0.0.0 (HF needs that).
JOB_ENGINES: dict[str, tuple[str, int, tuple[str, ...]]] = {
    "vllm": ("vllm/vllm-openai:latest", 8000, ("vllm", "serve", "{repo}", "--host", "0.0.0.0", "--port", "{port}")),
    "sglang": ("lmsysorg/sglang:latest", 30000, ("python3", "-m", "sglang.launch_server", "--model-path", "{repo}",
                                                 "--host", "0.0.0.0", "--port", "{port}")),
    "llamacpp": ("ghcr.io/ggml-org/llama.cpp:server-cuda", 8080, ("llama-server", "-hf", "{repo}", "--host",
                                                                 "0.0.0.0", "--port", "{port}")),
}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd])\s*$")
_UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_window(text: str) -> int:
    """``30m``, ``2h``, ``1d`` (``m`` is minutes) → whole seconds; ConfigError for anything else."""
    found = _DURATION.match(str(text or ""))
    if not found:
        raise ConfigError(f"--window {text!r} is not a duration: give a number and a unit, like 30m, 2h or 1d "
                          "(m = minutes)")
    seconds = math.ceil(float(found.group(1)) * _UNIT_S[found.group(2)])
    if seconds < 60:
        raise ConfigError(f"--window {text!r} is shorter than a minute (HF bills per minute)")
    return seconds


def describe_duration(seconds: float) -> str:
    minutes = int(seconds // 60)
    hours, rest = divmod(minutes, 60)
    if hours and rest:
        return f"{hours}h {rest}m"
    return f"{hours}h" if hours else f"{minutes}m"


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def parse_time(value: Any) -> float | None:
    """An ISO time from HF (``…Z``) as epoch seconds; None when absent or unreadable."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


@dataclass
class JobInfo:
    id: str
    namespace: str
    stage: str
    message: str | None
    labels: dict[str, str]
    flavor: str | None
    timeout_s: int | None
    created_at: float | None
    started_at: float | None
    finished_at: float | None
    expose_url: str | None
    public_ports: list[int]
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def ended(self) -> bool:
        return self.stage in TERMINAL

    @classmethod
    def parse(cls, namespace: str, data: Any) -> JobInfo:
        if not isinstance(data, dict) or not isinstance(data.get("id"), str):
            raise ValueError("no job id")
        status, expose, owner, labels = (_dict(data.get(k)) for k in ("status", "expose", "owner", "labels"))
        urls = status.get("exposeUrls") if isinstance(status.get("exposeUrls"), list) else []
        timeout = data.get("timeout")
        return cls(
            id=data["id"], namespace=str(owner.get("name") or namespace), stage=str(status.get("stage") or "UNKNOWN"),
            message=status.get("message") if isinstance(status.get("message"), str) else None,
            labels={str(k): str(v) for k, v in labels.items()}, flavor=data.get("flavor"),
            timeout_s=timeout if isinstance(timeout, int) else None,
            created_at=parse_time(data.get("createdAt")), started_at=parse_time(data.get("startedAt")),
            finished_at=parse_time(data.get("finishedAt")),
            expose_url=str(urls[0]) if urls else None,
            public_ports=[p for p in expose.get("portsPublic") or [] if isinstance(p, int)], raw=data,
        )


@dataclass
class JobFlavor:
    name: str
    pretty: str
    price_per_hour: float  # hardware only; the port's fee is added by the window's price
    gpu: str | None

    @classmethod
    def parse(cls, row: dict[str, Any]) -> JobFlavor | None:
        name = row.get("name")
        if not isinstance(name, str):
            return None
        per_minute = row.get("unitCostUSD")
        if not isinstance(per_minute, int | float):
            micro = row.get("unitCostMicroUSD")
            per_minute = micro / 1_000_000 if isinstance(micro, int | float) else None
        if per_minute is None:
            return None
        acc = row.get("accelerator") if isinstance(row.get("accelerator"), dict) else None
        gpu = f"{acc.get('quantity', 1)}x {acc.get('model')} {acc.get('vram') or ''}".strip() if acc else None
        return cls(name=name, pretty=str(row.get("prettyName") or name), price_per_hour=round(per_minute * 60, 6),
                   gpu=gpu)

    @property
    def window_price_per_hour(self) -> float:
        return round(self.price_per_hour + PORT_FEE_PER_HOUR, 6)

    def to_json(self) -> WindowFlavor:
        return {"name": self.name, "pretty": self.pretty, "gpu": self.gpu, "price_per_hour": self.price_per_hour,
                "window_price_per_hour": self.window_price_per_hour}


def window_cost(price_per_hour: float, window_s: int) -> float:
    """What a whole window bills: every started minute at the hardware price plus the port's fee."""
    return math.ceil(window_s / 60) * price_per_hour / 60


def run_body(*, repo: str, flavor: str, engine: str, window_s: int, labels: dict[str, str],
             token: str | None) -> dict[str, Any]:
    image, port, command = JOB_ENGINES[engine]
    body: dict[str, Any] = {
        "dockerImage": image, "flavor": flavor, "timeoutSeconds": int(window_s),
        "command": [part.format(repo=repo, port=port) for part in command], "arguments": [],
        "environment": {"MODEL_ID": repo}, "labels": dict(labels),
        "expose": {"ports": [port]},  # token-protected; never portsPublic
    }
    if token:
        body["secrets"] = {"HF_TOKEN": token}  # for gated models; HF keeps it as a secret of the job
    return body
