"""An engine credential goes through a real Secret Service and nowhere else."""

from __future__ import annotations

import openai
import pytest

from app.harness import NodeProc, TinyProc
from tests.support.secret_service import require_secret_service

TOKEN = "engine-secret-7f3a9c2e"


@pytest.mark.keyring
def test_engine_token_stored_in_keyring_and_used(node_factory: type[NodeProc], tiny_factory: type[TinyProc]) -> None:
    require_secret_service()
    engine = tiny_factory("--api", "openai", "--model", "guarded")
    engine.config(require_token=TOKEN)
    node = node_factory("cred").start()
    node.cli("engines", "add", "guarded", "--url", engine.url, "--api", "openai", "--token-stdin", stdin=TOKEN + "\n")
    client = openai.OpenAI(base_url=f"{node.url}/v1", api_key="caller-key-is-not-forwarded", max_retries=0)
    reply = client.chat.completions.create(model="guarded", messages=[{"role": "user", "content": "hi"}])
    assert reply.choices[0].message.content
    assert engine.stats()["last_headers"]["authorization"] == f"Bearer {TOKEN}"

    # Read back from the keyring after a restart, not from anything in the home.
    node.stop()
    node.start()
    client = openai.OpenAI(base_url=f"{node.url}/v1", api_key="caller-key-is-not-forwarded", max_retries=0)
    reply = client.chat.completions.create(model="guarded", messages=[{"role": "user", "content": "again"}])
    assert reply.choices[0].message.content
    for path in node.home.rglob("*"):
        if path.is_file():
            assert TOKEN.encode() not in path.read_bytes(), f"token found in {path}"
    assert TOKEN not in node.log.read_text()
