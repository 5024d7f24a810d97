"""Nothing recorded is dropped (issue 26, item 3).

The node's home is a small tmpfs. It is filled to the last block while local apps keep chatting:
every chat still answers, the node says once that history is not being saved and why (the disk is
full), the Jobs list shows the records meanwhile, and once space is freed they are written: all of
them are there after a restart. A home that is read-only at start is named as such, never as a
damaged database."""

from __future__ import annotations

from pathlib import Path

import openai

from app.harness import NodeProc, TinyProc, wait_until
from tests.harden.disk import small_disk
from tests.hf.support import Events

RECORDED_WHILE_FULL = 20


def chat(node: NodeProc) -> None:
    client = openai.OpenAI(base_url=f"{node.url}/v1", api_key="unused", max_retries=0, timeout=30)
    answer = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert answer.choices[0].message.content


def notices(events: Events, title: str) -> list[dict[str, object]]:
    return [e for e in events.seen if e["kind"] == "notice" and e["title"] == title]


def test_records_made_while_the_disk_is_full_are_written_when_it_frees(node_factory: type[NodeProc],
                                                                       tiny_factory: type[TinyProc],
                                                                       tmp_path: Path) -> None:
    tiny = tiny_factory("--api", "openai", "--model", "m")
    with small_disk(tmp_path / "home") as disk:
        node = node_factory("alpha", home=disk.path).start()
        events: Events | None = None
        try:
            node.add_engine("local", tiny.url)
            chat(node)
            events = Events(node)
            disk.fill()
            for _ in range(RECORDED_WHILE_FULL):
                chat(node)
            said = wait_until(lambda: notices(events, "Job history not saved") if events else None, timeout=20,
                              what="the node to say history is not saved")
            assert "the disk is full" in str(said[0]["message"]) and "state.db" in str(said[0]["message"])
            assert len(node.cli_json("jobs", "--json")) == RECORDED_WHILE_FULL + 1  # shown from memory
            assert "damaged" not in str(said[0]["message"])

            disk.free()
            wait_until(lambda: notices(events, "Job history saved again") if events else None, timeout=20,
                       what="the node to say history is saved again")
            assert len(notices(events, "Job history not saved")) == 1  # said once, not per record
            events.close()
            events = None
            node.stop()
            node.start()
            jobs = node.cli_json("jobs", "--json")
            assert len(jobs) == RECORDED_WHILE_FULL + 1 and all(j["state"] == "completed" for j in jobs)
        finally:
            if events is not None:
                events.close()
            node.stop()


def test_a_read_only_home_is_named_as_such_not_as_a_damaged_database(node_factory: type[NodeProc],
                                                                     tmp_path: Path) -> None:
    with small_disk(tmp_path / "home") as disk:
        node = node_factory("alpha", home=disk.path).start()
        node.stop()
        (disk.path / "state.db-wal").unlink(missing_ok=True)
        disk.read_only()
        result = node.cli("serve", "--listen", "127.0.0.1:0", "--cluster-listen", "127.0.0.1:0", "--no-mdns",
                          check=False, timeout=60)
        said = result.stderr + result.stdout
        assert result.returncode != 0
        assert "read-only" in said and "damaged" not in said and "set-aside" not in said, said
        assert "Traceback" not in said
