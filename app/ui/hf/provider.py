"""Hugging Face's row of the tray's provider table (``app/ui/providers.py``): its names and words,
the endpoint's page on its site (Quit's "Open on Hugging Face"), what ends billing when Pairwise
cannot pause (scale to zero), its pages of Add rented GPU, its Attach choices (an endpoint named
NAMESPACE/NAME is managed), its account box in Settings and the renderings of its sign-in events."""


from __future__ import annotations

from typing import Any

from app.services.hf.events import HfSignedIn, HfSignedOut
from app.ui import providers
from app.ui.facade import NodeFacade
from app.ui.hf.account import HfAccountBox
from app.ui.hf.facade import HfFacade
from app.ui.hf.wizard.pages import HfRentPages
from app.ui.notify import REFRESH_NODES

KEY = "huggingface"
ENDPOINT, ROUTER, JOB = "huggingface-endpoint", "huggingface-router", "huggingface-job"
ENDPOINT_PAGE = "https://endpoints.huggingface.co/{endpoint}"
BACKSTOP = ("until you pause it on Hugging Face, or until Hugging Face scales it to zero after it has had "
            "no requests for its scale-to-zero time (15 minutes for endpoints Pairwise created)")


def _by_name(where: str, managed: bool, decl: dict[str, Any]) -> bool:
    """NAMESPACE/NAME instead of a URL: URL, GPU and price come from Hugging Face, which can pause it."""
    if where.startswith(("http://", "https://")):
        return False
    decl["endpoint"] = where
    decl["lifecycle"] = {"managed": managed}
    return True


def _console(endpoint: str) -> str:
    return ENDPOINT_PAGE.format(endpoint=endpoint)


def _available(facade: NodeFacade) -> bool:
    return HfFacade(facade.api).available()


HUGGING_FACE = providers.TrayProvider(
    key=KEY, name="Hugging Face", ids=frozenset({ENDPOINT, ROUTER, JOB}), backstop=BACKSTOP,
    console_url=_console,
    rent=providers.RentOffer(
        label="Rent a GPU on Hugging Face (creates an Inference Endpoint for you)",
        simulated_label="Rent a GPU on the simulated Hugging Face (nothing is billed)",
        pages=HfRentPages, available=_available, sign_in_title="Sign in to Hugging Face"),
    attach=(
        providers.AttachChoice(ENDPOINT, "Hugging Face Inference Endpoint", declare=_by_name,
                               placeholder="https://xyz.us-east-1.aws.endpoints.huggingface.cloud  (or namespace/name)",
                               manages="Hugging Face endpoints"),
        providers.AttachChoice(ROUTER, "Hugging Face router (Inference Providers)"),
        providers.AttachChoice(JOB, "Hugging Face Job serving an OpenAI API"),
    ),
    account_box=HfAccountBox,
    renderings={HfSignedIn: REFRESH_NODES, HfSignedOut: REFRESH_NODES},
)


def register() -> None:
    providers.register(HUGGING_FACE)
