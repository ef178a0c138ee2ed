"""``link-understand`` console-script cold start. Run: .venv/bin/python bench/cold_start.py

Times fresh processes of the installed script (median and best of ``--runs``): ``--help``
(imports only), ``--url`` on a local page without Django, and the same with
``DJANGO_SETTINGS_MODULE`` set (the page cache: settings only, no ``django.setup()``).
``--root DIR`` runs the code of another checkout instead (e.g. the main branch, to compare).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.local_pages import page_server  # noqa: E402

SCRIPT = str(Path(sys.executable).with_name("link-understand"))


def timed(args: list[str], env: dict[str, str], runs: int) -> tuple[float, float]:
    durations = []
    for _ in range(runs):
        started = time.perf_counter()
        done = subprocess.run([SCRIPT, *args], env=env, capture_output=True, timeout=120)
        durations.append(time.perf_counter() - started)
        if done.returncode != 0:
            raise SystemExit(f"{args} failed: {done.stderr.decode()[-500:]}")
    return statistics.median(durations), min(durations)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--root", default=str(ROOT), help="checkout whose code to run")
    parser.add_argument("--smoke", action="store_true", help="one run each: checks the script")
    args = parser.parse_args()
    if args.smoke:
        args.runs = 1
        print("smoke run (one run each): the figures below are not measurements")
    base = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "LINK_"))}
    base.pop("REDIS_URL", None)
    base["PYTHONPATH"] = args.root
    base["LINK_UNDERSTAND_SSRF_POLICY"] = json.dumps({"allowedHostnames": ["127.0.0.1"]})
    with page_server() as pages:
        url = f"{pages}/page/1"
        cases = [
            ("--help", ["--help"], base),
            ("--url (no Django)", ["--url", url], base),
            (
                "--url with DJANGO_SETTINGS_MODULE",
                ["--url", url],
                {**base, "DJANGO_SETTINGS_MODULE": "controlui.settings"},
            ),
        ]
        print(f"link-understand cold start, code from {args.root}, {args.runs} runs each")
        for label, argv, env in cases:
            median, best = timed(argv, env, args.runs)
            print(f"  {label:<36} median {median * 1000:6.0f} ms   best {best * 1000:6.0f} ms")


if __name__ == "__main__":
    main()
