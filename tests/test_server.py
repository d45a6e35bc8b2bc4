"""The real server: a page served under a foreign name (DNS rebinding) cannot drive it."""

from __future__ import annotations

import base64
import os
import socket
from collections.abc import Iterator
from urllib.parse import urlparse

import pytest

from tests.appserver import running_app


@pytest.fixture(scope="module")
def port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    with running_app(tmp_path_factory.mktemp("server") / "app.log") as url:
        yield urlparse(url).port or 0


def upgrade_status(port: int, host: str) -> str:
    """The status line the server answers a WebSocket upgrade with, sent as the browser
    on a page named `host` sends it (the Origin is that page's)."""
    key = base64.b64encode(os.urandom(16)).decode()
    request = (
        f"GET /_stcore/stream HTTP/1.1\r\nHost: {host}\r\nOrigin: http://{host}\r\n"
        f"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
        "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: streamlit\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall(request.encode())
        reply = connection.recv(4096).decode("latin-1")
    return reply.split("\r\n", 1)[0]


@pytest.mark.parametrize("name", ["127.0.0.1", "localhost"])
def test_the_app_accepts_its_own_names(port: int, name: str) -> None:
    assert upgrade_status(port, f"{name}:{port}") == "HTTP/1.1 101 Switching Protocols"


@pytest.mark.parametrize("name", ["evil.example", "127.0.0.1.evil.example", "localhost.evil"])
def test_a_foreign_host_cannot_open_the_app_channel(port: int, name: str) -> None:
    assert upgrade_status(port, f"{name}:{port}") == "HTTP/1.1 403 Forbidden"
