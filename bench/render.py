"""Rich-output renderer throughput and worst case on hostile input.

Run: ``.venv/bin/python bench/render.py``. Prints (1) render time over a generated ~1 MiB
corpus of realistic assistant messages as a ratio to one regex pass over the same
messages (target <= 4x) and (2) the slowest of several 100 KiB adversarial inputs in
milliseconds (target < 100 ms), each render from cold: the code regions that the parsers
remember for a text they saw last are forgotten first.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from richoutput.canvas.codespans import clear_code_region_cache  # noqa: E402
from richoutput.canvas.render import render_assistant_text  # noqa: E402

CORPUS_BYTES = 1 << 20
HOSTILE_BYTES = 100 * 1024
RATIO_TARGET = 4.0
WORST_CASE_TARGET_MS = 100.0

# The baseline: one pass of a directive-shaped regex, per message, as cheap as a scanner
# that merely finds candidates can be.
BASELINE = re.compile(
    r"\[\[[^\]\n]{0,300}\]\]|\[embed\s[^\]]{0,2000}\]|^[ \t]*media:[^\n]*",
    re.IGNORECASE | re.MULTILINE,
)

PROSE = [
    "Sure, here is the summary you asked for.",
    "The deployment finished without errors; all 14 checks are green.",
    "I looked at the logs and found two timeouts around 03:12 UTC.",
    "Let me know if you want me to open a ticket for the flaky test.",
    "Here are the numbers for last week, broken down by channel.",
    "The config change is live. Rollback is `git revert HEAD` if needed.",
]
CODE = "```python\nfor item in items:\n    print(item)  # MEDIA:/not/a/directive\n```"


def _paragraph(rng: random.Random) -> str:
    if rng.random() < 0.2:
        return "\n".join(f"- {rng.choice(PROSE)}" for _ in range(rng.randrange(2, 6)))
    return " ".join(rng.choice(PROSE) for _ in range(rng.randrange(2, 6)))


def realistic_message(rng: random.Random, paragraphs: tuple[int, int] = (1, 6)) -> str:
    """A reply as assistants write them: a few paragraphs or bullet lists, sometimes code,
    and the directives at the usual places (reply tag first, embeds and MEDIA last)."""
    parts: list[str] = []
    if rng.random() < 0.3:
        parts.append(
            rng.choice(["[[reply_to_current]]", f"[[reply_to:msg-{rng.randrange(10**6)}]]"])
        )
    parts.extend(_paragraph(rng) for _ in range(rng.randrange(*paragraphs)))
    if rng.random() < 0.2:
        parts.insert(len(parts) // 2 + 1, CODE)
    if rng.random() < 0.25:
        parts.append(f'[embed ref="cv_{rng.randrange(1000)}" title="Status" height="480" /]')
    if rng.random() < 0.2:
        parts.append(f"MEDIA:/workspace/out/chart-{rng.randrange(100)}.png")
    if rng.random() < 0.05:
        parts.append("MEDIA:https://cdn.example.com/report.pdf")
    if rng.random() < 0.05:
        parts.append("[[audio_as_voice]]\nMEDIA:/workspace/voice.ogg")
    return "\n\n".join(parts)


def corpus(
    seed: int = 7, paragraphs: tuple[int, int] = (1, 6), total: int = CORPUS_BYTES
) -> list[str]:
    rng = random.Random(seed)
    messages: list[str] = []
    size = 0
    while size < total:
        message = realistic_message(rng, paragraphs)
        messages.append(message)
        size += len(message.encode())
    return messages


def hostile_inputs(n: int = HOSTILE_BYTES) -> dict[str, str]:
    return {
        "[embed flood": "[embed " * (n // 7) + "]",
        "[embed unclosed quotes": '[embed a="' * (n // 10) + "]",
        "[embed blocks": '[embed ref="x"]' * (n // 15) + "[/embed]",
        "attribute flood": "[embed " + 'a="1" ' * (n // 6) + "/]",
        "[[ flood": "[[" * (n // 2),
        "[[reply_to: flood": "[[reply_to:" * (n // 11) + "]]",
        "[[reply_to: + spaces": "[[reply_to:" + " " * n,
        "nested brackets": "[" * (n // 2) + "]" * (n // 2),
        "unbalanced quotes": "[embed " + "\"'" * (n // 2),
        "backtick runs + tags": "[[audio_as_voice]] "
        + "".join("`" * (i % 40 + 1) + " " for i in range(n // 22)),
        "MEDIA fragments": "MEDIA:" + "/a " * (n // 3),
        "MEDIA spaced path": "MEDIA:/" + "a " * (n // 2),
        "MEDIA lines kept": "MEDIA:screenshot\n" * (n // 17),
        "MEDIA lines mixed": "MEDIA:/tmp/a b.png https://127.0.0.1/x\n" * (n // 38),
        "directive per line": "x [[reply_to_current]] y\n" * (n // 25),
        "blank-line seams": "[[audio_as_voice]]\n\n" * (n // 20),
        "nested audio": "[[" * (n // 36) + "audio_as_voice]]" * (n // 36),
        "indented lines": "    [[x]]\n" * (n // 10),
        # The code-region scanner's own worst cases (a directive makes the parsers ask).
        "fence lines + tag": "```\n" * (n // 4) + "[[audio_as_voice]]",
        "fenced tag lines": "```\n[[audio_as_voice]]\n```\n" * (n // 27),
        "backtick runs + tag last": "".join("`" * (i % 40 + 1) + " " for i in range(n // 22))
        + "[[audio_as_voice]]",
        "blank lines + tab tag": "\n" * n + "\t[[audio_as_voice]]",
    }


def best_of(repeats: int, action: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        best = min(best, time.perf_counter() - started)
    return best


def cold_render(text: str) -> object:
    clear_code_region_cache()
    return render_assistant_text(text, "cur")


def throughput(label: str, messages: list[str], repeats: int = 5) -> float:
    total = sum(len(m.encode()) for m in messages)
    render_s = best_of(repeats, lambda: [render_assistant_text(m, "cur") for m in messages])
    baseline_s = best_of(repeats, lambda: [BASELINE.findall(m) for m in messages])
    ratio = render_s / baseline_s
    print(
        f"{label}: {len(messages)} messages, {total / 1024:.0f} KiB "
        f"(avg {total / len(messages):.0f} B); render {render_s * 1000:.1f} ms "
        f"({total / render_s / (1 << 20):.1f} MiB/s); regex pass {baseline_s * 1000:.1f} ms; "
        f"ratio {ratio:.2f}x"
    )
    return ratio


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--smoke", action="store_true", help="tiny sizes, one round: checks the script runs"
    )
    args = parser.parse_args()
    # A smoke run checks the script still runs; its figures are not measurements.
    size, hostile, repeats = (
        (CORPUS_BYTES // 64, HOSTILE_BYTES // 64, 1)
        if args.smoke
        else (
            CORPUS_BYTES,
            HOSTILE_BYTES,
            5,
        )
    )
    if args.smoke:
        print("smoke run (tiny sizes): the figures below are not measurements")
    ratio = throughput("realistic corpus", corpus(total=size), repeats)
    throughput(
        "one-paragraph replies (informational)", corpus(paragraphs=(1, 2), total=size), repeats
    )
    verdict = "met" if ratio <= RATIO_TARGET else "MISSED"
    print(f"ratio: {ratio:.2f}x (target <= {RATIO_TARGET:.0f}x: {verdict})")

    worst_name, worst_ms = "", 0.0
    for name, text in hostile_inputs(hostile).items():
        elapsed_ms = best_of(min(3, repeats), partial(cold_render, text)) * 1000
        print(f"  {name:24} {len(text) / 1024:6.0f} KiB {elapsed_ms:8.1f} ms")
        if elapsed_ms > worst_ms:
            worst_name, worst_ms = name, elapsed_ms
    verdict = "met" if worst_ms < WORST_CASE_TARGET_MS else "MISSED"
    print(
        f"worst case: {worst_ms:.1f} ms ({worst_name}) "
        f"(target < {WORST_CASE_TARGET_MS:.0f} ms: {verdict})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
