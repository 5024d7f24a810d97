"""One exception tree: every error a module of the app defines joins PairwiseError and is listed
at the top of app/services/errors.py, or, for a provider's, at the top of its folder's errors.py."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import app
from app.services import errors
from app.services.errors import CredentialError, NotFound, PairwiseError, RefusedError
from app.services.hf.errors import HfAuthError, HfNotFound, HfPermissionError

# A provider's folder -> the module whose docstring lists its errors (errors.py names the convention only).
PROVIDER_ERRORS = {"app.services.hf": "app.services.hf.errors"}
SKIP = ("app.simulator", "app.tinymodel", "app.harness", "app.ui", "app.__main__")  # test doubles and harness, and Qt


def app_modules() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(app.__path__, "app."):
        if not info.name.startswith(SKIP):
            names.append(info.name)
    return names


def defined_errors() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for name in app_modules():
        module = importlib.import_module(name)
        for attr, value in vars(module).items():
            if (inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == name
                    and not attr.startswith("_")):
                found[f"{name}.{attr}"] = value
    return found


def test_every_error_joins_the_tree_and_is_documented() -> None:
    found = defined_errors()
    assert len(found) >= 25
    outside = [name for name, cls in found.items() if not issubclass(cls, PairwiseError)]
    assert outside == [], f"errors outside the tree: {outside}"
    undocumented = [name for name, cls in found.items() if cls.__name__ not in tree_of(name)]
    assert undocumented == [], f"add these to the tree at the top of app/services/errors.py: {undocumented}"
    assert "(a provider's errors)" in (errors.__doc__ or "")


def tree_of(qualified: str) -> str:
    """The docstring that must list an error: its provider's errors module's, or errors.py's."""
    for folder, module in PROVIDER_ERRORS.items():
        if qualified.startswith(folder + "."):
            return importlib.import_module(module).__doc__ or ""
    return errors.__doc__ or ""


def test_hugging_face_errors_join_their_branches() -> None:
    assert issubclass(HfNotFound, NotFound)
    assert issubclass(HfAuthError, CredentialError)
    assert issubclass(HfPermissionError, RefusedError)
    error = HfNotFound("endpoint demo/gpu not found", hf_status=404)
    assert (error.title, error.status, error.hf_status) == ("Not found on Hugging Face", 404, 404)


def test_the_cluster_package_lists_every_pairing_error() -> None:
    import app.services.cluster as cluster
    from app.services.cluster.pairing_protocol import PairingError

    doc = cluster.__doc__ or ""
    missing = [cls.__name__ for cls in PairingError.__subclasses__() if cls.__name__ not in doc]
    assert missing == [], f"add these to the error tree in app/services/cluster/__init__.py: {missing}"
    assert all(cls.__name__ in (errors.__doc__ or "") for cls in PairingError.__subclasses__())
