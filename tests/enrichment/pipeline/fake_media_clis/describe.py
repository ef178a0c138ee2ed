"""Generic fake describer: ``describe.py [--sleep S] [--exit N] [--log FILE] TEXT...``.

Prints TEXT (may be empty) after sleeping S seconds; appends "start"/"end" lines to FILE.
"""

from __future__ import annotations

import sys
import time


def main(args: list[str]) -> int:
    sleep, code, log = 0.0, 0, None
    while args and args[0].startswith("--"):
        flag, value, args = args[0], args[1], args[2:]
        if flag == "--sleep":
            sleep = float(value)
        elif flag == "--exit":
            code = int(value)
        elif flag == "--log":
            log = value
    if log:
        with open(log, "a", encoding="utf-8") as handle:
            handle.write("start\n")
    time.sleep(sleep)
    if log:
        with open(log, "a", encoding="utf-8") as handle:
            handle.write("end\n")
    print(" ".join(args))
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
