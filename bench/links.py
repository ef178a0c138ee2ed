"""Link pipeline benchmarks. Run: .venv/bin/python bench/links.py

Detection: ``extract_links`` over a generated ~1 MiB mixed message (prose, markdown
links and images, inline code, fenced code, bare public and private URLs), reported
as a ratio to one ``re.finditer(r"https?://\\S+")`` pass over the same text.
"""

from __future__ import annotations

import random
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from enrichment.pipeline.links import extract_links  # noqa: E402

DETECTION_TARGET_RATIO = 3.0
CORPUS_BYTES = 1024 * 1024

_WORDS = [
    "the",
    "gateway",
    "reads",
    "each",
    "message",
    "and",
    "may",
    "fetch",
    "a",
    "page",
    "before",
    "the",
    "agent",
    "answers",
]
_PIECES: tuple[Callable[[random.Random], str], ...] = (
    lambda rng: " ".join(rng.choices(_WORDS, k=12)) + ".",
    lambda rng: (
        f'see [docs {rng.randrange(999)}](https://docs.example.com/p/{rng.randrange(9999)} "t")'
    ),
    lambda rng: f"![shot](https://img.example.org/{rng.randrange(9999)}.png)",
    lambda rng: f"`https://code.example.net/{rng.randrange(999)}` and `x = [1](2)`",
    lambda rng: f"read https://news.example.com/a/{rng.randrange(99999)}?id={rng.randrange(99)}.",
    lambda rng: f"(see https://en.example.org/wiki/Item_({rng.randrange(99)}))",
    lambda rng: f"http://10.0.{rng.randrange(255)}.{rng.randrange(255)}:8080/admin, http://127.1/",
    lambda rng: f"<https://auto.example.com/{rng.randrange(999)}>",
    lambda rng: "\n\n```\nhttps://fenced.example.com/x [a](b)\n```\n\n",
    lambda rng: "\n\n",
)


def detection_corpus(size: int = CORPUS_BYTES, seed: int = 7) -> str:
    rng = random.Random(seed)
    parts: list[str] = []
    length = 0
    while length < size:
        piece = rng.choice(_PIECES)(rng)
        parts.append(piece)
        length += len(piece) + 1
    return " ".join(parts)


def _best_of(repeats: int, action: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        best = min(best, time.perf_counter() - started)
    return best


def bench_detection(repeats: int = 5) -> dict[str, float]:
    """Seconds for the regex baseline and for extract_links (default cap and uncapped)."""
    corpus = detection_corpus()
    baseline_pattern = re.compile(r"https?://\S+")
    baseline = _best_of(repeats, lambda: sum(1 for _ in baseline_pattern.finditer(corpus)))
    capped = _best_of(repeats, lambda: extract_links(corpus))
    uncapped = _best_of(repeats, lambda: extract_links(corpus, max_links=10**9))
    return {
        "bytes": float(len(corpus)),
        "baseline": baseline,
        "capped": capped,
        "uncapped": uncapped,
    }


def print_detection(figures: dict[str, float]) -> None:
    megabytes = figures["bytes"] / CORPUS_BYTES
    print(f"detection on {megabytes:.2f} MiB mixed corpus")
    baseline = figures["baseline"]
    print(
        f"  baseline re.finditer(https?://\\S+): {baseline * 1000:8.2f} ms  "
        f"{megabytes / baseline:7.1f} MiB/s"
    )
    for key in ("capped", "uncapped"):
        ratio = figures[key] / figures["baseline"]
        label = "extract_links (cap 3)" if key == "capped" else "extract_links (no cap)"
        print(
            f"  {label:34}: {figures[key] * 1000:8.2f} ms  "
            f"{megabytes / figures[key]:7.1f} MiB/s  "
            f"ratio {ratio:5.2f}x (target <= {DETECTION_TARGET_RATIO:.0f}x)"
        )


def main() -> None:
    print_detection(bench_detection())


if __name__ == "__main__":
    main()
