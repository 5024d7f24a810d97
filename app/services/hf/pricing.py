"""What Hugging Face charges for an endpoint's compute now: its `/v2/provider` hardware list, cached.

The list is read again once the cached copy is older than half a billed minute, so a price or hardware
change on HF reaches the meter within one billed minute. A failed read keeps the last list (HF down
says nothing about its prices); a compute the list does not price is *unknown*, which the lifecycle
treats as a reason to pause.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from app.services.hf.client import HuggingFaceClient
from app.services.hf.errors import HfError
from app.services.hf.models import EndpointInfo, HardwareRow


@dataclass(frozen=True)
class Priced:
    compute: str  # "aws us-east-1 nvidia-l4 x1": what HF runs the endpoint on
    price_per_hour: float | None  # None: HF lists no price for it (unknown)
    read_at: float  # when HF's list said so (on the lifecycle's clock)


def compute_of(info: EndpointInfo) -> str:
    return " ".join(p or "?" for p in (info.vendor, info.region, info.instance_type, info.instance_size))


class HfPrices:
    def __init__(self, max_age_s: float, clock: Callable[[], float]) -> None:
        self.max_age_s, self.clock = max_age_s, clock
        self._rows: dict[str, tuple[float, list[HardwareRow]]] = {}  # namespace -> (read at, rows)

    async def _hardware(self, client: HuggingFaceClient, namespace: str) -> tuple[float, list[HardwareRow]] | None:
        cached = self._rows.get(namespace)
        if cached is not None and self.clock() - cached[0] < self.max_age_s:
            return cached
        try:
            rows = await client.hardware(namespace)
        except HfError:
            return cached
        self._rows[namespace] = (self.clock(), rows)
        return self._rows[namespace]

    async def of(self, client: HuggingFaceClient, info: EndpointInfo) -> Priced | None:
        """The price of the compute ``info`` runs on; None when HF's list could not be read at all."""
        found = await self._hardware(client, info.namespace)
        if found is None:
            return None
        read_at, rows = found
        row = next((r for r in rows if (r.vendor, r.region, r.instanceType, r.instanceSize)
                    == (info.vendor, info.region, info.instance_type, info.instance_size)), None)
        return Priced(compute_of(info), row.pricePerHour if row is not None else None, read_at)

    def forget(self) -> None:
        self._rows.clear()
