"""What the sponsor remembers about each Hugging Face endpoint it watches: `hf_endpoints.json` (0600).

Per rented-node name: the endpoint (namespace/name), the model and hardware it had when Pairwise
created or attached it (drift is measured against these), whether Pairwise created it, and the last
time a workload used it (so reconcile at start can tell an idle endpoint). Never a token.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from app.home import write_private
from app.services.hf.models import EndpointInfo

log = logging.getLogger(__name__)


@dataclass
class EndpointRecord:
    namespace: str
    endpoint: str
    repository: str
    vendor: str | None
    region: str | None
    instance_type: str | None
    instance_size: str | None
    created_by_pairwise: bool = False
    last_activity: float | None = None  # wall clock of the last workload through Pairwise

    @classmethod
    def of(cls, info: EndpointInfo, *, created: bool) -> EndpointRecord:
        return cls(info.namespace, info.name, info.repository, info.vendor, info.region, info.instance_type,
                   info.instance_size, created)

    def drift(self, info: EndpointInfo) -> list[str]:
        """What changed on HF since Pairwise recorded the endpoint (empty: nothing)."""
        changed = []
        if info.repository != self.repository:
            changed.append(f"model changed from {self.repository} to {info.repository}")
        was = (self.vendor, self.region, self.instance_type, self.instance_size)
        now = (info.vendor, info.region, info.instance_type, info.instance_size)
        if was != now:
            changed.append(f"hardware changed from {' '.join(p or '?' for p in was)} to {' '.join(p or '?' for p in now)}")
        if info.is_public:
            changed.append("its type became public: anyone with its URL could use it")
        return changed


class EndpointRecords:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._records: dict[str, EndpointRecord] = self._load()

    def get(self, name: str) -> EndpointRecord | None:
        return self._records.get(name)

    def put(self, name: str, record: EndpointRecord) -> None:
        self._records[name] = record
        self.save()

    def forget(self, name: str) -> None:
        if self._records.pop(name, None) is not None:
            self.save()

    def _load(self) -> dict[str, EndpointRecord]:
        if not self.path.exists():
            return {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            known = {f.name for f in fields(EndpointRecord)}
            return {name: EndpointRecord(**{k: v for k, v in row.items() if k in known})
                    for name, row in data.items() if isinstance(row, dict)}
        except (OSError, ValueError, TypeError) as exc:
            log.warning("%s unreadable, drift checks start afresh: %s", self.path, exc)
            return {}

    def save(self) -> None:
        body: dict[str, Any] = {name: asdict(r) for name, r in self._records.items()}
        write_private(self.path, json.dumps(body, indent=1).encode())
