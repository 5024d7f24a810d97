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
