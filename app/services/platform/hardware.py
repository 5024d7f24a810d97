"""What this machine has: CPUs, memory, GPUs.

Memory: ``sysconf`` on Linux, ``sysctl hw.memsize`` on macOS, ``GlobalMemoryStatusEx`` on Windows
(all through the C library, no subprocess). GPUs: ``nvidia-smi`` wherever it is installed (Linux
and Windows drivers both ship it), AMD through Linux's sysfs, Apple silicon's unified memory on
macOS. ``hardware_summary`` is instant (it may be called per request); ``probe_hardware`` runs
``nvidia-smi`` and is meant for once at start.
"""

from __future__ import annotations

import asyncio
import functools
import os
import platform
import shutil
import sys
from pathlib import Path
from typing import NotRequired, TypedDict

NVIDIA_SMI_TIMEOUT_S = 5.0


class Gpu(TypedDict):
    name: str
    vram_gb: float | None  # None where the machine cannot tell
    unified_memory: NotRequired[bool]  # Apple silicon: the GPU uses the system memory


class HardwareFacts(TypedDict):
    """This machine as the node list shows it and peers see it."""

    cpus: int | None
    memory_gb: float | None
    gpus: list[Gpu]
    machine: str


@functools.cache
def total_memory_bytes() -> int | None:
    """Physical memory, or None when the OS will not say."""
    if sys.platform == "win32":
        return _windows_total_memory()
    if sys.platform == "darwin":
        return _sysctl_uint64(b"hw.memsize")
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def _windows_total_memory() -> int | None:
    if sys.platform == "win32":
        import ctypes

        class MemoryStatusEx(ctypes.Structure):  # MEMORYSTATUSEX: DWORD is 32 bits, DWORDLONG 64
            _fields_ = [("dwLength", ctypes.c_uint32), ("dwMemoryLoad", ctypes.c_uint32),
                        ("ullTotalPhys", ctypes.c_uint64), ("ullAvailPhys", ctypes.c_uint64),
                        ("ullTotalPageFile", ctypes.c_uint64), ("ullAvailPageFile", ctypes.c_uint64),
                        ("ullTotalVirtual", ctypes.c_uint64), ("ullAvailVirtual", ctypes.c_uint64),
                        ("ullAvailExtendedVirtual", ctypes.c_uint64)]

        status = MemoryStatusEx()
        status.dwLength = ctypes.sizeof(MemoryStatusEx)
        if not ctypes.windll.kernel32.GlobalMemoryStatusEx(ctypes.byref(status)):
            return None
        return int(status.ullTotalPhys)
    return None


def _sysctl_uint64(name: bytes) -> int | None:
    import ctypes
    import ctypes.util

    library = ctypes.util.find_library("c")
    if library is None:
        return None
    libc = ctypes.CDLL(library)
    value = ctypes.c_uint64(0)
    size = ctypes.c_size_t(ctypes.sizeof(value))
    if libc.sysctlbyname(name, ctypes.byref(value), ctypes.byref(size), None, ctypes.c_size_t(0)) != 0:
        return None
    return int(value.value)


def memory_gb() -> float | None:
    total = total_memory_bytes()
    return round(total / 2**30, 1) if total else None


def is_apple_silicon() -> bool:
    return sys.platform == "darwin" and platform.machine() == "arm64"


def os_description() -> str:
    return f"{platform.system()} {platform.release()}"


def hardware_summary() -> HardwareFacts:
    """What the OS tells at once (no subprocess)."""
    return {"cpus": os.cpu_count(), "memory_gb": memory_gb(), "gpus": quick_gpus(), "machine": platform.machine()}


def quick_gpus() -> list[Gpu]:
    """NVIDIA GPUs through Linux's /proc (no subprocess); Apple silicon shares memory."""
    gpus: list[Gpu] = []
    base = Path("/proc/driver/nvidia/gpus")
    if sys.platform.startswith("linux") and base.is_dir():
        for entry in sorted(base.iterdir()):
            try:
                with open(entry / "information", encoding="utf-8") as fh:
                    info = dict(line.split(":", 1) for line in fh if ":" in line)
            except OSError:
                continue
            gpus.append({"name": info.get("Model", "NVIDIA GPU").strip(), "vram_gb": None})
    if is_apple_silicon():
        gpus.append({"name": "Apple silicon (unified memory)", "vram_gb": None})
    return gpus


async def probe_hardware() -> HardwareFacts:
    """The summary with GPU VRAM where the machine can tell (runs ``nvidia-smi``: once, at start)."""
    summary = hardware_summary()
    gpus = await nvidia_gpus() or amd_gpus()
    if gpus:
        summary["gpus"] = gpus
    elif is_apple_silicon():
        # Unified memory: the GPU can use (most of) the system memory.
        summary["gpus"] = [{"name": "Apple silicon (unified memory)", "vram_gb": summary["memory_gb"],
                            "unified_memory": True}]
    return summary


async def nvidia_gpus() -> list[Gpu]:
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return []
    try:
        proc = await asyncio.create_subprocess_exec(
            exe, "--query-gpu=name,memory.total", "--format=csv,noheader,nounits",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    except OSError:
        return []
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), timeout=NVIDIA_SMI_TIMEOUT_S)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        return []
    return parse_nvidia_smi(out.decode("utf-8", "replace"))


def parse_nvidia_smi(text: str) -> list[Gpu]:
    gpus: list[Gpu] = []
    for line in text.splitlines():
        name, _, mib = line.rpartition(",")
        try:
            gpus.append({"name": name.strip(), "vram_gb": round(float(mib) / 1024, 1)})
        except ValueError:
            continue
    return gpus


def amd_gpus(root: Path = Path("/sys/class/drm")) -> list[Gpu]:
    gpus: list[Gpu] = []
    for card in sorted(root.glob("card[0-9]*/device/mem_info_vram_total")):
        try:
            vram = int(card.read_text(encoding="utf-8").strip())
            name_file = card.parent / "product_name"
            name = name_file.read_text(encoding="utf-8").strip() if name_file.exists() else "AMD GPU"
        except (OSError, ValueError):
            continue
        gpus.append({"name": name or "AMD GPU", "vram_gb": round(vram / 2**30, 1)})
    return gpus
