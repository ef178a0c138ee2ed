"""Hostile load against a real daphne: huge uploads, a PDF bomb, connection counts.

    .venv/bin/python bench/hostile_load.py [--upload-mib 400] [--postgres URL]

Prints, with the targets of issue 17 beside them:

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
    api_token,
    multipart_length,
    multipart_stream,
    peak_rss_mib,
    post_stream,
)

MIB = 1024 * 1024


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
    parser.add_argument("--upload-mib", type=int, default=400)
    parser.add_argument("--postgres", help="postgres://… of a server to create a database on")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hostile-load-") as directory:
        workdir = Path(directory)
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
