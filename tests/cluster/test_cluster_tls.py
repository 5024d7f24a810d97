"""The cluster port of a running node: only pinned client certificates get through the handshake."""

from __future__ import annotations

import socket
import ssl
from pathlib import Path

from app.harness import NodeProc
from app.services.cluster.identity import NodeIdentity, peer_hostname
from tests.cluster.multinode import FAST, pair


def identity_of(node: NodeProc) -> NodeIdentity:
    return NodeIdentity.load_or_create(node.home / "identity", node.name)


def cluster_get(node: NodeProc, me: NodeIdentity, path: str = "/cluster/v1/inventory") -> bytes:
    """One raw HTTPS request to the node's cluster port presenting ``me``'s certificate.

    Returns what came back: an HTTP response, or b"" if the TLS layer refused us.
    """
    host, port = node.runtime["cluster"].rsplit(":", 1)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    ctx.load_cert_chain(me.cert_path, me.key_path)
    ctx.load_verify_locations(cafile=str(node.home / "identity" / "node.crt"))
    with socket.create_connection((host, int(port)), timeout=10) as raw:
        with ctx.wrap_socket(raw, server_hostname=peer_hostname(node.runtime["node_id"])) as tls:
            # TLS 1.3: the client's side of the handshake ends before the server has
            # judged the client certificate; its verdict arrives with the first read.
            try:
                tls.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
                received = b""
                while chunk := tls.recv(65536):
                    received += chunk
                return received
            except (ssl.SSLError, ConnectionError):  # the server's alert
                return b""


def test_unpinned_client_certificate_refused_at_handshake(node_factory: type[NodeProc], tmp_path: Path) -> None:
    a = node_factory("alpha", env=FAST).start()
    b = node_factory("beta", env=FAST).start()
    stranger = NodeIdentity.load_or_create(tmp_path / "stranger", "stranger")

    # Nobody paired yet: every client certificate is refused, a node's own kind included.
    assert cluster_get(a, identity_of(b)) == b""
    pair(a, b)
    # A pinned peer gets an answer; the same request with an unpinned certificate does not.
    answer = cluster_get(a, identity_of(b))
    assert answer.startswith(b"HTTP/1.1 200") and a.runtime["node_id"].encode() in answer
    assert cluster_get(a, stranger) == b""
    assert cluster_get(a, stranger, "/cluster/v1/facts") == b""


def test_cluster_port_answers_nothing_without_a_certificate(node_factory: type[NodeProc]) -> None:
    a = node_factory("alpha", env=FAST).start()
    host, port = a.runtime["cluster"].rsplit(":", 1)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(cafile=str(a.home / "identity" / "node.crt"))
    with socket.create_connection((host, int(port)), timeout=10) as raw:
        with ctx.wrap_socket(raw, server_hostname=peer_hostname(a.runtime["node_id"])) as tls:
            try:
                tls.sendall(b"GET /cluster/v1/facts HTTP/1.1\r\nHost: x\r\n\r\n")
                data = tls.recv(1024)
            except (ssl.SSLError, ConnectionError):
                data = b""
    assert data == b""
