"""Main-content extraction quality and speed on a labelled set of HTML pages.

    .venv/bin/python bench/extraction.py [DIR] [--format text|markdown|both] [--pages] [--halves]

DIR (default bench/data/extraction) holds ``*.html`` / ``*.html.gz`` pages, directly or in an
``html/`` subfolder, and ``ground-truth.json`` mapping each file stem to
``{"articleBody": ..., "page_type": ...}`` (``page_type`` optional). Extracted text and truth
are compared as sets of word 4-gram shingles (tokens = ``\\w+``, lower-cased): precision,
recall and F1 per page, then averaged over pages, per page type and overall. In markdown mode
both outputs are flattened with the project's ``markdown_to_text`` before scoring, so link
URLs and markup do not count as words (the truth is plain text). The project's
extraction and trafilatura with its default settings run side by side on the same pages;
pages per second and the median milliseconds per page (wall clock, and CPU time of this
process, which other work on a shared machine does not inflate) cover extraction only.
``--halves`` also scores two halves of the set split by a hash of the file stem (half A:
first byte of the stem's SHA-256 even), so a change tuned while looking at one half can be
checked on the other.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import trafilatura  # noqa: E402

from enrichment.pipeline.extract.page import ExtractionError, extract_html  # noqa: E402
from enrichment.pipeline.extract.text import markdown_to_text  # noqa: E402

DEFAULT_DIR = Path(__file__).resolve().parent / "data" / "extraction"
SHINGLE = 4
# Issue 35's acceptance: overall F1 >= 0.90 and >= trafilatura's + 0.04 on the validation set
# (>= 0.88 on the development set), article >= 0.96, every page type >= trafilatura's, and at
# most 3 % of the pages far below trafilatura (page F1 more than FAR_BELOW lower).
TARGET_OVERALL_F1 = 0.90
TARGET_DEV_OVERALL_F1 = 0.88
TARGET_LEAD = 0.04
TARGET_ARTICLE_F1 = 0.96
FAR_BELOW = 0.1
TARGET_FAR_BELOW_SHARE = 0.03
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


def half_of(stem: str) -> str:
    """``A`` or ``B``: a fixed split of the set that does not depend on the pages' order."""
    return "A" if hashlib.sha256(stem.encode("utf-8")).digest()[0] % 2 == 0 else "B"


def run(
    extract: Callable[[bytes, str], str],
    pages: list[tuple[str, bytes]],
    truth: dict[str, dict[str, str]],
    mode: str,
) -> tuple[dict[str, Scores], list[float], list[float]]:
    scores: dict[str, Scores] = {}
    seconds: list[float] = []
    cpu_seconds: list[float] = []
    for stem, body in pages:
        started, started_cpu = time.perf_counter(), time.process_time()
        text = extract(body, mode)
        cpu_seconds.append(time.process_time() - started_cpu)
        seconds.append(time.perf_counter() - started)
        if mode == "markdown":
            text = markdown_to_text(text)
        scores[stem] = score(text, truth[stem]["articleBody"])
    return scores, seconds, cpu_seconds


def mean(rows: list[Scores]) -> Scores:
    count = len(rows)
    return (
        sum(row[0] for row in rows) / count,
        sum(row[1] for row in rows) / count,
        sum(row[2] for row in rows) / count,
    )


def page_types(stems: list[str], truth: dict[str, dict[str, str]]) -> dict[str, list[str]]:
    """The pages of each page type (``page`` where the truth names none), in page order."""
    kinds: dict[str, list[str]] = {}
    for stem in stems:
        kinds.setdefault(truth[stem].get("page_type", "page"), []).append(stem)
    return kinds


def print_table(
    title: str,
    stems: list[str],
    truth: dict[str, dict[str, str]],
    ours: dict[str, Scores],
    theirs: dict[str, Scores],
) -> None:
    kinds = page_types(stems, truth)
    groups = sorted(kinds.items(), key=lambda item: (-len(item[1]), item[0]))
    if len(groups) > 1:
        groups.append(("overall", stems))
    else:
        groups = [("overall", stems)]
    print(title)
    print(f"{'page type':<14} {'pages':>5}   {'project P / R / F1':>22}   {'trafilatura P / R / F1':>22}")  # fmt: skip
    for kind, group in groups:
        our = mean([ours[stem] for stem in group])
        their = mean([theirs[stem] for stem in group])
        mark = "" if our[2] >= their[2] else "  < trafilatura"
        print(
            f"{kind:<14} {len(group):>5}   {our[0]:.3f} / {our[1]:.3f} / {our[2]:.3f}"
            f"   {their[0]:.3f} / {their[1]:.3f} / {their[2]:.3f}{mark}"
        )


def report(
    mode: str,
    pages: list[tuple[str, bytes]],
    truth: dict[str, dict[str, str]],
    *,
    show_pages: bool,
    halves: bool,
) -> None:
    ours, our_seconds, our_cpu = run(project_extract, pages, truth, mode)
    theirs, their_seconds, their_cpu = run(trafilatura_default, pages, truth, mode)
    stems = [stem for stem, _ in pages]
    if show_pages:
        print(f"{'page':<24} {'type':<14} {'ours f1':>7} {'trafilatura f1':>14}")
        for stem in stems:
            kind = truth[stem].get("page_type", "page")
            print(f"{stem:<24} {kind:<14} {ours[stem][2]:>7.3f} {theirs[stem][2]:>14.3f}")
        print()
    title = f"{mode} mode, {len(pages)} pages, word-{SHINGLE}-gram shingles"
    print_table(title, stems, truth, ours, theirs)
    if halves:
        for half in ("A", "B"):
            group = [stem for stem in stems if half_of(stem) == half]
            if group:
                print_table(f"{mode} mode, half {half}: {len(group)} pages", group, truth, ours, theirs)  # fmt: skip
    for label, seconds, cpu in (
        ("project", our_seconds, our_cpu),
        ("trafilatura", their_seconds, their_cpu),
    ):
        median_ms = statistics.median(seconds) * 1000
        median_cpu_ms = statistics.median(cpu) * 1000
        print(
            f"{label:<12} {len(seconds) / sum(seconds):7.1f} pages/s, median {median_ms:5.1f} ms"
            f" per page, CPU median {median_cpu_ms:5.1f} ms"
            + (
                f" (target <= {TARGET_MEDIAN_MS:g} ms: {_verdict(median_cpu_ms <= TARGET_MEDIAN_MS)})"
                if label == "project"
                else ""
            )
        )
    for line in target_lines(stems, truth, ours, theirs):
        print(line)


def _verdict(met: bool) -> str:
    return "met" if met else "missed"


def target_lines(
    stems: list[str],
    truth: dict[str, dict[str, str]],
    ours: dict[str, Scores],
    theirs: dict[str, Scores],
) -> list[str]:
    """Issue 35's acceptance on these pages, each target met or missed.

    >>> truth = {"a": {"page_type": "article"}, "b": {"page_type": "product"}}
    >>> for line in target_lines(["a", "b"], truth, {"a": (1, 1, 0.97), "b": (1, 1, 0.5)},
    ...                          {"a": (1, 1, 0.9), "b": (1, 1, 0.7)}):
    ...     print(line)
    targets: overall F1 0.735 against >= 0.9 on the validation set (missed; >= 0.88 on the development set: missed) and >= trafilatura's 0.800 + 0.04 (missed)
    targets: article F1 0.970 against >= 0.96 (met)
    targets: far below trafilatura 1 / 2 pages (50.0%) against <= 3% (missed)
    targets: page types below trafilatura: product (missed)
    """
    overall = mean([ours[stem] for stem in stems])[2]
    their_overall = mean([theirs[stem] for stem in stems])[2]
    lines = [
        f"targets: overall F1 {overall:.3f} against >= {TARGET_OVERALL_F1:g} on the validation"
        f" set ({_verdict(overall >= TARGET_OVERALL_F1)}; >= {TARGET_DEV_OVERALL_F1:g} on the"
        f" development set: {_verdict(overall >= TARGET_DEV_OVERALL_F1)}) and >= trafilatura's"
        f" {their_overall:.3f} + {TARGET_LEAD:g}"
        f" ({_verdict(overall >= their_overall + TARGET_LEAD)})"
    ]
    kinds = page_types(stems, truth)
    if "article" in kinds:
        article = mean([ours[stem] for stem in kinds["article"]])[2]
        lines.append(
            f"targets: article F1 {article:.3f} against >= {TARGET_ARTICLE_F1:g}"
            f" ({_verdict(article >= TARGET_ARTICLE_F1)})"
        )
    far = sum(1 for stem in stems if ours[stem][2] < theirs[stem][2] - FAR_BELOW)
    share = far / len(stems)
    lines.append(
        f"targets: far below trafilatura {far} / {len(stems)} pages ({share:.1%})"
        f" against <= {TARGET_FAR_BELOW_SHARE:.0%} ({_verdict(share <= TARGET_FAR_BELOW_SHARE)})"
    )
    below = [
        kind
        for kind, group in sorted(kinds.items())
        if mean([ours[stem] for stem in group])[2] < mean([theirs[stem] for stem in group])[2]
    ]
    lines.append(
        f"targets: page types below trafilatura: {', '.join(below) or 'none'}"
        f" ({_verdict(not below)})"
    )
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("directory", nargs="?", type=Path, default=DEFAULT_DIR)
    parser.add_argument("--format", choices=("text", "markdown", "both"), default="text")
    parser.add_argument("--pages", action="store_true", help="also print every page's scores")
    parser.add_argument("--halves", action="store_true", help="also score halves A and B")
    parser.add_argument("--smoke", action="store_true", help="4 pages, both formats")
    args = parser.parse_args()
    truth = json.loads((args.directory / "ground-truth.json").read_text(encoding="utf-8"))
    pages = [(stem, body) for stem, body in load_pages(args.directory) if stem in truth]
    if not pages:
        parser.error(f"no labelled pages in {args.directory}")
    if args.smoke:
        pages, args.format = pages[:4], "both"
        print("smoke run (4 pages): the figures below are not measurements")
    modes = ("text", "markdown") if args.format == "both" else (args.format,)
    for index, mode in enumerate(modes):
        if index:
            print()
        report(mode, pages, truth, show_pages=args.pages, halves=args.halves)
    return 0


if __name__ == "__main__":
    sys.exit(main())
