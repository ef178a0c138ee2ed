"""``manage.py enrich``: one message, ``--json``, ``--file`` with progress and a summary."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from enrichment.api.limits import MAX_BODY_CHARS
from enrichment.models import Run

pytestmark = pytest.mark.django_db(transaction=True)


def enrich(*args: str) -> str:
    out = io.StringIO()
    call_command("enrich", *args, stdout=out)
    return out.getvalue()


def test_plain_output_is_the_enriched_body(summarizer) -> None:
    output = enrich("read http://127.0.0.1/a please")
    assert output.startswith("read http://127.0.0.1/a please\n\n[Link]\nURL: http://127.0.0.1/a")
    assert "Summary of http://127.0.0.1/a" in output
    run = Run.objects.get()
    assert run.outcome == "success"
    assert run.enriched_body == output.rstrip("\n")


def test_context_options_reach_the_run(summarizer) -> None:
    enrich(
        "hi http://127.0.0.1/b",
        "--channel",
        "telegram",
        "--chat-type",
        "group",
        "--session-key",
        "agent:main:1",
    )
    run = Run.objects.get()
    assert (run.channel, run.chat_type, run.session_key) == ("telegram", "group", "agent:main:1")


def test_json_output_is_the_full_decision(summarizer) -> None:
    result = json.loads(enrich("x http://127.0.0.1/fail", "--json"))
    assert set(result) == {"runId", "body", "links", "media"}
    assert result["runId"] == Run.objects.get().pk
    (url,) = result["links"]["urls"]
    assert url["url"] == "http://127.0.0.1/fail"
    assert url["chosen"] is None
    assert url["attempts"][0]["exitCode"] == 3
    assert "upstream broke" in url["attempts"][0]["stderrTail"]
    assert result["body"] == "x http://127.0.0.1/fail"


def test_message_without_links_prints_it_unchanged(summarizer) -> None:
    assert enrich("nothing to see").rstrip("\n") == "nothing to see"
    assert Run.objects.get().outcome == "no-links"


def test_file_mode_shows_progress_on_stderr_and_a_summary(summarizer, tmp_path, capsys) -> None:
    lines = [f"message {i} http://127.0.0.1/{i}" for i in range(11)] + [
        "no links here",
        "",
        "   ",
        "broken http://127.0.0.1/fail",
    ]
    path = tmp_path / "messages.txt"
    path.write_text("\n".join(lines), encoding="utf-8")
    output = enrich("--file", str(path))
    stderr = capsys.readouterr().err
    # Not a terminal: a progress line every 10 messages and at the end.
    bars = [line for line in stderr.splitlines() if line.startswith("[")]
    assert len(bars) == 2
    assert bars[0].startswith("[" + "#" * 23) and " 10/13 " in bars[0]
    assert bars[1].startswith("[" + "#" * 30 + "]") and " 13/13 " in bars[1]
    assert "msg/s" in bars[1]
    table = output.strip().splitlines()
    assert table[0].split() == ["outcome", "runs"]
    assert table[1] == "-" * 12 + " " + "-" * 6
    rows = {line.split()[0]: int(line.split()[1]) for line in table[2:]}
    # The failed CLI still gives a decision: no summary, so the run is "skipped".
    assert rows == {"success": 11, "no-links": 1, "skipped": 1, "total": 13}
    assert table[-1].endswith(" s)")
    assert Run.objects.count() == 13


def test_file_mode_with_json_prints_one_line_per_message(summarizer, tmp_path) -> None:
    path = tmp_path / "m.txt"
    path.write_text("a http://127.0.0.1/a\nb\n", encoding="utf-8")
    output = enrich("--file", str(path), "--json")
    records = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    assert [r["links"]["outcome"] for r in records] == ["success", "no-links"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "give either a message or --file FILE"),
        (("text", "--file", "x.txt"), "give either a message or --file FILE"),
        (("--file", "/nonexistent/messages.txt"), "cannot read /nonexistent/messages.txt"),
        (("x" * (MAX_BODY_CHARS + 1),), f"message too long: {MAX_BODY_CHARS + 1} characters"),
    ],
    ids=["nothing", "both", "missing-file", "too-long"],
)
def test_bad_input_is_a_command_error(summarizer, args, message) -> None:
    with pytest.raises(CommandError, match=message):
        enrich(*args)
    assert not Run.objects.exists()


def test_undecodable_file_is_a_command_error(summarizer, tmp_path) -> None:
    path = tmp_path / "latin1.txt"
    path.write_bytes(b"caf\xe9 http://127.0.0.1/a\n")
    with pytest.raises(CommandError, match="cannot read"):
        enrich("--file", str(path))


def test_too_long_line_in_file_is_a_command_error(summarizer, tmp_path) -> None:
    path = tmp_path / "long.txt"
    path.write_text("short\n" + "y" * (MAX_BODY_CHARS + 1) + "\n", encoding="utf-8")
    with pytest.raises(CommandError, match="message too long"):
        enrich("--file", str(path))
