"""Link pipeline benchmarks. Run: .venv/bin/python bench/links.py

Detection (acceptance figure): ``extract_links(message)`` with the default cap of 3 on
every message of a generated ~1 MiB corpus of chat messages (a few words up to ~4 KB:
prose, markdown links and images, inline and fenced code, bare public and private URLs,
autolinks, many messages with no URL at all), as a ratio to one
``re.finditer(r"https?://\\S+")`` pass over the concatenated text. Target: <= 3x.

Stress figures (not the acceptance figure): the whole ~1 MiB as one single message,
capped and uncapped, against the same baseline over that message.

Detection times are process CPU time, best of 15 rounds in which the baseline and the
measured passes take turns, each pass from a cold verdict cache.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from enrichment.pipeline.links import detection  # noqa: E402
from enrichment.pipeline.links.detection import clear_verdict_cache, extract_links  # noqa: E402

DETECTION_TARGET_RATIO = 3.0
CORPUS_BYTES = 1024 * 1024
MAX_MESSAGE_BYTES = 4096

_BASELINE = re.compile(r"https?://\S+")

# --- Message corpus (the acceptance figure) ----------------------------------------------

_VOCABULARY_TEXT = (
    "the gateway reads each message and may fetch a page before agent answers we should "
    "deploy tomorrow after review can you check why build failed on main looks like flaky "
    "test again thanks I think config needs new timeout value please see logs attached "
    "it works for me locally but not in staging let's discuss in standup"
)
_VOCABULARY = _VOCABULARY_TEXT.split()
_PUBLIC_HOSTS = (
    "docs.example.com",
    "github.example.org",
    "news.example.net",
    "en.wikipedia.example",
    "api.example.io",
    "Blog.Example.COM",
)
_PRIVATE_HOSTS = (
    "10.0.3.17:8080",
    "192.168.1.20",
    "127.0.0.1:8000",
    "localhost:3000",
    "169.254.169.254",
    "grafana.internal",
    "nas.local",
)


def _sentence(rng: random.Random) -> str:
    words = rng.choices(_VOCABULARY, k=rng.randint(4, 18))
    return " ".join(words).capitalize() + rng.choice((".", ".", "?", "!", ":"))


def _path(rng: random.Random) -> str:
    parts = [
        rng.choice(("a", "docs", "issues", "wiki", "p", "v2")) for _ in range(rng.randint(0, 3))
    ]
    tail = "/" + "/".join(parts) if parts else rng.choice(("", "/"))
    if rng.random() < 0.3:
        tail += f"?id={rng.randrange(9999)}&q=x"
    if rng.random() < 0.1:
        tail += "#section-2"
    return tail


def _public_url(rng: random.Random) -> str:
    return f"{rng.choice(('https', 'https', 'http'))}://{rng.choice(_PUBLIC_HOSTS)}{_path(rng)}"


def _private_url(rng: random.Random) -> str:
    return f"http://{rng.choice(_PRIVATE_HOSTS)}{_path(rng)}"


def _prose(rng: random.Random) -> str:
    return " ".join(_sentence(rng) for _ in range(rng.randint(1, 4)))


def _bare(rng: random.Random) -> str:
    url = _public_url(rng) if rng.random() < 0.8 else _private_url(rng)
    wrap = rng.choice(("see {}", "({})", "{}.", "{}, and", "read {} please", "{}!"))
    return wrap.format(url)


def _markdown_link(rng: random.Random) -> str:
    title = rng.choice(("", "", ' "the docs"'))
    return f"see [{rng.choice(_VOCABULARY)} notes]({_public_url(rng)}{title})"


def _image(rng: random.Random) -> str:
    return f"![screenshot {rng.randrange(99)}](https://img.example.org/{rng.randrange(9999)}.png)"


def _autolink(rng: random.Random) -> str:
    return f"<{_public_url(rng)}>"


def _inline_code(rng: random.Random) -> str:
    code = rng.choice(("x = [1](2)", "make test", _public_url(rng), "a[i] < b"))
    return f"run `{code}` first"


def _fenced(rng: random.Random) -> str:
    lines = [
        rng.choice(
            (
                "curl -s " + _public_url(rng),
                "items = [x for x in data if x < 3]",
                "if (a < b && c[0]) { return; }",
                "GET " + _private_url(rng),
                "    return self.cache[key]",
            )
        )
        for _ in range(rng.randint(2, 12))
    ]
    return "\n\n```" + rng.choice(("", "python", "sh")) + "\n" + "\n".join(lines) + "\n```\n\n"


def _list(rng: random.Random) -> str:
    items = [
        f"- {_sentence(rng)} {_public_url(rng) if rng.random() < 0.4 else ''}".rstrip()
        for _ in range(rng.randint(2, 6))
    ]
    return "\n" + "\n".join(items) + "\n"


_WITH_URLS: tuple[Callable[[random.Random], str], ...] = (
    _prose,
    _prose,
    _prose,
    _bare,
    _bare,
    _markdown_link,
    _image,
    _autolink,
    _inline_code,
    _fenced,
    _list,
)
_WITHOUT_URLS: tuple[Callable[[random.Random], str], ...] = (_prose, _prose, _prose, _prose)


def _message_size(rng: random.Random) -> int:
    """Mostly short chat lines, some paragraphs, a few long pastes (up to 4 KB)."""
    roll = rng.random()
    if roll < 0.55:
        return rng.randint(15, 200)
    if roll < 0.88:
        return rng.randint(200, 1000)
    return rng.randint(1000, MAX_MESSAGE_BYTES)


def _message(rng: random.Random) -> str:
    target = _message_size(rng)
    pieces = _WITH_URLS if rng.random() < 0.6 else _WITHOUT_URLS
    text = ""
    while len(text) < target:
        piece = rng.choice(pieces)(rng)
        if text and len(text) + len(piece) > MAX_MESSAGE_BYTES:
            break
        text = f"{text} {piece}" if text else piece
    return text


def message_corpus(size: int = CORPUS_BYTES, seed: int = 7) -> list[str]:
    """Chat messages whose joined length (with one newline each) is about ``size``."""
    rng = random.Random(seed)
    messages: list[str] = []
    length = 0
    while length < size:
        message = _message(rng)
        messages.append(message)
        length += len(message) + 1
    return messages


# --- Single huge message (stress figures) ------------------------------------------------

_STRESS_TEXT = "the gateway reads each message and may fetch a page before the agent answers"
# The word list and pieces of the original single-message bench, kept so the stress
# figures stay comparable with earlier runs.
_STRESS_WORDS = _STRESS_TEXT.split()
_STRESS_PIECES: tuple[Callable[[random.Random], str], ...] = (
    lambda rng: " ".join(rng.choices(_STRESS_WORDS, k=12)) + ".",
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
    """One ~``size`` message mixing everything (a stress case, not a chat message)."""
    rng = random.Random(seed)
    parts: list[str] = []
    length = 0
    while length < size:
        piece = rng.choice(_STRESS_PIECES)(rng)
        parts.append(piece)
        length += len(piece) + 1
    return " ".join(parts)


# --- Measurement ---------------------------------------------------------------------------


def _best_of(repeats: int, **actions: Callable[[], object]) -> dict[str, float]:
    """Least CPU time of each action over ``repeats`` rounds, each from a cold verdict cache.

    The actions take turns within each round, so a slow spell of this shared 2-core
    machine slows the baseline and the measured code alike instead of skewing a ratio.
    CPU time of this process, not wall time: detection is single-threaded CPU work, and
    wall time mostly measures the other processes.
    """
    best = dict.fromkeys(actions, float("inf"))
    for _ in range(repeats):
        for name, action in actions.items():
            clear_verdict_cache()
            started = time.process_time()
            action()
            best[name] = min(best[name], time.process_time() - started)
    return best


def _baseline_pass(text: str) -> int:
    return sum(1 for _ in _BASELINE.finditer(text))


def _extract_each(messages: list[str], max_links: int = 3) -> int:
    return sum(len(extract_links(message, max_links)) for message in messages)


def bench_detection(repeats: int = 15, size: int = CORPUS_BYTES) -> dict[str, float]:
    """Seconds for the baseline and extract_links on the message corpus and the stress text."""
    messages = message_corpus(size)
    joined = "\n".join(messages)
    stress = detection_corpus(size)
    message_times = _best_of(
        repeats,
        messages_baseline=lambda: _baseline_pass(joined),
        messages_capped=lambda: _extract_each(messages),
        messages_uncapped=lambda: _extract_each(messages, 10**9),
    )
    stress_times = _best_of(
        max(3, repeats // 3),
        stress_baseline=lambda: _baseline_pass(stress),
        stress_capped=lambda: extract_links(stress),
        stress_uncapped=lambda: extract_links(stress, max_links=10**9),
    )
    return {
        "messages": float(len(messages)),
        "messages_bytes": float(len(joined)),
        "messages_without_url": float(sum(1 for m in messages if not _BASELINE.search(m))),
        "stress_bytes": float(len(stress)),
        **message_times,
        **stress_times,
    }


def _figure_line(label: str, seconds: float, megabytes: float, baseline: float | None) -> str:
    line = f"  {label:44}: {seconds * 1000:8.2f} ms CPU {megabytes / seconds:7.1f} MiB/s"
    if baseline is not None:
        line += f"  ratio {seconds / baseline:5.2f}x (target <= {DETECTION_TARGET_RATIO:.0f}x)"
    return line


def print_detection(figures: dict[str, float]) -> None:
    megabytes = figures["messages_bytes"] / CORPUS_BYTES
    count = int(figures["messages"])
    fast_path = (
        "C (_linkscan)"
        if detection._fast_candidates is not detection.python_candidates
        else ("pure Python: _linkscan.c was not compiled")
    )
    print(f"detection fast path: {fast_path}")
    print(
        f"detection: message corpus, {megabytes:.2f} MiB in {count} messages "
        f"(mean {figures['messages_bytes'] / count:.0f} B, "
        f"{figures['messages_without_url'] / count:.0%} without a URL)"
    )
    baseline = figures["messages_baseline"]
    print(_figure_line("baseline re.finditer(https?://\\S+), joined", baseline, megabytes, None))
    print(
        _figure_line(
            "extract_links(message) each, cap 3 [ACCEPT]",
            figures["messages_capped"],
            megabytes,
            baseline,
        )
    )
    print(
        _figure_line(
            "extract_links(message) each, no cap", figures["messages_uncapped"], megabytes, baseline
        )
    )
    megabytes = figures["stress_bytes"] / CORPUS_BYTES
    print(f"stress (not the acceptance figure): one {megabytes:.2f} MiB message")
    baseline = figures["stress_baseline"]
    print(_figure_line("baseline re.finditer(https?://\\S+)", baseline, megabytes, None))
    print(_figure_line("extract_links, cap 3", figures["stress_capped"], megabytes, baseline))
    print(_figure_line("extract_links, no cap", figures["stress_uncapped"], megabytes, baseline))


# --- Runner concurrency (link pipeline wall time) --------------------------------------------

CONCURRENCY_TARGET_RATIO = 0.4
_SLOW_CLI_SECONDS = 0.5
_SLOW_CLI_CODE = (
    "import sys, time; time.sleep(float(sys.argv[1])); print('summary of', sys.argv[2])"
)
_THREE_LINKS = "compare https://a.example/x, https://b.example/y and https://c.example/z"


def _public_resolver(host: str) -> list[str]:
    return ["93.184.216.34"]  # no DNS in a benchmark: every name is "public"


def _pipeline_seconds(concurrency: int | None) -> float:
    import asyncio

    from enrichment.pipeline.config.model import LinkModel, LinksConfig
    from enrichment.pipeline.links.stage import run_link_understanding
    from enrichment.pipeline.net.ssrf import SsrfPolicy
    from enrichment.pipeline.templates import MessageContext

    model = LinkModel(sys.executable, ("-c", _SLOW_CLI_CODE, str(_SLOW_CLI_SECONDS), "{{LinkUrl}}"))
    config = LinksConfig(models=(model,), concurrency=concurrency)
    context = MessageContext(body=_THREE_LINKS)
    started = time.perf_counter()
    result = asyncio.run(
        run_link_understanding(config, context, policy=SsrfPolicy(), resolve=_public_resolver)
    )
    elapsed = time.perf_counter() - started
    assert result.decision.outcome == "success", result.decision
    return elapsed


def bench_concurrency(repeats: int = 3) -> dict[str, float]:
    """Wall seconds for a 3-link message with a 0.5 s CLI: sequential vs default concurrency."""
    sequential = min(_pipeline_seconds(1) for _ in range(repeats))
    concurrent = min(_pipeline_seconds(None) for _ in range(repeats))
    return {"sequential": sequential, "concurrent": concurrent, "ratio": concurrent / sequential}


def print_concurrency(figures: dict[str, float]) -> None:
    print(f"concurrency: 3 links, CLI sleeping {_SLOW_CLI_SECONDS} s each")
    print(f"  {'concurrency 1 (sequential)':44}: {figures['sequential'] * 1000:8.0f} ms")
    print(f"  {'default concurrency (= maxLinks)':44}: {figures['concurrent'] * 1000:8.0f} ms")
    print(
        f"  {'ratio default / sequential [ACCEPT]':44}: {figures['ratio']:8.2f}"
        f"   (target <= {CONCURRENCY_TARGET_RATIO})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--smoke", action="store_true", help="tiny sizes, one round: checks the script runs"
    )
    args = parser.parse_args()
    if args.smoke:
        print("smoke run (tiny sizes): the figures below are not measurements")
        print_detection(bench_detection(repeats=1, size=CORPUS_BYTES // 64))
        print_concurrency(bench_concurrency(repeats=1))
        return
    print_detection(bench_detection())
    print_concurrency(bench_concurrency())


if __name__ == "__main__":
    main()
