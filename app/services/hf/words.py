"""Hugging Face's three providers as a person reads them: the glossary's words for them
(``api/glossary.py``: ``name_provider``), named when Hugging Face's part of the service API is
registered (``routes.register_hf_api``) and, in the CLI, by its commands (``app/cli_hf``)."""

from __future__ import annotations

COMPANY = "Hugging Face"
# The declaration's provider -> what it is.
LABELS = {
    "huggingface-endpoint": "Hugging Face Inference Endpoint",
    "huggingface-job": "Hugging Face Job",
    "huggingface-router": "Hugging Face Inference Providers",
}
