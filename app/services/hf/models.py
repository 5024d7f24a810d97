"""Hugging Face wire shapes, read tolerantly: endpoints (hf-api.md §1.5), the hardware tree (§1.7)
and the create body (§1.3). Unknown keys are ignored; missing optional keys become None."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from app.services.errors import ConfigError, RefusedError

STATES = ("pending", "initializing", "updating", "updateFailed", "running", "paused", "failed", "scaledToZero")
BILLED_STATES = ("initializing", "running")  # HF bills while initializing and running (§1.6)
PUBLIC_TYPES = ("public",)
# `pairwise rented create --engine` → the image variant key (§1.3) and a default container.
ENGINES: dict[str, tuple[str, dict[str, Any]]] = {
    "vllm": ("vLLM", {"url": "vllm/vllm-openai:latest", "port": 8000, "healthRoute": "/health"}),
    "tgi": ("tgi", {"url": "ghcr.io/huggingface/text-generation-inference:3.1.1", "port": 80,
                    "healthRoute": "/health"}),
    "llamacpp": ("llamacpp", {"url": "ghcr.io/ggml-org/llama.cpp:server", "port": 8080, "healthRoute": "/health"}),
    "sglang": ("sGLang", {"url": "lmsysorg/sglang:latest", "port": 30000, "healthRoute": "/health"}),
}


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


@dataclass
class EndpointInfo:
    namespace: str
    name: str
    type: str
    state: str
    message: str
    url: str | None
    repository: str
    revision: str | None
    task: str | None
    vendor: str | None
    region: str | None
    accelerator: str | None
    instance_type: str | None
    instance_size: str | None
    min_replica: int | None
    max_replica: int | None
    scale_to_zero_timeout: float | None
    engine: str | None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def gpu(self) -> str:
        return " ".join(p for p in (self.instance_type, self.instance_size) if p) or "unknown"

    @property
    def is_public(self) -> bool:
        return self.type in PUBLIC_TYPES

    @property
    def billed(self) -> bool:
        return self.state in BILLED_STATES

    def summary(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("raw")
        data["gpu"] = self.gpu
        return data

    @classmethod
    def parse(cls, namespace: str, data: Any) -> EndpointInfo:
        if not isinstance(data, dict) or not isinstance(data.get("name"), str):
            raise ValueError("an endpoint object needs a name")
        status, model = _dict(data.get("status")), _dict(data.get("model"))
        compute, provider = _dict(data.get("compute")), _dict(data.get("provider"))
        scaling = _dict(compute.get("scaling"))
        image = _dict(model.get("image"))
        url = status.get("url")
        min_r, max_r = _num(scaling.get("minReplica")), _num(scaling.get("maxReplica"))
        return cls(
            namespace=namespace, name=data["name"], type=str(data.get("type") or "unknown"),
            state=str(status.get("state") or "unknown"),
            message=str(status.get("errorMessage") or status.get("message") or ""),
            url=url.rstrip("/") if isinstance(url, str) and url else None,
            repository=str(model.get("repository") or ""), revision=model.get("revision"),
            task=model.get("task"), vendor=provider.get("vendor"), region=provider.get("region"),
            accelerator=compute.get("accelerator"), instance_type=compute.get("instanceType"),
            instance_size=compute.get("instanceSize"),
            min_replica=int(min_r) if min_r is not None else None,
            max_replica=int(max_r) if max_r is not None else None,
            scale_to_zero_timeout=_num(scaling.get("scaleToZeroTimeout")),
            engine=next(iter(image), None), raw=data,
        )


@dataclass
class HardwareRow:
    vendor: str
    region: str
    regionLabel: str  # camelCase: HF's own field names
    id: str
    accelerator: str
    numAccelerators: int
    instanceType: str
    instanceSize: str
    architecture: str
    gpuMemoryGb: float | None
    memoryGb: float | None
    numCpus: int | None
    pricePerHour: float | None
    status: str
    quotaMax: int | None
    quotaUsed: int | None
    quotaFree: int | None
    unavailable_reason: str | None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def flatten_hardware(tree: Any) -> list[HardwareRow]:
    """The vendor → region → compute tree as rows. Unusable rows are kept and say why (never hidden)."""
    rows: list[HardwareRow] = []
    for vendor in _dict(tree).get("vendors") or []:
        vendor = _dict(vendor)
        for region in vendor.get("regions") or []:
            region = _dict(region)
            for compute in region.get("computes") or []:
                compute = _dict(compute)
                quota = _dict(compute.get("quota"))
                q_max, q_used = _num(quota.get("maxAccelerators")), _num(quota.get("usedAccelerators"))
                free = int(max(0.0, q_max - (q_used or 0.0))) if q_max is not None else None
                needed = int(_num(compute.get("numAccelerators")) or 1)
                status = str(compute.get("status") or "unknown")
                reasons = []
                for level, label in ((vendor, "vendor"), (region, "region")):
                    if level.get("status") in ("not_available", "deprecated"):
                        reasons.append(f"{label} {level.get('name')} is {str(level['status']).replace('_', ' ')}")
                if status in ("not_available", "deprecated"):
                    reasons.append(status.replace("_", " "))
                if free is not None and free < needed:
                    reasons.append(f"over quota: {free} of {int(q_max or 0)} accelerators free, {needed} needed")
                cpus = _num(compute.get("numCpus"))
                rows.append(HardwareRow(
                    vendor=str(vendor.get("name") or ""), region=str(region.get("name") or ""),
                    regionLabel=str(region.get("label") or region.get("name") or ""),
                    id=str(compute.get("id") or ""), accelerator=str(compute.get("accelerator") or ""),
                    numAccelerators=needed, instanceType=str(compute.get("instanceType") or ""),
                    instanceSize=str(compute.get("instanceSize") or ""),
                    architecture=str(compute.get("architecture") or ""),
                    gpuMemoryGb=_num(compute.get("gpuMemoryGb")), memoryGb=_num(compute.get("memoryGb")),
                    numCpus=int(cpus) if cpus is not None else None, pricePerHour=_num(compute.get("pricePerHour")),
                    status=status, quotaMax=int(q_max) if q_max is not None else None,
                    quotaUsed=int(q_used) if q_used is not None else None, quotaFree=free,
                    unavailable_reason="; ".join(reasons) or None,
                ))
    return rows


def pick_hardware(rows: list[HardwareRow], *, instance: str | None, region: str | None, vendor: str | None,
                  instance_size: str | None = None) -> HardwareRow:
    """The row a `rented create` asks for; refuses (naming why) when it is unknown or unusable.

    ``instance`` is an instanceType (``nvidia-l4``), ``type:size`` / ``type size`` / ``type-size``
    (``nvidia-l4 x4``) or a compute id; without it the cheapest usable GPU is chosen."""
    wanted_type, wanted_size = instance, instance_size
    if instance:
        for sep in (":", " "):
            if sep in instance:
                wanted_type, wanted_size = instance.split(sep, 1)
    matches = []
    for row in rows:
        if vendor and row.vendor != vendor or region and row.region != region:
            continue
        if instance and row.id != instance:
            if row.instanceType != wanted_type and f"{row.instanceType}-{row.instanceSize}" != instance:
                continue
            if wanted_size and row.instanceSize != wanted_size:
                continue
        elif not instance and row.accelerator != "gpu":
            continue
        matches.append(row)
    if not matches:
        where = ", ".join(f"{k} {v}" for k, v in (("vendor", vendor), ("region", region)) if v) or "any region"
        raise ConfigError(f"Hugging Face offers no {instance or 'GPU'} in {where} to this account "
                          "(see 'pairwise hf hardware')")
    usable = [r for r in matches if r.unavailable_reason is None]
    if not usable:
        row = matches[0]
        raise RefusedError(f"{row.instanceType} {row.instanceSize} in {row.vendor} {row.region} cannot be rented "
                           f"now: {row.unavailable_reason}")
    # Smallest size first, then cheapest: "nvidia-l4" alone means one L4, not four.
    usable.sort(key=lambda r: (r.numAccelerators, r.pricePerHour if r.pricePerHour is not None else 1e9))
    return usable[0]


def create_body(*, name: str, repository: str, hardware: HardwareRow, engine: str | None, task: str = "text-generation",
                revision: str | None = None, min_replica: int = 0, max_replica: int = 1,
                scale_to_zero_timeout_min: float | None = 15, endpoint_type: str = "authenticated",
                env: dict[str, str] | None = None, image_overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """The create body as huggingface_hub sends it (§1.3). Never public: Pairwise refuses to make one."""
    if endpoint_type not in ("authenticated", "protected", "private"):
        raise RefusedError(f"endpoint type {endpoint_type!r} refused: Pairwise never creates a public endpoint "
                           "(anyone with its URL could use it)")
    if engine is None:
        image: dict[str, Any] = {"huggingface": {}}
    else:
        if engine not in ENGINES:
            raise ConfigError(f"engine {engine!r} is not one of {', '.join(ENGINES)}")
        key, defaults = ENGINES[engine]
        image = {key: {**defaults, **(image_overrides or {})}}
    timeout = None if scale_to_zero_timeout_min is None else _whole_minutes(scale_to_zero_timeout_min)
    model: dict[str, Any] = {"framework": "pytorch", "repository": repository, "revision": revision,
                             "image": image, "task": task}
    if env:
        model["env"] = dict(env)
    return {
        "accountId": None,
        "compute": {"accelerator": hardware.accelerator, "instanceSize": hardware.instanceSize,
                    "instanceType": hardware.instanceType,
                    "scaling": {"maxReplica": max_replica, "minReplica": min_replica, "scaleToZeroTimeout": timeout}},
        "model": model,
        "name": name,
        "provider": {"region": hardware.region, "vendor": hardware.vendor},
        "type": endpoint_type,
    }


def _whole_minutes(value: float) -> int:
    # HF takes scaleToZeroTimeout in whole minutes; round up so the backstop is never shorter than asked.
    whole = int(value)
    return max(1, whole if whole == value else whole + 1)
