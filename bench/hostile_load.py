"""Hostile load against a real daphne: huge uploads, slow and many connections, big frames.

    .venv/bin/python bench/hostile_load.py [--smoke] [--upload-mib 400] [--postgres URL]

``--smoke`` runs every case of issue 32 at a small scale in seconds (shortened timeouts,
30 MiB uploads, 200 sockets of churn) and skips issue 17's. Prints, with the targets of
issue 32 beside them (each on a fresh daphne; "peak" = VmHWM after resetting it):

- a 200 MiB multipart upload to ``/api/enrich/upload``, anonymous (401 before the body is
  kept) and logged in (413 at the 25 MiB file cap): daphne's peak RSS above idle (≤ 64 MiB)
  and the p99 of ``/api/health`` asked every 50 ms meanwhile (≤ 150 ms);
- 200 slowloris connections (a header line every second): when they are closed (the header
  timeout, 10 s), and how many connections past the per-address cap are refused (429);
- 5,000 logged-in ``/ws/decisions/`` sockets opened and closed 200 at a time: daphne's RSS
  before, at peak and after (≤ 64 MiB above the start);
- a 40 MiB WebSocket frame (close code 1009 with a reason) and a 22 MiB base64 attachment
  over ``/ws/enrich/``: the close code and daphne's peak RSS above idle.

Then, with the targets of issue 17 beside them:

- peak RSS of daphne (VmHWM) after a streamed anonymous upload to ``/login/`` (< 300 MB),
  and how long the 413 took; the same for ``/api/files/extract`` with 100 MiB (quick 413);
- the slowest of 10 static-file requests while a PDF bomb is extracted (< 200 ms);
- with ``--postgres``: the most PostgreSQL sessions of daphne's database during 150
  concurrent health checks + 16 clients x 60 history requests (≤ the pool size).

Bodies are generated on the fly; the server runs against a temporary directory.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.enrichment.pdf_bomb import build_pdf_bomb  # noqa: E402
from tests.live import LiveServer, live_server  # noqa: E402
from tests.server.test_body_limits_live import (  # noqa: E402
    BOUNDARY,
    api_token,
    current_rss_mib,
    multipart_length,
    multipart_stream,
    peak_rss_mib,
    post_stream,
)
from tests.server.test_uploads_live import Probe, upload_length, upload_stream  # noqa: E402

MIB = 1024 * 1024


def reset_peak(pid: int) -> float:
    """Reset daphne's VmHWM to its current RSS (Linux: clear_refs 5); that RSS in MiB."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")
    return current_rss_mib(pid)


def p99_ms(latencies: list[float]) -> float:
    """The 99th percentile in ms; NaN when the probe got no answer in time (a request that
    ended before its first probe: on a fast machine in the smoke run)."""
    if not latencies:
        return float("nan")
    ordered = sorted(latencies)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000


def upload_cases(server: LiveServer, mib: int) -> None:
    size = mib * MIB
    token = api_token(server)
    for who, auth in (("anonymous", None), ("logged in", token)):
        httpx.get(server.base_url + "/api/health")
        idle = reset_peak(server.daphne_pid)
        with Probe(server) as probe:
            response, elapsed = post_stream(
                server,
                "/api/enrich/upload",
                upload_stream(size),
                length=upload_length(size),
                token=auth,
            )
        peak = peak_rss_mib(server.daphne_pid)
        print(
            f"{mib} MiB multipart /api/enrich/upload, {who}: {response.status_code} in "
            f"{elapsed:.1f} s ({response.text[:70]!r}); daphne idle {idle:.0f} MiB, "
            f"peak +{peak - idle:.0f} MiB (target <= 64); /api/health meanwhile: "
            f"{len(probe.latencies)} answers, p99 {p99_ms(probe.latencies):.0f} ms "
            f"(target <= 150), {probe.failures} failures"
        )
    # Accepted: eight files just under the cap each, parsed to disk and copied in slices.
    files = 8
    each = min(24 * MIB, size // files)

    def eight_files():
        yield (
            f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="payload"\r\n\r\n'
            '{"body": "eight files"}\r\n'
        ).encode()
        block = b"q" * MIB
        for index in range(files):
            yield (
                f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="files"; '
                f'filename="f{index}.bin"\r\nContent-Type: application/octet-stream\r\n\r\n'
            ).encode()
            for start in range(0, each, MIB):
                yield block[: min(MIB, each - start)]
            yield b"\r\n"
        yield f"--{BOUNDARY}--\r\n".encode()

    idle = reset_peak(server.daphne_pid)
    with Probe(server) as probe:
        response, elapsed = post_stream(server, "/api/enrich/upload", eight_files(), token=token)
    peak = peak_rss_mib(server.daphne_pid)
    print(
        f"{files} x {each // MIB} MiB files to /api/enrich/upload, logged in: "
        f"{response.status_code} in {elapsed:.1f} s; daphne peak +{peak - idle:.0f} MiB "
        f"(target <= 64); /api/health p99 {p99_ms(probe.latencies):.0f} ms"
    )


async def _slow_client(host: str, port: int, closed_after: list[float]) -> None:
    started = time.monotonic()
    reader, writer = await asyncio.open_connection(host, port)
    try:
        writer.write(b"GET /login/ HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        for line in range(600):
            await writer.drain()
            try:
                data = await asyncio.wait_for(reader.read(4096), timeout=1)
            except TimeoutError:
                writer.write(f"X-Slow-{line}: 1\r\n".encode())
                continue
            if not data or data.startswith(b"HTTP/1.1 408"):
                break
    except (ConnectionError, OSError):
        pass
    closed_after.append(time.monotonic() - started)
    writer.close()


async def _over_cap(host: str, port: int) -> bytes:
    try:
        reader, writer = await asyncio.open_connection(host, port)
        data = await asyncio.wait_for(reader.read(4096), timeout=5)
        writer.close()
        return data
    except (ConnectionError, OSError, TimeoutError):
        return b""


def slowloris(server: LiveServer, clients: int, extra: int) -> None:
    host, port = "127.0.0.1", int(server.base_url.rsplit(":", 1)[1])

    async def run() -> tuple[list[float], list[bytes], float]:
        closed_after: list[float] = []
        slow = [asyncio.create_task(_slow_client(host, port, closed_after)) for _ in range(clients)]
        await asyncio.sleep(0.5)
        refused = await asyncio.gather(*(_over_cap(host, port) for _ in range(extra)))
        before = time.monotonic()
        async with httpx.AsyncClient() as client:  # the server still answers meanwhile
            # (from this address too once the slow ones are gone; here: cap permitting)
            await asyncio.gather(*slow)
            answered = time.monotonic() - before
            await client.get(server.base_url + "/api/health")
        return closed_after, refused, answered

    closed_after, refused, _ = asyncio.run(run())
    ordered = sorted(closed_after)
    print(
        f"{clients} slowloris connections (a header line a second): closed after median "
        f"{ordered[len(ordered) // 2]:.1f} s, max {ordered[-1]:.1f} s (header timeout); "
        f"{sum(r.startswith(b'HTTP/1.1 429') for r in refused)} of {extra} more connections "
        "refused with 429 (the per-address cap, 256 by default, counts the slow ones too)"
    )


def churn(server: LiveServer, sockets: int, batch: int) -> None:
    import websockets

    cookie = server.cookie_header()
    url = server.ws_url + "/ws/decisions/"

    async def one() -> None:
        async with websockets.connect(
            url, origin=server.base_url, additional_headers={"Cookie": cookie}, open_timeout=60
        ):
            pass

    async def run() -> None:
        for start in range(0, sockets, batch):
            await asyncio.gather(*(one() for _ in range(min(batch, sockets - start))))

    for _ in range(3):
        httpx.get(server.base_url + "/api/health")
    start = reset_peak(server.daphne_pid)
    began = time.monotonic()
    asyncio.run(run())
    took = time.monotonic() - began
    time.sleep(3)
    end = current_rss_mib(server.daphne_pid)
    peak = peak_rss_mib(server.daphne_pid)
    print(
        f"{sockets} /ws/decisions/ sockets opened and closed {batch} at a time in {took:.1f} s: "
        f"daphne {start:.0f} MiB -> peak {peak:.0f} -> after {end:.0f} MiB "
        f"(+{end - start:.0f} MiB kept; target <= 64)"
    )


def big_frames(server: LiveServer, frame_mib: int, attachment_mib: int) -> None:
    import websockets

    cookie = server.cookie_header()

    async def frame() -> tuple[int | None, str]:
        async with websockets.connect(
            server.ws_url + "/ws/enrich/",
            origin=server.base_url,
            additional_headers={"Cookie": cookie},
            max_size=None,
        ) as ws:
            try:
                await ws.send("x" * (frame_mib * MIB))
                for _ in range(10):
                    await asyncio.wait_for(ws.recv(), timeout=60)
            except websockets.ConnectionClosed as exc:
                return (exc.rcvd.code, exc.rcvd.reason) if exc.rcvd else (None, "dropped")
        return None, "still open"

    async def attachment() -> str:
        # ``attachment_mib`` of base64 text (3/4 of that decoded), within the 25 MiB frame limit.
        data = base64.b64encode(b"\x00" * (attachment_mib * MIB // 4 * 3)).decode()
        request = {
            "type": "enrich",
            "id": "big",
            "message": {"body": "x", "attachments": [{"data": data, "mime": "audio/wav"}]},
        }
        async with websockets.connect(
            server.ws_url + "/ws/enrich/",
            origin=server.base_url,
            additional_headers={"Cookie": cookie},
            max_size=None,
        ) as ws:
            await ws.send(json.dumps(request))
            while True:
                reply = json.loads(await asyncio.wait_for(ws.recv(), timeout=120))
                if reply.get("type") == "result":
                    return "result"
                if reply.get("type") == "error":
                    return f"error {reply.get('error')!r:.100}"

    idle = reset_peak(server.daphne_pid)
    code, reason = asyncio.run(frame())
    peak = peak_rss_mib(server.daphne_pid)
    print(
        f"{frame_mib} MiB WebSocket frame: close code {code} ({reason[:90]!r}); daphne peak "
        f"+{peak - idle:.0f} MiB"
    )
    idle = reset_peak(server.daphne_pid)
    outcome = asyncio.run(attachment())
    peak = peak_rss_mib(server.daphne_pid)
    print(
        f"{attachment_mib} MiB of base64 attachment over /ws/enrich/: {outcome}; daphne peak "
        f"+{peak - idle:.0f} MiB above idle"
    )


def uploads(server: LiveServer, upload_mib: int) -> None:
    size = upload_mib * MIB
    response, elapsed = post_stream(
        server,
        "/login/",
        multipart_stream("username", "x.txt", size),
        length=multipart_length("username", "x.txt", size),
    )
    print(
        f"{upload_mib} MiB anonymous POST /login/: {response.status_code} in {elapsed:.1f} s; "
        f"daphne peak RSS {peak_rss_mib(server.daphne_pid):.0f} MiB (target < 300)"
    )
    response, elapsed = post_stream(server, "/login/", multipart_stream("username", "x", size))
    print(
        f"{upload_mib} MiB chunked POST /login/: {response.status_code} in {elapsed:.1f} s; "
        f"daphne peak RSS {peak_rss_mib(server.daphne_pid):.0f} MiB (target < 300)"
    )
    token = api_token(server)
    size = 100 * MIB
    response, elapsed = post_stream(
        server,
        "/api/files/extract",
        multipart_stream("file", "big.txt", size),
        length=multipart_length("file", "big.txt", size),
        token=token,
    )
    print(
        f"100 MiB POST /api/files/extract: {response.status_code} in {elapsed:.2f} s; "
        f"daphne peak RSS {peak_rss_mib(server.daphne_pid):.0f} MiB"
    )


def pdf_bomb(server: LiveServer) -> None:
    token = api_token(server)
    # Hex-string pages: seconds each to read even on a fast machine, so the probes below
    # run while the bomb is still being extracted.
    bomb = build_pdf_bomb(pages=4, stream_bytes=15 * MIB, slow=True)
    payload = {
        "body": "bomb",
        "attachments": [{"data": base64.b64encode(bomb).decode(), "mime": "application/pdf"}],
    }
    done: dict[str, float] = {}

    def send() -> None:
        started = time.monotonic()
        httpx.post(
            server.base_url + "/api/enrich",
            json=payload,
            headers={"Authorization": f"Bearer {token}"},
            timeout=120,
        )
        done["seconds"] = time.monotonic() - started

    thread = threading.Thread(target=send)
    thread.start()
    time.sleep(1)
    timings = []
    with httpx.Client(base_url=server.base_url) as client:
        for _ in range(10):
            before = time.monotonic()
            client.get("/static/css/app.css")
            timings.append((time.monotonic() - before) * 1000)
            time.sleep(0.2)
    thread.join()
    print(
        f"PDF bomb ({len(bomb) // 1024} KiB, 4 x 15 MiB streams) via /api/enrich: answered in "
        f"{done['seconds']:.1f} s; static file during it: max {max(timings):.0f} ms "
        f"(target < 200), median {sorted(timings)[5]:.0f} ms"
    )


def connections(workdir: Path, url: str) -> None:
    import psycopg

    from tests.common.test_db_connections import ConnectionSampler, _with_database, hammer

    name = f"controlui_bench_conns_{int(time.time())}"
    admin_url = _with_database(url, "postgres")
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
        try:
            extra = {"DATABASE_URL": _with_database(url, name), "DATABASE_POOL_MAX_SIZE": "4"}
            with live_server(workdir / "pg", extra) as server:
                token = api_token(server)
                sampler = ConnectionSampler(admin_url, name)
                started = time.monotonic()
                with sampler:
                    codes = asyncio.run(hammer(server.base_url, token))
                elapsed = time.monotonic() - started
            print(
                f"{len(codes)} requests in {elapsed:.1f} s, non-200: "
                f"{sum(code != 200 for code in codes)}; PostgreSQL sessions max "
                f"{max(sampler.samples)} (pool 4)"
            )
        finally:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--smoke", action="store_true", help="issue 32's cases, small, seconds")
    parser.add_argument("--upload-mib", type=int, default=400)
    parser.add_argument("--postgres", help="postgres://… of a server to create a database on")
    args = parser.parse_args()
    smoke = args.smoke
    if smoke:
        print("smoke run (small sizes, short timeouts): the figures below are not measurements")
    with tempfile.TemporaryDirectory(prefix="hostile-load-") as directory:
        workdir = Path(directory)
        if smoke:  # one daphne for every case, its header timeout shortened
            (workdir / "smoke").mkdir()
            with live_server(workdir / "smoke", {"HTTP_HEADER_TIMEOUT_SECONDS": "2"}) as server:
                upload_cases(server, 30)
                slowloris(server, 20, 300)
                churn(server, 200, 100)
                big_frames(server, 40, 2)
            return
        (workdir / "u").mkdir()
        with live_server(workdir / "u") as server:
            upload_cases(server, 200)
        (workdir / "s").mkdir()
        with live_server(workdir / "s") as server:
            slowloris(server, 200, 300)
        (workdir / "c").mkdir()
        with live_server(workdir / "c") as server:
            churn(server, 5000, 200)
        (workdir / "f").mkdir()
        with live_server(workdir / "f") as server:
            big_frames(server, 40, 22)
        (workdir / "a").mkdir()
        with live_server(workdir / "a") as server:
            uploads(server, args.upload_mib)
        (workdir / "b").mkdir()
        with live_server(workdir / "b") as server:
            pdf_bomb(server)
        if args.postgres:
            (workdir / "pg").mkdir()
            connections(workdir, args.postgres)


if __name__ == "__main__":
    main()
