"""One node (its own process) with a local engine and a rented node: keys made with the CLI and
used by the real openai and ollama clients, on the loopback front door and on the HTTPS LAN door
bound to 127.0.0.2, with the node certificate pinned. Refusals by name (model pattern, off-LAN
deny, revoked, wrong, missing), a rate over its limit with Retry-After, failed keys throttled, and
no key in clear anywhere in the home.
"""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Any

import httpx
import ollama
import openai
import pytest

from app.harness import NodeProc
from tests.rented.conftest import TOKEN
from tests.rented.test_sponsor_e2e import attach_args, files_containing

HELLO = [{"role": "user", "content": "hello"}]


def make_key(node: NodeProc, name: str, *options: str) -> str:
    result = node.cli("keys", "create", name, *options)
    key = result.stdout.strip()
    assert key.startswith("pw-") and "\n" not in key and "shown this once" in result.stderr
    return key


def chat(base_url: str, key: str, model: str, **client: Any) -> Any:
    api = openai.OpenAI(base_url=base_url, api_key=key, max_retries=0, **client)
    return api.chat.completions.with_raw_response.create(model=model, messages=HELLO)  # type: ignore[arg-type]


def refusal(base_url: str, key: str, model: str, **client: Any) -> openai.APIStatusError:
    with pytest.raises(openai.APIStatusError) as caught:
        chat(base_url, key, model, **client)
    return caught.value


def job_of(node: NodeProc, job_id: str) -> dict[str, Any]:
    return next(j for j in node.cli_json("jobs", "--limit", "200") if j["id"] == job_id)


@pytest.fixture
def lab(node_factory: Any, tiny_factory: Any, tls_tiny_factory: Any) -> NodeProc:
    engine = tiny_factory("--api", "openai", "--model", "lan-model")
    tiny = tls_tiny_factory("--require-token", TOKEN, "--model", "rented-model")
    node = node_factory("alpha").start()
    node.cli("engines", "add", "eng", "--url", engine.url, "--api", "openai")
    node.cli(*attach_args(tiny), "--price-per-hour", "1.0", stdin=TOKEN)
    return node


def test_keys_on_loopback_limit_and_name_the_caller(lab: NodeProc) -> None:
    base = lab.url + "/v1"
    phone = make_key(lab, "phone", "--models", "lan-*")
    bot = make_key(lab, "bot", "--off-lan", "deny")
    ci = make_key(lab, "ci", "--requests-per-min", "2")
    listed = {k["name"]: k for k in lab.cli_json("keys", "list")}
    assert listed["ci"]["requests_per_min"] == 2 and listed["bot"]["off_lan"] == "deny"
    assert listed["phone"]["models"] == ["lan-*"] and all("digest" not in k and "key" not in k for k in listed.values())

    # A placeholder API key (not pw-...) is no key: local apps keep working, unauthenticated.
    plain = chat(base, "placeholder", "lan-model")
    who = job_of(lab, plain.headers["x-pairwise-job"])["requester"]
    assert who["key"] is None and who["authenticated"] is False and who["app"].startswith("OpenAI/Python")

    # A key names the caller on its job.
    served = chat(base, phone, "lan-model")
    who = job_of(lab, served.headers["x-pairwise-job"])["requester"]
    assert who == {**who, "key": "phone", "authenticated": True, "node_name": "alpha"}
    assert "alpha · key phone" in lab.cli("jobs").stdout

    # A key lists only the models it may use; without a key, every model.
    def listed(key: str) -> list[str]:
        return [m["id"] for m in httpx.get(f"{base}/models", headers={"Authorization": f"Bearer {key}"}).json()["data"]]

    assert listed(phone) == ["lan-model"] and sorted(listed("placeholder")) == ["lan-model", "rented-model"]

    # The key's model pattern and off-LAN deny refuse by name.
    denied = refusal(base, phone, "rented-model")
    assert denied.status_code == 403 and "key 'phone' may use only models matching lan-*" in denied.message
    offlan = refusal(base, bot, "rented-model")
    assert offlan.status_code == 403 and "key 'bot' has off-LAN: deny" in offlan.message and "gpu" in offlan.message
    assert chat(base, bot, "lan-model").http_response.status_code == 200, "LAN models stay open to it"

    # A rate over its limit: 429 with Retry-After, the job recorded refused with the reason.
    for _ in range(2):
        chat(base, ci, "rented-model")
    over = refusal(base, ci, "rented-model")
    assert over.status_code == 429 and "key ci is over its 2 requests/min on rented nodes" in over.message
    assert 1 <= int(over.response.headers["retry-after"]) <= 60
    refused = job_of(lab, over.response.headers["x-pairwise-job"])
    assert refused["state"] == "refused" and "2 requests/min" in refused["error"]
    assert chat(base, ci, "lan-model").http_response.status_code == 200, "local capacity is never limited"

    # A wrong key and a revoked one: 401 at once.
    wrong = refusal(base, "pw-" + "A" * 32, "lan-model")
    assert wrong.status_code == 401 and "unknown key" in wrong.message
    lab.cli("keys", "revoke", "phone")
    revoked = refusal(base, phone, "lan-model")
    assert revoked.status_code == 401 and "key 'phone' was revoked" in revoked.message
    assert {k["name"]: k["state"] for k in lab.cli_json("keys", "list")}["phone"] == "revoked"

    # Keys are never stored in clear: not in the home, not in its logs.
    for key in (phone, bot, ci):
        assert files_containing(lab.home, key.encode()) == []
        assert files_containing(lab.home, key[3:].encode()) == []


def test_the_lan_door_is_https_with_the_node_certificate_and_needs_a_key(lab: NodeProc, tmp_path: Path) -> None:
    assert not lab.cli_json("lan", "status")["on"], "off by default"
    key = make_key(lab, "laptop")
    lab.cli("lan", "on", "127.0.0.2:0")
    status = lab.cli_json("lan", "status")
    assert status["on"] and status["address"].startswith("127.0.0.2:") and status["keys"] == 1
    assert status["url"].startswith("https://")
    cert = lab.cli("lan", "cert")
    assert status["fingerprint"] in cert.stderr and cert.stdout.startswith("-----BEGIN CERTIFICATE-----")
    pinned = tmp_path / "alpha.pem"
    pinned.write_text(cert.stdout)
    context = ssl.create_default_context(cafile=str(pinned))  # hostname checking stays on
    base = status["url"] + "/v1"

    # The openai and ollama clients, pinned to the node certificate, with the key.
    served = chat(base, key, "lan-model", http_client=httpx.Client(verify=context))
    assert served.http_response.status_code == 200 and served.parse().choices[0].message.content
    who = job_of(lab, served.headers["x-pairwise-job"])["requester"]
    assert who["key"] == "laptop" and who["authenticated"] is True
    client = ollama.Client(host=status["url"], verify=context, headers={"Authorization": f"Bearer {key}"})
    assert client.chat(model="lan-model", messages=HELLO).message.content
    assert "lan-model" in [m.model for m in client.list().models]

    # Without the pin, the door's certificate is not trusted (no fallback to anything weaker).
    with pytest.raises(openai.APIConnectionError):
        chat(base, key, "lan-model")

    # No key, a placeholder, a wrong key: 401; the control API is not on this door at all.
    raw = httpx.Client(verify=context, timeout=10)
    url = status["url"]
    assert raw.get(f"{url}/api/tags").status_code == 401
    assert "needs a key" in raw.get(f"{url}/api/tags").json()["error"]
    assert refusal(base, "placeholder", "lan-model", http_client=httpx.Client(verify=context)).status_code == 401
    assert raw.get(f"{url}/_pairwise/v1/status", headers={"Authorization": f"Bearer {key}"}).status_code == 404

    # Repeated wrong keys from one address are throttled: after 10 failures in a minute (3 above), 429 with
    # Retry-After, even for a right key then.
    statuses = [raw.get(f"{url}/v1/models", headers={"Authorization": f"Bearer pw-wrong{i:028d}"}).status_code
                for i in range(9)]
    assert statuses == [401] * 7 + [429, 429]
    throttled = raw.get(f"{url}/v1/models", headers={"Authorization": f"Bearer {key}"})
    assert throttled.status_code == 429 and int(throttled.headers["retry-after"]) >= 1
    assert "too many wrong keys" in throttled.json()["error"]["message"]
    # The loopback front door is a different door: not throttled.
    assert httpx.get(f"{lab.url}/v1/models", headers={"Authorization": f"Bearer {key}"}).status_code == 200

    lab.cli("lan", "off")
    assert not lab.cli_json("lan", "status")["on"]
    with pytest.raises(httpx.ConnectError):
        raw.get(f"{url}/api/tags")
    assert files_containing(lab.home, key.encode()) == []


def test_a_busy_lan_address_keeps_the_node_serving_and_says_why(node_factory: Any) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.2", 0))
        taken.listen()
        port = taken.getsockname()[1]
        node = node_factory("busy", "--lan-listen", f"127.0.0.2:{port}").start()
        status = node.cli_json("lan", "status")
        assert status["on"] is False and "could not listen on 127.0.0.2:" in status["error"]
        assert httpx.get(f"{node.url}/api/version", timeout=10).status_code == 200
        assert "could not listen" in node.cli("lan", "status").stdout
