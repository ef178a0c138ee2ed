"""The wiring through a real daphne process: HTTP auth, static files, WebSocket auth."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
import websockets

pytestmark = pytest.mark.slow


def test_health_and_redirects(live) -> None:
    assert httpx.get(live.base_url + "/api/health").json() == {"status": "ok"}
    cookies = live.login_cookies()
    assert httpx.get(live.base_url + "/api/health", cookies=cookies).json()["database"]["ok"]
    response = httpx.get(live.base_url + "/", follow_redirects=False)
    assert response.status_code == 302 and response.headers["location"].startswith("/login/")
    assert httpx.get(live.base_url + "/api/me").status_code == 401


def test_static_files_are_served(live) -> None:
    response = httpx.get(live.base_url + "/static/css/app.css")
    assert response.status_code == 200
    assert "--accent" in response.text


def test_login_then_dashboard_and_docs(live) -> None:
    cookies = live.login_cookies()
    assert httpx.get(live.base_url + "/", cookies=cookies).status_code == 200
    docs = httpx.get(live.base_url + "/api/docs", cookies=cookies)
    assert docs.status_code == 200
    assert httpx.get(live.base_url + "/api/me", cookies=cookies).json()["username"] == "live-admin"


async def test_anonymous_websocket_closed_with_4401(live) -> None:
    async with websockets.connect(live.ws_url + "/ws/ping/", origin=live.base_url) as socket:
        with pytest.raises(websockets.ConnectionClosed) as closed:
            await asyncio.wait_for(socket.recv(), timeout=10)
    assert closed.value.rcvd.code == 4401


async def test_logged_in_websocket_is_answered(live) -> None:
    headers = {"Cookie": live.cookie_header()}
    async with websockets.connect(
        live.ws_url + "/ws/ping/", origin=live.base_url, additional_headers=headers
    ) as socket:
        hello = json.loads(await asyncio.wait_for(socket.recv(), timeout=10))
        assert hello == {"type": "hello", "user": "live-admin"}


async def test_same_host_other_port_origin_websocket_is_rejected(live) -> None:
    headers = {"Cookie": live.cookie_header()}
    port = int(live.base_url.rsplit(":", 1)[1])
    with pytest.raises(websockets.InvalidStatus) as refused:
        async with websockets.connect(
            live.ws_url + "/ws/ping/",
            origin=f"http://127.0.0.1:{port + 1}",
            additional_headers=headers,
        ):
            pass
    assert refused.value.response.status_code == 403


async def test_foreign_origin_websocket_is_rejected(live) -> None:
    headers = {"Cookie": live.cookie_header()}
    with pytest.raises(websockets.InvalidStatus):
        async with websockets.connect(
            live.ws_url + "/ws/ping/", origin="http://evil.example", additional_headers=headers
        ):
            pass
