"""Main-content extraction quality and speed on a labelled set of HTML pages.

    .venv/bin/python bench/extraction.py [DIR] [--format text|markdown] [--pages]

DIR (default bench/data/extraction) holds ``*.html`` / ``*.html.gz`` pages, directly or in an
``html/`` subfolder, and ``ground-truth.json`` mapping each file stem to
``{"articleBody": ..., "page_type": ...}`` (``page_type`` optional). Extracted text and truth
are compared as sets of word 4-gram shingles (tokens = ``\\w+``, lower-cased): precision,
recall and F1 per page, then averaged over pages, per page type and overall. In markdown mode
both outputs are flattened with the project's ``markdown_to_text`` before scoring, so link
URLs and markup do not count as words (the truth is plain text). The project's
extraction and trafilatura with its default settings run side by side on the same pages;
pages per second and the median milliseconds per page cover extraction only.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import trafilatura  # noqa: E402

from enrichment.pipeline.fetch.extraction import (  # noqa: E402
    ExtractionError,
    extract_html,
    markdown_to_text,
)

DEFAULT_DIR = Path(__file__).resolve().parent / "data" / "extraction"
SHINGLE = 4
TARGET_OVERALL_F1 = 0.88
TARGET_ARTICLE_F1 = 0.95
TARGET_MEDIAN_MS = 15.0

Scores = tuple[float, float, float]  # precision, recall, f1


def shingles(text: str) -> set[tuple[str, ...]]:
    tokens = re.findall(r"\w+", text.lower())
    if len(tokens) < SHINGLE:
        return {tuple(tokens)} if tokens else set()
    return {tuple(tokens[i : i + SHINGLE]) for i in range(len(tokens) - SHINGLE + 1)}


def score(extracted: str, truth: str) -> Scores:
    got, want = shingles(extracted), shingles(truth)
    overlap = len(got & want)
    precision = overlap / len(got) if got else 0.0
    recall = overlap / len(want) if want else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def load_pages(directory: Path) -> list[tuple[str, bytes]]:
    if (directory / "html").is_dir():
        directory = directory / "html"
    pages = []
    for path in sorted(directory.iterdir()):
        if path.name.endswith(".html"):
            pages.append((path.name.removesuffix(".html"), path.read_bytes()))
        elif path.name.endswith(".html.gz"):
            pages.append((path.name.removesuffix(".html.gz"), gzip.decompress(path.read_bytes())))
    return pages


def project_extract(body: bytes, mode: str) -> str:
    try:
        return extract_html(body, None, mode=mode).text  # type: ignore[arg-type]
    except ExtractionError:
        return ""


def trafilatura_default(body: bytes, mode: str) -> str:
    output = "markdown" if mode == "markdown" else "txt"
    return trafilatura.extract(body, output_format=output) or ""


def run(
    extract: Callable[[bytes, str], str],
    pages: list[tuple[str, bytes]],
    truth: dict[str, dict[str, str]],
    mode: str,
) -> tuple[dict[str, Scores], list[float]]:
    scores: dict[str, Scores] = {}
    seconds: list[float] = []
    for stem, body in pages:
        started = time.perf_counter()
        text = extract(body, mode)
        seconds.append(time.perf_counter() - started)
        if mode == "markdown":
            text = markdown_to_text(text)
        scores[stem] = score(text, truth[stem]["articleBody"])
    return scores, seconds


def mean(rows: list[Scores]) -> Scores:
    count = len(rows)
    return (
        sum(row[0] for row in rows) / count,
        sum(row[1] for row in rows) / count,
        sum(row[2] for row in rows) / count,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("directory", nargs="?", type=Path, default=DEFAULT_DIR)
    parser.add_argument("--format", choices=("text", "markdown"), default="text")
    parser.add_argument("--pages", action="store_true", help="also print every page's scores")
    args = parser.parse_args()
    truth = json.loads((args.directory / "ground-truth.json").read_text(encoding="utf-8"))
    pages = [(stem, body) for stem, body in load_pages(args.directory) if stem in truth]
    if not pages:
        parser.error(f"no labelled pages in {args.directory}")

    ours, our_seconds = run(project_extract, pages, truth, args.format)
    theirs, their_seconds = run(trafilatura_default, pages, truth, args.format)

    if args.pages:
        print(f"{'page':<24} {'type':<14} {'ours f1':>7} {'trafilatura f1':>14}")
        for stem, _ in pages:
            kind = truth[stem].get("page_type", "page")
            print(f"{stem:<24} {kind:<14} {ours[stem][2]:>7.3f} {theirs[stem][2]:>14.3f}")
        print()

    kinds: dict[str, list[str]] = {}
    for stem, _ in pages:
        kinds.setdefault(truth[stem].get("page_type", "page"), []).append(stem)
    groups = sorted(kinds.items(), key=lambda item: (-len(item[1]), item[0]))
    if len(groups) > 1:
        groups.append(("overall", [stem for stem, _ in pages]))
    else:
        groups = [("overall", [stem for stem, _ in pages])]
    print(f"{args.format} mode, {len(pages)} pages, word-{SHINGLE}-gram shingles")
    print(f"{'page type':<14} {'pages':>5}   {'project P / R / F1':>22}   {'trafilatura P / R / F1':>22}")  # fmt: skip
    for kind, stems in groups:
        our = mean([ours[stem] for stem in stems])
        their = mean([theirs[stem] for stem in stems])
        mark = "" if our[2] >= their[2] else "  < trafilatura"
        print(
            f"{kind:<14} {len(stems):>5}   {our[0]:.3f} / {our[1]:.3f} / {our[2]:.3f}"
            f"   {their[0]:.3f} / {their[1]:.3f} / {their[2]:.3f}{mark}"
        )
    for label, seconds in (("project", our_seconds), ("trafilatura", their_seconds)):
        median_ms = statistics.median(seconds) * 1000
        print(
            f"{label:<12} {len(seconds) / sum(seconds):7.1f} pages/s, median {median_ms:5.1f} ms"
            f" per page (target ≤ {TARGET_MEDIAN_MS:g} ms for the project)"
        )
    overall = mean(list(ours.values()))[2]
    article = [ours[stem] for stem in kinds.get("article", [])]
    print(f"targets: overall F1 ≥ {TARGET_OVERALL_F1} (got {overall:.3f})", end="")
    if article:
        print(f", article F1 ≥ {TARGET_ARTICLE_F1} (got {mean(article)[2]:.3f})")
    else:
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
