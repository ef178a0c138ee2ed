"""Fake whisper.cpp: ``-of BASE -otxt ... MEDIA`` writes BASE.txt and prints nothing useful."""

from __future__ import annotations

import os
import sys


def main(args: list[str]) -> int:
    media = args[-1]
    base = args[args.index("-of") + 1] if "-of" in args else None
    if not os.path.isfile(media):
        print(f"error: cannot open {media}", file=sys.stderr)
        return 2
    size = os.path.getsize(media)
    text = f"whisper-cli heard {os.path.basename(media)} ({size} bytes)"
    if base and "-otxt" in args:
        with open(base + ".txt", "w", encoding="utf-8") as handle:
            handle.write("  " + text + "\n")
    print("[progress] done")  # stdout noise the transcript file must win over
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
