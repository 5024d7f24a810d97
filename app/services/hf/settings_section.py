"""Hugging Face's section of settings.json: the API bases a node talks to (the simulator's in tests and
the demo), kept under the file's ``"hf"`` key and registered with ``app.settings`` when this module is
imported (the provider's plugin imports it before a node reads its settings). Each base is overridden
for the running node only by its ``PAIRWISE_HF_*_URL`` variable (never saved)."""

from __future__ import annotations

import unicodedata
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, field_validator

from app.settings import register_section

KEY = "hf"


class HuggingFaceUrls(BaseModel):
    # Unknown keys are ignored so an older node can read a newer file.
    model_config = ConfigDict(extra="ignore")

    endpoints: str = "https://api.endpoints.huggingface.cloud/v2"
    hub: str = "https://huggingface.co"
    catalog: str = "https://endpoints.huggingface.co/api/catalog"
    router: str = "https://router.huggingface.co/v1"

    @field_validator("endpoints", "hub", "catalog", "router")
    @classmethod
    def _base_url(cls, value: str) -> str:
        # Refused when read, by the field's name, rather than as a failed request much later.
        if any(c.isspace() or unicodedata.category(c) in ("Cc", "Cf") for c in value):
            raise ValueError("a Hugging Face API base must not contain whitespace or control characters")
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("a Hugging Face API base must be an http:// or https:// URL with a host")
        return value


# field -> the variable that overrides it for the running node (app/environment.py)
URL_VARIABLES = {
    "endpoints": "PAIRWISE_HF_ENDPOINTS_URL",
    "hub": "PAIRWISE_HF_HUB_URL",
    "catalog": "PAIRWISE_HF_CATALOG_URL",
    "router": "PAIRWISE_HF_ROUTER_URL",
}

HF_URLS = register_section(KEY, HuggingFaceUrls, URL_VARIABLES)
