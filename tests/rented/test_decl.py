"""Declarations: the request's YAML shape, defaults, fractions, URL rules (each refusal names its rule)."""

from __future__ import annotations

from typing import Any, cast

import pytest
import yaml

from app.services.errors import ConfigError, RefusedError
from app.services.hf.providers import EndpointProvider, JobProvider, RouterProvider
from app.services.rented.decl import apply_changes, check_url, declarations_from, validate_decl
from app.services.rented.provider import ProviderRegistry

# What differs by provider is its DeclRules, read through the registry (as the manager passes it).
BOOK = ProviderRegistry()
for _provider in (EndpointProvider(cast("Any", None)), JobProvider(cast("Any", None)), RouterProvider()):
    BOOK.register(_provider)

REQUEST_YAML = """
rented_node:
  name: hf-l40s
  provider: huggingface-endpoint
  endpoint: demo-user/my-endpoint
  credential: os-credential-store:pair/hf
  share_with_cluster: false
  routing:
    use: when-no-local-node
  timeouts:
    cold_start_s: 600
  lifecycle:
    managed: true
    wake_on_request: true
    idle_pause_min: 15
    pause_on_sponsor_exit: true
  budget:
    usd_per_day: 10
"""


def test_the_requests_example_parses() -> None:
    [data] = declarations_from(yaml.safe_load(REQUEST_YAML))
    decl = validate_decl(data, BOOK)
    assert decl.name == "hf-l40s" and decl.endpoint == "demo-user/my-endpoint" and decl.url is None
    assert decl.policy == "when-no-local-node" and decl.cold_start_s == 600
    assert decl.lifecycle.managed and decl.lifecycle.wake_on_request and decl.lifecycle.idle_pause_min == 15
    assert decl.budget.usd_per_day == 10 and decl.share_with_cluster is False


@pytest.mark.parametrize(("provider", "cold_start"), [
    ("huggingface-endpoint", 600), ("huggingface-job", 120), ("huggingface-router", 120), ("openai-compatible", 120)])
def test_cold_start_defaults_by_provider(provider: str, cold_start: float) -> None:
    decl = validate_decl({"name": "n", "provider": provider, "url": "https://example.com"}, BOOK)
    assert decl.cold_start_s == cold_start
    assert decl.share_with_cluster is False and decl.policy == "when-no-local-node"
    assert decl.lifecycle.pause_on_sponsor_exit is True


def test_fractions_everywhere() -> None:
    decl = validate_decl({"name": "n", "url": "https://example.com", "price_per_hour": 0.8,
                          "timeouts": {"cold_start_s": 2.5}, "lifecycle": {"idle_pause_min": 0.5},
                          "budget": {"usd_per_day": 0.1, "usd_per_month": 2.25}})
    assert (decl.cold_start_s, decl.lifecycle.idle_pause_min, decl.budget.usd_per_day) == (2.5, 0.5, 0.1)


@pytest.mark.parametrize(("url", "rule"), [
    ("http://10.0.0.5:8000", "http:// only for loopback hosts"),
    ("http://gpu.example.com/v1", "http:// only for loopback hosts"),
    ("ftp://example.com", "https only"),
    ("https://user:secret@example.com", "no credential in a URL"),
    ("https://example.com/v1?key=1", "a base URL has no query or fragment"),
    ("https://", "a URL has a host"),
])
def test_url_refusals_name_their_rule(url: str, rule: str) -> None:
    with pytest.raises(RefusedError) as caught:
        validate_decl({"name": "n", "url": url})
    assert f"rule '{rule}'" in caught.value.message
    assert "secret" not in caught.value.message


@pytest.mark.parametrize(("url", "base"), [
    ("http://127.0.0.1:8000/v1/", "http://127.0.0.1:8000"),
    ("http://localhost:9", "http://localhost:9"),
    ("http://[::1]:9/v1", "http://[::1]:9"),
    ("https://router.huggingface.co/v1", "https://router.huggingface.co"),
    ("https://abc.us-east-1.aws.endpoints.huggingface.cloud", "https://abc.us-east-1.aws.endpoints.huggingface.cloud"),
])
def test_urls_accepted_and_normalised(url: str, base: str) -> None:
    assert check_url(url) == base


def test_a_declaration_never_holds_a_token() -> None:
    with pytest.raises(ConfigError) as caught:
        validate_decl({"name": "n", "url": "https://example.com", "credential": "sk-live-abcdef"})
    assert "sk-live-abcdef" not in caught.value.message and "--token-stdin" in caught.value.message


def test_bad_fields_are_named() -> None:
    with pytest.raises(ConfigError, match="routing.use"):
        validate_decl({"name": "n", "url": "https://e.com", "routing": {"use": "sometimes"}})
    with pytest.raises(ConfigError, match="name"):
        validate_decl({"name": "a/b", "url": "https://e.com"})
    with pytest.raises(ConfigError, match="give a url"):
        validate_decl({"name": "n"})
    with pytest.raises(ConfigError, match="only for provider huggingface-endpoint"):
        validate_decl({"name": "n", "endpoint": "ns/x"}, BOOK)


def test_document_shapes() -> None:
    one = {"name": "a", "url": "https://e.com"}
    assert declarations_from(one) == [one]
    assert declarations_from([one, one]) == [one, one]
    assert declarations_from({"rented_nodes": [one]}) == [one]
    with pytest.raises(ConfigError):
        declarations_from("text")


def test_apply_changes_nested() -> None:
    decl = validate_decl({"name": "a", "url": "https://e.com"})
    changed = apply_changes(decl, {"routing": {"use": "prefer"}, "lifecycle": {"wake_on_request": True},
                                   "budget": {"usd_per_day": 1.5}, "share_with_cluster": True})
    assert changed.policy == "prefer" and changed.lifecycle.wake_on_request and changed.budget.usd_per_day == 1.5
    assert changed.lifecycle.pause_on_sponsor_exit is True and changed.share_with_cluster
    with pytest.raises(RefusedError):
        apply_changes(decl, {"url": "http://192.168.1.2"})


def test_an_older_spelling_or_a_misspelt_cap_in_a_declaration_is_refused_by_name() -> None:
    for data, named in (({"usd_per_day": 5}, 'usd_per_day: spelt {"budget": {"usd_per_day": ...}} now'),
                        ({"use": "prefer"}, 'use: spelt {"routing": {"use": ...}} now'),
                        ({"budget.usd_per_day": 5}, 'budget.usd_per_day: spelt {"budget": {"usd_per_day": ...}}'),
                        ({"budget": {"usd_per_dya": 5}}, "budget.usd_per_dya: Extra inputs are not permitted")):
        with pytest.raises(ConfigError) as refused:
            validate_decl({"name": "a", "url": "https://e.com", **data})
        assert named in refused.value.message
