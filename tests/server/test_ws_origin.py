"""The WebSocket Origin check compares scheme, host and port (issue 17, item 12)."""

from __future__ import annotations

import pytest
from channels.testing import WebsocketCommunicator

from controlui.asgi import application
from server.ws_origin import origin_allowed

HOSTS = ["127.0.0.1", "localhost", "control.example"]


@pytest.mark.parametrize(
    ("origin", "host", "secure", "trusted", "allowed"),
    [
        ("http://127.0.0.1:8000", "127.0.0.1:8000", False, [], True),
        ("http://127.0.0.1:9999", "127.0.0.1:8000", False, [], False),
        ("http://127.0.0.1", "127.0.0.1:8000", False, [], False),
        ("http://control.example", "control.example", False, [], True),
        ("http://control.example:80", "control.example", False, [], True),
        ("https://control.example", "control.example", True, [], True),
        ("http://control.example", "control.example", True, [], False),
        ("https://control.example", "control.example:443", True, [], True),
        ("http://evil.example:8000", "evil.example:8000", False, [], False),
        ("http://127.0.0.1:8000", None, False, [], False),
        (None, "127.0.0.1:8000", False, [], False),
        ("null", "127.0.0.1:8000", False, [], False),
        ("http://127.0.0.1:8000/path", "127.0.0.1:8000", False, [], False),
        ("http://127.0.0.1:99999", "127.0.0.1:99999", False, [], False),
        ("https://ui.example", "10.0.0.5:8000", False, ["https://ui.example"], True),
        ("https://ui.example:8443", "10.0.0.5:8000", False, ["https://ui.example"], False),
    ],
    ids=[
        "same-origin",
        "other-port",
        "origin-without-port",
        "default-port",
        "explicit-default-port",
        "https",
        "scheme-mismatch",
        "https-explicit-443",
        "host-not-allowed",
        "no-host-header",
        "no-origin",
        "null-origin",
        "origin-with-path",
        "bad-port",
        "trusted-origin-behind-proxy",
        "trusted-origin-other-port",
    ],
)
def test_origin_allowed(origin, host, secure, trusted, allowed) -> None:
    assert (
        origin_allowed(
            origin, host=host, secure=secure, allowed_hosts=HOSTS, trusted_origins=trusted
        )
        is allowed
    )


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("origin", "accepted"),
    [(b"http://127.0.0.1:8000", True), (b"http://127.0.0.1:8001", False)],
    ids=["same-port", "other-port"],
)
async def test_socket_from_another_port_of_the_same_host_is_denied(
    in_memory_layer, origin, accepted
) -> None:
    communicator = WebsocketCommunicator(
        application, "/ws/ping/", headers=[(b"origin", origin), (b"host", b"127.0.0.1:8000")]
    )
    connected, _ = await communicator.connect()
    assert connected is accepted
    await communicator.disconnect()
