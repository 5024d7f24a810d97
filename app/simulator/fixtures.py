"""Static catalogues the simulator serves: endpoint hardware and quota, job flavors, catalog, router models.

Prices follow hf-api.md §1.7 and §4.5. Everything here is copied into the running simulator's state,
so /_sim/prices and /_sim/quota can change it without touching these tables.
"""

from __future__ import annotations

from typing import Any

# (vendor, region, accelerator, instanceType, instanceSize, numAccelerators, numCpus, memoryGb,
#  gpuMemoryGb, architecture, status, pricePerHour)
_COMPUTES: list[tuple[Any, ...]] = [
    ("aws", "us-east-1", "cpu", "intel-spr", "x1", 1, 2, 4.0, None, "Intel Sapphire Rapids", "available", 0.033),
    ("aws", "us-east-1", "cpu", "intel-spr", "x2", 1, 4, 8.0, None, "Intel Sapphire Rapids", "available", 0.067),
    ("aws", "us-east-1", "gpu", "nvidia-t4", "x1", 1, 3, 15.0, 16, "NVIDIA T4", "available", 0.5),
    ("aws", "us-east-1", "gpu", "nvidia-l4", "x1", 1, 7, 30.0, 24, "Nvidia L4", "available", 0.8),
    ("aws", "us-east-1", "gpu", "nvidia-l4", "x4", 4, 47, 186.0, 96, "Nvidia L4", "available", 3.8),
    ("aws", "us-east-1", "gpu", "nvidia-a10g", "x1", 1, 3, 15.0, 24, "NVIDIA A10G", "available", 1.0),
    ("aws", "us-east-1", "gpu", "nvidia-l40s", "x1", 1, 7, 46.0, 48, "Nvidia L40S", "available", 1.8),
    ("aws", "us-east-1", "gpu", "nvidia-a100", "x1", 1, 11, 142.0, 80, "Nvidia A100", "available", 2.5),
    ("aws", "us-east-1", "gpu", "nvidia-a100", "x8", 8, 92, 1138.0, 640, "Nvidia A100", "low_availability", 20.0),
    ("aws", "us-east-1", "gpu", "nvidia-h200", "x1", 1, 23, 256.0, 141, "Nvidia H200", "available", 5.0),
    ("aws", "us-east-1", "gpu", "nvidia-h200", "x8", 8, 184, 2048.0, 1128, "Nvidia H200", "available", 40.0),
    ("aws", "us-east-1", "cpu", "intel-icl", "x1", 1, 1, 2.0, None, "Intel Ice Lake", "deprecated", 0.032),
    ("aws", "us-east-1", "gpu", "nvidia-h100", "x1", 1, 23, 240.0, 80, "Nvidia H100", "deprecated", 4.5),
    ("aws", "us-east-1", "gpu", "nvidia-b200", "x1", 1, 28, 240.0, 180, "Nvidia B200", "deprecated", 9.0),
    ("aws", "eu-west-1", "gpu", "nvidia-a10g", "x1", 1, 3, 15.0, 24, "NVIDIA A10G", "available", 1.0),
    ("aws", "eu-west-1", "gpu", "nvidia-l40s", "x1", 1, 7, 46.0, 48, "Nvidia L40S", "not_available", 1.8),
    ("gcp", "us-east4", "gpu", "nvidia-l4", "x1", 1, 7, 30.0, 24, "Nvidia L4", "available", 0.7),
]

REGION_LABELS = {"us-east-1": "N. Virginia", "eu-west-1": "Ireland", "us-east4": "Virginia"}

# Accelerators a namespace may run per instance type. h200 is 0 so any h200 create is over quota.
DEFAULT_QUOTA: dict[str, int] = {
    "intel-spr": 16, "intel-icl": 16, "nvidia-t4": 8, "nvidia-l4": 16, "nvidia-a10g": 8,
    "nvidia-l40s": 8, "nvidia-a100": 8, "nvidia-h200": 0, "nvidia-h100": 0, "nvidia-b200": 0,
}


def computes() -> list[dict[str, Any]]:
    rows = []
    for (vendor, region, acc, itype, isize, n_acc, cpus, mem, gmem, arch, status, price) in _COMPUTES:
        rows.append({
            "vendor": vendor, "region": region,
            "id": f"{vendor}-{region}-{itype}-{isize}", "accelerator": acc, "numAccelerators": n_acc,
            "numCpus": cpus, "memoryGb": mem, "gpuMemoryGb": gmem, "instanceType": itype,
            "instanceSize": isize, "architecture": arch, "status": status, "pricePerHour": price,
        })
    return rows


# (name, prettyName, cpu, ram, storage, accelerator(type, model, quantity, vram, manufacturer) | None, $/h)
_FLAVORS: list[tuple[Any, ...]] = [
    ("cpu-basic", "CPU Basic", "2 vCPU", "16 GB", "50 GB", None, 0.01),
    ("cpu-upgrade", "CPU Upgrade", "8 vCPU", "32 GB", "50 GB", None, 0.03),
    ("cpu-xl", "CPU XL", "16 vCPU", "124 GB", "1000 GB", None, 1.0),
    ("cpu-performance", "CPU Performance", "32 vCPU", "256 GB", "1000 GB", None, 1.9),
    ("t4-small", "Nvidia T4 - small", "4 vCPU", "15 GB", "50 GB", ("gpu", "T4", "1", "16 GB", "Nvidia"), 0.4),
    ("t4-medium", "Nvidia T4 - medium", "8 vCPU", "30 GB", "100 GB", ("gpu", "T4", "1", "16 GB", "Nvidia"), 0.6),
    ("l4x1", "1x Nvidia L4", "8 vCPU", "30 GB", "400 GB", ("gpu", "L4", "1", "24 GB", "Nvidia"), 0.8),
    ("l4x4", "4x Nvidia L4", "48 vCPU", "186 GB", "3200 GB", ("gpu", "L4", "4", "96 GB", "Nvidia"), 3.8),
    ("l40sx1", "1x Nvidia L40S", "8 vCPU", "62 GB", "380 GB", ("gpu", "L40S", "1", "48 GB", "Nvidia"), 1.8),
    ("l40sx4", "4x Nvidia L40S", "48 vCPU", "382 GB", "3200 GB", ("gpu", "L40S", "4", "192 GB", "Nvidia"), 8.3),
    ("l40sx8", "8x Nvidia L40S", "192 vCPU", "1534 GB", "6500 GB", ("gpu", "L40S", "8", "384 GB", "Nvidia"), 23.5),
    ("a10g-small", "Nvidia A10G - small", "4 vCPU", "15 GB", "110 GB", ("gpu", "A10G", "1", "24 GB", "Nvidia"), 1.0),
    ("a10g-large", "Nvidia A10G - large", "12 vCPU", "46 GB", "200 GB", ("gpu", "A10G", "1", "24 GB", "Nvidia"), 1.5),
    ("a10g-largex2", "2x Nvidia A10G - large", "24 vCPU", "92 GB", "1000 GB",
     ("gpu", "A10G", "2", "48 GB", "Nvidia"), 3.0),
    ("a10g-largex4", "4x Nvidia A10G - large", "48 vCPU", "184 GB", "2000 GB",
     ("gpu", "A10G", "4", "96 GB", "Nvidia"), 5.0),
    ("a100-large", "Nvidia A100 - large", "12 vCPU", "142 GB", "1000 GB", ("gpu", "A100", "1", "80 GB", "Nvidia"), 2.5),
    ("a100x4", "4x Nvidia A100", "44 vCPU", "568 GB", "4000 GB", ("gpu", "A100", "4", "320 GB", "Nvidia"), 10.0),
    ("a100x8", "8x Nvidia A100", "88 vCPU", "1136 GB", "8000 GB", ("gpu", "A100", "8", "640 GB", "Nvidia"), 20.0),
    ("h200", "1x Nvidia H200", "23 vCPU", "256 GB", "3000 GB", ("gpu", "H200", "1", "141 GB", "Nvidia"), 5.0),
    ("h200x2", "2x Nvidia H200", "46 vCPU", "512 GB", "6000 GB", ("gpu", "H200", "2", "282 GB", "Nvidia"), 10.0),
    ("h200x4", "4x Nvidia H200", "92 vCPU", "1024 GB", "12000 GB", ("gpu", "H200", "4", "564 GB", "Nvidia"), 20.0),
    ("h200x8", "8x Nvidia H200", "184 vCPU", "2048 GB", "24000 GB", ("gpu", "H200", "8", "1128 GB", "Nvidia"), 40.0),
    ("rtx-pro-6000", "1x Nvidia RTX Pro 6000", "16 vCPU", "128 GB", "1000 GB",
     ("gpu", "RTX Pro 6000", "1", "96 GB", "Nvidia"), 2.75),
    ("rtx-pro-6000x2", "2x Nvidia RTX Pro 6000", "32 vCPU", "256 GB", "2000 GB",
     ("gpu", "RTX Pro 6000", "2", "192 GB", "Nvidia"), 5.5),
    ("rtx-pro-6000x4", "4x Nvidia RTX Pro 6000", "64 vCPU", "512 GB", "4000 GB",
     ("gpu", "RTX Pro 6000", "4", "384 GB", "Nvidia"), 11.0),
    ("rtx-pro-6000x8", "8x Nvidia RTX Pro 6000", "128 vCPU", "1024 GB", "8000 GB",
     ("gpu", "RTX Pro 6000", "8", "768 GB", "Nvidia"), 22.0),
]

# Jobs add a flat fee per running job on top of the hardware (hf-api.md §4.4).
JOB_FLAT_FEE_PER_HOUR = 0.01


def job_flavor_prices() -> dict[str, float]:
    return {name: price for (name, *_rest, price) in _FLAVORS}


def job_hardware(prices: dict[str, float]) -> list[dict[str, Any]]:
    rows = []
    for name, pretty, cpu, ram, storage, acc, _price in _FLAVORS:
        per_minute = prices[name] / 60
        rows.append({
            "name": name, "prettyName": pretty, "cpu": cpu, "ram": ram, "ephemeralStorage": storage,
            "accelerator": None if acc is None else {
                "type": acc[0], "model": acc[1], "quantity": acc[2], "vram": acc[3], "manufacturer": acc[4]},
            "unitCostMicroUSD": round(per_minute * 1_000_000), "unitCostUSD": round(per_minute, 8),
            "unitLabel": "minute",
        })
    return rows


# Catalog: (repoId, license, task, [(recipe publicId, accelerator, engineType, ggufFile)])
_CATALOG: list[tuple[str, str, str, list[tuple[str, str, str, str | None]]]] = [
    ("HuggingFaceTB/SmolLM2-135M-Instruct", "Apache 2.0", "text-generation",
     [("smollm2-135m-gpu-vllm", "gpu", "vllm", None), ("smollm2-135m-cpu-llamacpp", "cpu", "llamacpp",
                                                        "SmolLM2-135M-Instruct-Q8_0.gguf")]),
    ("HuggingFaceTB/SmolLM2-1.7B-Instruct", "Apache 2.0", "text-generation",
     [("smollm2-1-7b-gpu-vllm", "gpu", "vllm", None)]),
    ("Qwen/Qwen2.5-0.5B-Instruct", "Apache 2.0", "text-generation",
     [("qwen2-5-0-5b-gpu-sglang", "gpu", "sglang", None)]),
    ("meta-llama/Llama-3.2-1B-Instruct", "Llama 3.2", "text-generation",
     [("llama-3-2-1b-gpu-vllm", "gpu", "vllm", None)]),
    ("sentence-transformers/all-MiniLM-L6-v2", "Apache 2.0", "feature-extraction",
     [("minilm-l6-cpu-tei", "cpu", "tei", None)]),
]

CATALOG_CREATED_AT = "2025-06-01T00:00:00.000Z"


def catalog_items() -> list[dict[str, Any]]:
    items = []
    for repo, license_, task, recipes in _CATALOG:
        author, _, model = repo.partition("/")
        items.append({
            "repoId": repo, "modelName": model, "authorName": author, "license": license_, "task": task,
            "createdAt": CATALOG_CREATED_AT,
            "recipes": [{"publicId": rid, "accelerator": acc, "engineType": eng, "ggufFile": gguf, "revision": None}
                        for rid, acc, eng, gguf in recipes],
        })
    return items


# Router: model -> providers (provider, input $/1M, output $/1M, context, throughput tok/s)
_ROUTER: dict[str, list[tuple[str, float, float, int, float]]] = {
    "meta-llama/Llama-3.1-8B-Instruct": [("together", 0.18, 0.18, 131072, 120.0), ("novita", 0.02, 0.05, 16384, 60.0)],
    "openai/gpt-oss-20b": [("groq", 0.1, 0.5, 131072, 900.0), ("together", 0.05, 0.2, 131072, 200.0)],
    "Qwen/Qwen2.5-7B-Instruct": [("together", 0.3, 0.3, 32768, 150.0)],
    "HuggingFaceTB/SmolLM3-3B": [("hf-inference", 0.05, 0.1, 65536, 80.0)],
}


def router_models() -> dict[str, list[dict[str, Any]]]:
    return {
        model: [{"provider": p, "status": "live", "context_length": ctx, "pricing": {"input": i, "output": o},
                 "supports_tools": True, "supports_structured_output": True, "first_token_latency_ms": 400,
                 "throughput": tput, "is_model_author": False} for (p, i, o, ctx, tput) in providers]
        for model, providers in _ROUTER.items()
    }

