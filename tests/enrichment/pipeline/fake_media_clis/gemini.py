"""Fake Gemini CLI: answers the ``--output-format json ok`` probe and describes media as JSON."""

from __future__ import annotations

import json
import os
import sys


def main(args: list[str]) -> int:
    if args == ["--output-format", "json", "ok"]:
        print(json.dumps({"response": "ok"}))
        return 0
    prompt = args[6]
    media = args[7].split("read ", 1)[1].split(" and respond", 1)[0]
    print("Loaded cached credentials.")
    print(json.dumps({"response": f"gemini: {prompt} [{os.path.basename(media)}]"}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
