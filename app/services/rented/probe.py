"""Probing a rented endpoint: its model list, whether it takes our credential, whether it
answers without one. Never an inference call (that would wake a scaled-to-zero endpoint
and start billing): a provider whose proxy answers ``/health`` without waking anything
(``WireTraits.health_first``) is asked that first, and ``/v1/models`` only once its state word says it
runs. When the model list says no context length (TGI does not; vLLM does), a running server of a
provider that may run TGI (``asks_info``) is also asked ``/info`` once, where TGI says it:
``/api/show`` reports it and the Ollama → OpenAI translation checks ``num_ctx`` against it.
What differs by provider is read from its ``WireTraits`` (rented/provider_state.py), never from its name.
"""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from app.services.backends.base import ModelEntry
from app.services.backends.engine import parse_model_list
from app.services.backends.http_open import error_text
from app.services.rented.per_token import RouterPrices, router_prices
from app.services.rented.provider_state import State, WireTraits
from app.services.secrets import redact
from app.services.translate.candidates import context_length_of

PROBE_TIMEOUT_S = 10.0
INFO_TIMEOUT_S = 3.0  # only a nicety: a slow /info must not hold the probe up
# TGI's /info keys for the context window, best first (max_input_length: TGI before 2.0).
INFO_CONTEXT_KEYS = ("max_total_tokens", "max_input_tokens", "max_input_length")
PUBLIC_WARNING = "answers without any credential: anyone with its URL can use it"


@dataclass
class ProbeResult:
    models: list[ModelEntry] | None = None  # None: no /v1/models (or not asked)
    state: str | None = None  # eligible | cold | paused | unhealthy; None = unknown
    credential_error: str | None = None
    public: bool = False
    error: str | None = None
    tls_error: bool = False  # the certificate did not verify (a setup problem, not an outage)
    message: str | None = None  # the upstream's own words for a non-ready state
    simulated: bool = False  # answered by Pairwise's simulated provider (it labels every answer)
    token_prices: RouterPrices | None = None  # the per-token prices its model list gives (per_token.py)


SIMULATED_HEADER = "x-simulated"


def _state_of_503(message: str) -> str:
    text = message.lower()
    if "paused" in text:
        return "paused"
    if "failed" in text:
        return "unhealthy"
    return "cold"


async def probe_endpoint(client: httpx.AsyncClient, base: str, traits: WireTraits, token: str | None,
                         state_word: str | None, label: str) -> ProbeResult:
    result = ProbeResult()
    auth = {"authorization": f"Bearer {token}"} if token else {}
    path = "/v1/models"
    try:
        if traits.health_first:
            if state_word is not None and traits.states.get(state_word) is not State.RUNNING:
                return result  # its provider knows its state; asking would not tell us more
            path = "/health"
            health = await client.get(base + path, headers=auth, timeout=PROBE_TIMEOUT_S)
            result.simulated = SIMULATED_HEADER in health.headers
            if health.status_code in (401, 403):
                result.credential_error = _refusal(label, health)
                return result
            if health.status_code == 503:
                result.message = redact(error_text(health.content))
                result.state = _state_of_503(result.message)
                return result
            if health.status_code >= 400:
                result.error = _refusal(label, health)
                return result
            path = "/v1/models"
        response = await client.get(base + "/v1/models", headers=auth, timeout=PROBE_TIMEOUT_S)
        result.simulated = result.simulated or SIMULATED_HEADER in response.headers
        if response.status_code in (401, 403):
            result.credential_error = _refusal(label, response)
            return result
        if response.status_code == 200:
            try:
                listing = response.json()
                result.models = parse_model_list("openai", listing)
                if traits.lists_token_prices:
                    result.token_prices = router_prices(listing)
            except (ValueError, AttributeError):
                result.models = None
            result.state = "eligible"
            if result.models and traits.asks_info:
                await add_context_from_info(client, base, auth, result.models)
        elif response.status_code in (404, 405):
            result.state = "eligible"  # no model list: the declaration's models apply
        elif response.status_code == 503:
            result.message = redact(error_text(response.content))
            result.state = _state_of_503(result.message)
            return result
        else:
            result.error = _refusal(label, response)
            return result
        # Answered with our credential (or with none): does it also answer a stranger?
        if not token:
            result.public = True
        else:
            anonymous = await client.get(base + path, timeout=PROBE_TIMEOUT_S)
            result.public = anonymous.status_code == 200
    except httpx.HTTPError as exc:
        result.error = redact(f"{label} could not be reached: {type(exc).__name__}: {exc}")
        result.tls_error = "CERTIFICATE_VERIFY_FAILED" in str(exc) or "certificate verify failed" in str(exc)
    return result


async def add_context_from_info(client: httpx.AsyncClient, base: str, auth: dict[str, str],
                                models: list[ModelEntry]) -> None:
    """TGI's ``GET /info`` context window into the details of the model it names (or the only one),
    when the model list said none. Any failure leaves the models as they were: the list is what matters."""
    if any(context_length_of(m.details) is not None for m in models):
        return
    try:
        response = await client.get(base + "/info", headers=auth, timeout=INFO_TIMEOUT_S)
        info = response.json() if response.status_code == 200 else None
    except (httpx.HTTPError, ValueError):
        return
    if not isinstance(info, dict):
        return
    context = next((info[k] for k in INFO_CONTEXT_KEYS
                    if isinstance(info.get(k), int) and not isinstance(info[k], bool) and info[k] > 0), None)
    if context is None:
        return
    named = [m for m in models if m.name == info.get("model_id")]
    for entry in named or (models if len(models) == 1 else []):
        entry.details["context_length"] = context


def _refusal(label: str, response: httpx.Response) -> str:
    return redact(f"{label} answered {response.status_code}: {error_text(response.content)}")
