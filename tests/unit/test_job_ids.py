"""Job ids: random version 4 UUIDs in hex, as ``uuid.uuid4().hex`` wrote them (made without the UUID
object, on every request's way to its first byte)."""

from __future__ import annotations

import uuid

from app.services.jobs.records import Workload, new_job_id
from app.services.jobs.requester import Requester


def test_job_ids_are_random_version_4_uuids_in_hex() -> None:
    ids = {new_job_id() for _ in range(1000)}
    assert len(ids) == 1000
    for job_id in ids:
        parsed = uuid.UUID(job_id)
        assert parsed.hex == job_id and parsed.version == 4 and parsed.variant == uuid.RFC_4122


def test_a_new_workload_gets_its_own_id() -> None:
    who = Requester(node_id="n1", node_name="one")
    first, second = (Workload(model="m", api="openai", origin_node="one", origin_node_id="n1", requester=who)
                     for _ in range(2))
    assert first.id != second.id and uuid.UUID(first.id).version == 4
