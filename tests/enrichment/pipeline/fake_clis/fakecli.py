"""A misbehaving-on-request CLI for runner tests: ``python fakecli.py MODE [ARGS...]``.

Modes:
  echo WORDS...           print the words joined by spaces
  empty                   print only whitespace
  exit CODE [TEXT]        print TEXT on stdout, "boom" on stderr, exit with CODE
  sleep SECONDS TEXT      sleep, then print TEXT
  fork-hang PIDFILE       fork a child that sleeps 60 s, write its pid, then hang
  fork-exit PIDFILE       fork a child that sleeps 60 s holding stdout, print "done", exit 0
  flood MIB               write MIB MiB of "x" to stdout
  badutf8                 write bytes that are not valid UTF-8
  stderr-flood            write 10 KiB to stderr ending in "END", then exit 3
  log FILE TEXT           append a line to FILE, then print TEXT (may be "")
  selfkill                kill itself with SIGTERM
"""

from __future__ import annotations

import os
import signal
import sys
import time


def fork_sleeper(pid_file: str) -> None:
    child = os.fork()
    if child == 0:
        time.sleep(60)
        os._exit(0)
    with open(pid_file, "w") as handle:
        handle.write(str(child))


def main(argv: list[str]) -> int:
    mode, args = argv[0], argv[1:]
    if mode == "echo":
        print(" ".join(args))
    elif mode == "empty":
        print("   \n\t ")
    elif mode == "exit":
        print(" ".join(args[1:]))
        print("boom", file=sys.stderr)
        return int(args[0])
    elif mode == "sleep":
        time.sleep(float(args[0]))
        print(" ".join(args[1:]))
    elif mode == "fork-hang":
        fork_sleeper(args[0])
        time.sleep(60)
    elif mode == "fork-exit":
        fork_sleeper(args[0])
        print("done", flush=True)
    elif mode == "flood":
        block = b"x" * (1024 * 1024)
        for _ in range(int(args[0])):
            sys.stdout.buffer.write(block)
    elif mode == "badutf8":
        sys.stdout.buffer.write(b"ok \xff\xfe end\n")
    elif mode == "stderr-flood":
        sys.stderr.write("e" * 10240 + "END")
        return 3
    elif mode == "log":
        with open(args[0], "a") as handle:
            handle.write(" ".join(args[1:]) + "|\n")
        print(" ".join(args[1:]))
    elif mode == "selfkill":
        sys.stdout.flush()
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)
    else:
        print(f"unknown mode {mode}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
