"""Fake openai-whisper: writes ``{output_dir}/{basename}.txt`` for the media path."""

from __future__ import annotations

import os
import sys


def main(args: list[str]) -> int:
    media = args[-1]
    out_dir = args[args.index("--output_dir") + 1]
    stem = os.path.splitext(os.path.basename(media))[0]
    with open(os.path.join(out_dir, stem + ".txt"), "w", encoding="utf-8") as handle:
        handle.write(f"whisper transcript of {stem}\n")
    print("Detecting language using up to the first 30 seconds.")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
