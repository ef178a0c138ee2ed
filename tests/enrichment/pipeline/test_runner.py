"""Runner tests against real subprocesses (``fake_clis/fakecli.py`` run by this interpreter)."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import pytest

from enrichment.pipeline.runner import CommandResult, run_command
from tests.processes import process_gone

FAKE_CLI = str(Path(__file__).parent / "fake_clis" / "fakecli.py")


def fake(*args: str) -> list[str]:
    return [sys.executable, FAKE_CLI, *args]


@pytest.mark.parametrize(
    ("args", "outcome", "reason", "exit_code", "text"),
    [
        (("echo", "hello", "world"), "success", None, 0, "hello world"),
        (("empty",), "skipped", "empty output", 0, ""),
        (("exit", "3", "partial"), "failed", "exited with code 3", 3, "partial"),
        (("exit", "1"), "failed", "exited with code 1", 1, ""),
        (("badutf8",), "success", None, 0, "ok \ufffd\ufffd end"),
        (("selfkill",), "failed", "killed by signal 15", -15, ""),
    ],
    ids=["success", "empty-output", "non-zero-exit", "exit-1-no-output", "invalid-utf8", "signal"],
)
async def test_run_command_outcomes(
    args: tuple[str, ...], outcome: str, reason: str | None, exit_code: int, text: str
) -> None:
    result = await run_command(fake(*args), timeout_seconds=10)
    assert (result.outcome, result.reason, result.exit_code, result.stdout_text) == (
        outcome,
        reason,
        exit_code,
        text,
    )
    assert result.duration_ms >= 0


async def test_stderr_keeps_only_the_last_2_kib() -> None:
    result = await run_command(fake("stderr-flood"), timeout_seconds=10)
    assert result.outcome == "failed" and result.reason == "exited with code 3"
    assert len(result.stderr_tail.encode()) <= 2048
    assert result.stderr_tail.endswith("eeeEND")


async def test_stderr_tail_of_a_failure_is_recorded() -> None:
    result = await run_command(fake("exit", "2"), timeout_seconds=10)
    assert result.stderr_tail == "boom"


async def test_stdout_bytes_counts_raw_bytes() -> None:
    result = await run_command(fake("echo", "héllo"), timeout_seconds=10)
    assert result.stdout_bytes == len("héllo\n".encode())


@pytest.mark.parametrize("command", ["definitely-not-a-command-7f3a", "/nonexistent/dir/cli"])
async def test_missing_binary(command: str) -> None:
    result = await run_command([command, "--url", "x"], timeout_seconds=5)
    assert result == CommandResult(
        "failed", f"command not found: {command}", None, result.duration_ms, "", 0, ""
    )


async def test_not_executable(tmp_path: Path) -> None:
    script = tmp_path / "not-executable"
    script.write_text("#!/bin/sh\necho hi\n")
    result = await run_command([str(script)], timeout_seconds=5)
    assert result.outcome == "failed"
    assert result.reason == f"cannot run {script}: Permission denied"


async def test_empty_argv_is_a_failed_result() -> None:
    assert (await run_command([], timeout_seconds=5)).reason == "empty command"


async def test_no_shell_is_involved(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    result = await run_command(
        fake("echo", f"$(touch {marker}); `touch {marker}`"), timeout_seconds=10
    )
    assert result.stdout_text == f"$(touch {marker}); `touch {marker}`"
    assert not marker.exists()


async def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    started = time.monotonic()
    result = await run_command(fake("fork-hang", str(pid_file)), timeout_seconds=1)
    assert time.monotonic() - started < 4
    assert (result.outcome, result.reason, result.exit_code) == (
        "failed",
        "timed out after 1s",
        None,
    )
    assert process_gone(int(pid_file.read_text()))


async def test_fractional_timeout_reason() -> None:
    result = await run_command(fake("sleep", "5", "late"), timeout_seconds=0.5)
    assert result.reason == "timed out after 0.5s"


async def test_child_holding_stdout_does_not_delay_a_finished_cli(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    started = time.monotonic()
    result = await run_command(fake("fork-exit", str(pid_file)), timeout_seconds=20)
    assert time.monotonic() - started < 5
    assert (result.outcome, result.stdout_text) == ("success", "done")
    assert process_gone(int(pid_file.read_text()))


async def test_output_flood_is_capped_and_fails_promptly() -> None:
    started = time.monotonic()
    result = await run_command(fake("flood", "50"), timeout_seconds=60)
    assert time.monotonic() - started < 10
    assert (result.outcome, result.reason, result.stdout_text) == ("failed", "output too large", "")
    assert 5 * 1024 * 1024 < result.stdout_bytes < 6 * 1024 * 1024


async def test_custom_stdout_cap() -> None:
    result = await run_command(fake("echo", "x" * 100), timeout_seconds=10, max_stdout_bytes=50)
    assert result.reason == "output too large"
    exact = await run_command(fake("echo", "x" * 49), timeout_seconds=10, max_stdout_bytes=50)
    assert exact.outcome == "success"


async def test_cwd_is_used(tmp_path: Path) -> None:
    log = "log.txt"
    result = await run_command(fake("log", log, "written"), timeout_seconds=10, cwd=str(tmp_path))
    assert result.outcome == "success"
    assert (tmp_path / log).read_text() == "written|\n"


async def test_cancellation_kills_the_process_group(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    task = asyncio.ensure_future(run_command(fake("fork-hang", str(pid_file)), timeout_seconds=60))
    for _ in range(100):
        if pid_file.exists() and pid_file.read_text():
            break
        await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert process_gone(int(pid_file.read_text()))


async def test_environment_is_passed_to_the_command() -> None:
    import sys

    result = await run_command(
        [sys.executable, "-c", "import os; print(os.environ['LINK_TEST_VALUE'])"],
        timeout_seconds=10,
        env={"LINK_TEST_VALUE": "from-the-service", "PATH": "/usr/bin:/bin"},
    )
    assert result.outcome == "success"
    assert result.stdout_text == "from-the-service"


async def test_detached_child_holding_the_pipe_is_killed_and_output_recorded(
    tmp_path: Path,
) -> None:
    """``setsid`` takes the child out of the CLI's group; it is found by the pipe it holds."""
    pid_file = tmp_path / "detached.pid"
    script = f"setsid sh -c 'echo $$ > {pid_file}; exec sleep 120' & sleep 0.2; echo done"
    started = time.monotonic()
    result = await run_command(["/bin/sh", "-c", script], timeout_seconds=30)
    assert time.monotonic() - started < 5
    assert (result.outcome, result.reason, result.stdout_text) == ("success", None, "done")
    assert process_gone(int(pid_file.read_text()))


async def test_detached_child_holding_only_stderr_is_killed_too(tmp_path: Path) -> None:
    pid_file = tmp_path / "detached.pid"
    script = (
        f"setsid sh -c 'echo $$ > {pid_file}; exec sleep 120' >/dev/null & "
        "sleep 0.2; echo partial; exit 4"
    )
    started = time.monotonic()
    result = await run_command(["/bin/sh", "-c", script], timeout_seconds=30)
    assert time.monotonic() - started < 5
    assert (result.reason, result.stdout_text) == ("exited with code 4", "partial")
    assert process_gone(int(pid_file.read_text()))
