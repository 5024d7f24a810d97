"""Credentials generated in every shape the redaction promises to catch (issue 26, item 5)."""

from __future__ import annotations

import base64
import random
import string

NAMES = ("key", "api_key", "apiKey", "api-key", "x-api-key", "X-Api-Key", "access_token", "token", "password",
         "passwd", "client_secret", "secret", "auth", "sig", "session_id", "hf_token", "x-goog-api-key")
ALPHABETS = (string.ascii_letters, string.ascii_lowercase, string.ascii_uppercase,
             string.ascii_letters + string.digits + "-_.~", string.ascii_letters + "+/", string.ascii_letters + ":")


def value(rng: random.Random) -> str:
    alphabet = rng.choice(ALPHABETS)
    text = "".join(rng.choice(alphabet) for _ in range(rng.randint(12, 40)))
    return rng.choice(string.ascii_letters) + text  # never a number: a number is not a credential


def generated(seed: int = 26, count: int = 240) -> list[tuple[str, str]]:
    """``count`` pieces of text, each with the secret it carries."""
    rng = random.Random(seed)
    out: list[tuple[str, str]] = []
    for _ in range(count):
        name, secret = rng.choice(NAMES), value(rng)
        basic = base64.b64encode(f"{value(rng)}:{secret}".encode()).decode()
        shapes = [
            (f"{name}={secret}", secret), (f"{name}: {secret}", secret), (f'"{name}": "{secret}"', secret),
            (f"{name}='{secret}'", secret), (f"{name}:{secret}", secret),
            (f"https://api.example.com/v1/models?model=m&{name}={secret}&x=1", secret),
            (f"Authorization: Basic {basic}", basic), (f"authorization: bearer {secret}", secret),
            (f"Proxy-Authorization: {secret}", secret),
            # In a URL's user info a '/' would end the authority: such a password is percent-encoded.
            (f"https://{value(rng).replace('/', '%2F')}:{secret.replace('/', '%2F')}@10.1.2.3:8443/v1",
             secret.replace("/", "%2F")),
        ]
        text, carried = rng.choice(shapes)
        out.append((f"upstream said: {text} (request refused)", carried))
    return out
