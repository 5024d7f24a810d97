"""The LAN door's pinned CA vouches for this machine only (issue 26, item 8).

Clients pin the CA that `pairwise lan cert` prints. It carries critical name constraints: a real
client pinned to it reaches the door with a key, and a certificate for any other name signed with
the very same CA key (as whoever stole the home would make) is refused by OpenSSL's verifier, so a
client that added the pin to a general trust store trusts this node for nothing else."""

from __future__ import annotations

import socket
import ssl
import threading
from pathlib import Path

import httpx
import openai
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from app.harness import NodeProc, TinyProc
from app.services.keys.door_ca import CA_KEY_FILE, DoorCa


def serve_once(cert_pem: bytes, key_pem: bytes, directory: Path) -> int:
    """A TLS server on 127.0.0.1 presenting this certificate to one client; returns its port."""
    (directory / "leaf.pem").write_bytes(cert_pem)
    (directory / "leaf.key").write_bytes(key_pem)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(directory / "leaf.pem", directory / "leaf.key")
    listener = socket.create_server(("127.0.0.1", 0))

    def accept() -> None:
        conn, _ = listener.accept()
        try:
            with context.wrap_socket(conn, server_side=True):
                pass
        except (ssl.SSLError, OSError):
            pass
        listener.close()

    threading.Thread(target=accept, daemon=True).start()
    return int(listener.getsockname()[1])


def test_the_pinned_lan_ca_is_name_constrained(node_factory: type[NodeProc], tiny_factory: type[TinyProc],
                                               tmp_path: Path) -> None:
    tiny = tiny_factory("--api", "openai", "--model", "m")
    node = node_factory("alpha").start()
    node.add_engine("local", tiny.url)
    key = node.cli("keys", "create", "laptop").stdout.strip()
    node.cli("lan", "on", "127.0.0.2:0")
    status = node.cli_json("lan", "status")
    printed = node.cli("lan", "cert")
    assert status["fingerprint"] in printed.stderr
    pinned = tmp_path / "door-ca.pem"
    pinned.write_text(printed.stdout)
    ca = x509.load_pem_x509_certificate(printed.stdout.encode())
    constraints = ca.extensions.get_extension_for_class(x509.NameConstraints)
    assert constraints.critical and ca.extensions.get_extension_for_class(x509.BasicConstraints).value.path_length == 0

    context = ssl.create_default_context(cafile=str(pinned))
    client = openai.OpenAI(base_url=status["url"] + "/v1", api_key=key, max_retries=0,
                           http_client=httpx.Client(verify=context))
    assert client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}]).choices

    # The same CA key signs a certificate for another site: the pin does not make it trusted.
    key_pem = (node.home / "identity" / CA_KEY_FILE).read_bytes()
    ca_key = serialization.load_pem_private_key(key_pem, password=None)
    forged = DoorCa(ca, ca_key).issue(["bank.example"], ["8.8.8.8"])  # type: ignore[arg-type]
    port = serve_once(*forged, tmp_path)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        with pytest.raises(ssl.SSLCertVerificationError, match="(?i)name constraint|permitted|subtree"):
            context.wrap_socket(raw, server_hostname="bank.example")

    # The pin survives a restart (clients pin once).
    node.stop()
    node.start()
    assert node.cli("lan", "cert").stdout == printed.stdout
