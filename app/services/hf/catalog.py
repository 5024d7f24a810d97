"""The Inference Endpoints catalog: models with tested hardware and engine recipes (hf-api.md §1.9, §6).

The v1 catalog (`…/api/v1/catalog/list`) carries recipes; the legacy one (`…/api/catalog/repo-list`)
only names models. The client asks v1 first and falls back to legacy, so either works; recipe fields
are read tolerantly because their schema is not documented."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Recipe:
    id: str
    accelerator: str | None
    engine: str | None
    gguf_file: str | None = None


@dataclass
class CatalogModel:
    repo_id: str
    task: str | None = None
    license: str | None = None
    recipes: list[Recipe] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def v1_catalog_url(catalog_url: str) -> str:
    """`https://endpoints.huggingface.co/api/catalog` → `https://endpoints.huggingface.co/api/v1/catalog`."""
    base = catalog_url.rstrip("/")
    if base.endswith("/catalog"):
        return base[: -len("/catalog")] + "/v1/catalog"
    return base + "/v1"


def parse_v1(data: Any) -> list[CatalogModel] | None:
    """None when the answer does not look like a v1 list (so the caller falls back to legacy)."""
    items = data.get("items") if isinstance(data, dict) else data
    if not isinstance(items, list):
        return None
    models = []
    for item in items:
        if not isinstance(item, dict):
            continue
        repo = item.get("repoId") or item.get("repo_id") or item.get("id")
        if not isinstance(repo, str):
            continue
        recipes = []
        for recipe in item.get("recipes") or []:
            if isinstance(recipe, dict):
                recipes.append(Recipe(id=str(recipe.get("publicId") or recipe.get("id") or ""),
                                      accelerator=recipe.get("accelerator"),
                                      engine=recipe.get("engineType") or recipe.get("engine"),
                                      gguf_file=recipe.get("ggufFile")))
        models.append(CatalogModel(repo, item.get("task"), item.get("license"), recipes))
    return models


def parse_legacy(data: Any) -> list[CatalogModel]:
    names = data.get("models") if isinstance(data, dict) else None
    return [CatalogModel(n) for n in names or [] if isinstance(n, str)]


def matching(models: list[CatalogModel], search: str | None) -> list[CatalogModel]:
    if not search:
        return models
    needle = search.lower()
    return [m for m in models if needle in m.repo_id.lower()]
