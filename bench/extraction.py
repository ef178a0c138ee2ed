"""Main-content extraction quality and speed on a labelled set of HTML pages.

    .venv/bin/python bench/extraction.py [DIR] [--format text|markdown]

DIR (default bench/data/extraction) holds ``*.html`` / ``*.html.gz`` pages and
``ground-truth.json`` mapping each file stem to ``{"articleBody": ...}``. Extracted text and
truth are compared as sets of word 4-gram shingles (tokens = ``\\w+``, lower-cased): precision,
recall and F1 per page, then averaged over pages. Pages per second covers extraction only.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from enrichment.pipeline.fetch.extraction import ExtractionError, extract_html  # noqa: E402

DEFAULT_DIR = Path(__file__).resolve().parent / "data" / "extraction"
SHINGLE = 4


def shingles(text: str) -> set[tuple[str, ...]]:
    tokens = re.findall(r"\w+", text.lower())
    if len(tokens) < SHINGLE:
        return {tuple(tokens)} if tokens else set()
    return {tuple(tokens[i : i + SHINGLE]) for i in range(len(tokens) - SHINGLE + 1)}


def score(extracted: str, truth: str) -> tuple[float, float, float]:
    got, want = shingles(extracted), shingles(truth)
    overlap = len(got & want)
    precision = overlap / len(got) if got else 0.0
    recall = overlap / len(want) if want else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def load_pages(directory: Path) -> list[tuple[str, bytes]]:
    pages = []
    for path in sorted(directory.iterdir()):
        if path.name.endswith(".html"):
            pages.append((path.name.removesuffix(".html"), path.read_bytes()))
        elif path.name.endswith(".html.gz"):
            pages.append((path.name.removesuffix(".html.gz"), gzip.decompress(path.read_bytes())))
    return pages


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", nargs="?", type=Path, default=DEFAULT_DIR)
    parser.add_argument("--format", choices=("text", "markdown"), default="text")
    args = parser.parse_args()
    truth = json.loads((args.directory / "ground-truth.json").read_text(encoding="utf-8"))
    pages = [(stem, body) for stem, body in load_pages(args.directory) if stem in truth]
    if not pages:
        parser.error(f"no labelled pages in {args.directory}")

    rows: list[tuple[str, float, float, float]] = []  # stem, precision, recall, f1
    elapsed = 0.0
    for stem, body in pages:
        started = time.perf_counter()
        try:
            text = extract_html(body, None, mode=args.format).text
        except ExtractionError:
            text = ""
        elapsed += time.perf_counter() - started
        rows.append((stem, *score(text, truth[stem]["articleBody"])))

    print(f"{'page':<32} {'precision':>9} {'recall':>7} {'f1':>6}")
    for stem, precision, recall, f1 in rows:
        print(f"{stem:<32} {precision:>9.3f} {recall:>7.3f} {f1:>6.3f}")
    count = len(rows)
    means = [sum(float(row[column]) for row in rows) / count for column in (1, 2, 3)]
    print(f"{'mean over ' + str(count) + ' pages':<32} {means[0]:>9.3f} {means[1]:>7.3f} {means[2]:>6.3f}")  # fmt: skip
    print(f"pages per second: {count / elapsed:.1f} ({args.format} mode)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
