"""A request field that cannot cross to the serving engine's API: refused by name, never dropped."""

from __future__ import annotations

from app.services.errors import PairwiseError
from app.services.translate.shapes import Api

API_NAMES: dict[Api, str] = {"ollama": "Ollama", "openai": "OpenAI"}


class Untranslatable(PairwiseError):
    title = "Field cannot cross"
    status = 400

    def __init__(self, field: str, target: Api, why: str) -> None:
        super().__init__(f"'{field}' cannot be sent to an {API_NAMES[target]}-API engine: {why}")
        self.field, self.target, self.why = field, target, why


class Unsupported(PairwiseError):
    """A field of a dialect Pairwise answers through Chat Completions (Responses, Anthropic Messages)
    that would change the answer and cannot be honoured: refused by name, never dropped."""

    title = "Field not supported"
    status = 400

    def __init__(self, field: str, dialect: str, why: str) -> None:
        super().__init__(f"'{field}' of {dialect} cannot be served here: {why}")
        self.field, self.why = field, why
