"""HTTP requests written by hand on a socket: one write, small pieces, or chunked encoding.

Real clients send a large body however their socket layer splits it; these helpers make each
split happen on purpose so a server that reads only what is buffered is caught."""

from __future__ import annotations

import http.client
import json
import socket
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any, Literal
from urllib.parse import urlsplit

Mode = Literal["one_write", "pieces", "chunked"]
PIECE = 16 * 1024


def _head(url: str, path: str, extra: dict[str, str]) -> bytes:
    netloc = urlsplit(url).netloc
    lines = [f"POST {path} HTTP/1.1", f"Host: {netloc}", "Content-Type: application/json", "Connection: close"]
    lines += [f"{k}: {v}" for k, v in extra.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def socket_post(url: str, path: str, body: bytes, mode: Mode, timeout: float = 60) -> tuple[int, Any]:
    """POST ``body`` on a raw socket, split as ``mode`` says; (status, parsed JSON answer)."""
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=timeout) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if mode == "chunked":
            sock.sendall(_head(url, path, {"Transfer-Encoding": "chunked"}))
            for start in range(0, len(body), PIECE):
                piece = body[start:start + PIECE]
                sock.sendall(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            sock.sendall(b"0\r\n\r\n")
        elif mode == "pieces":
            sock.sendall(_head(url, path, {"Content-Length": str(len(body))}))
            for start in range(0, len(body), PIECE):
                sock.sendall(body[start:start + PIECE])
        else:
            sock.sendall(_head(url, path, {"Content-Length": str(len(body))}) + body)
        response = http.client.HTTPResponse(sock)
        response.begin()
        return response.status, json.loads(response.read())


def urllib_post(url: str, path: str, body: bytes, chunked: bool = False, timeout: float = 60) -> tuple[int, Any]:
    """POST with urllib: the whole body in one request, or as an iterable (chunked encoding)."""
    data: bytes | Iterator[bytes] = body
    headers = {"Content-Type": "application/json"}
    if chunked:
        data = (body[i:i + PIECE] for i in range(0, len(body), PIECE))
        headers["Transfer-Encoding"] = "chunked"
    request = urllib.request.Request(f"{url}{path}", data=data, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())
