"""A link CLI for service tests: ``python summarizer.py URL`` — behaviour chosen by the URL path.

/fail → exits 3 with "upstream broke" on stderr; /empty → prints nothing; /slow → sleeps 1 s;
/nul → a summary with NUL characters in it (PostgreSQL refuses NUL in text columns);
anything else → prints "Summary of URL".
"""

from __future__ import annotations

import sys
import time


def main(url: str) -> int:
    if url.endswith("/fail"):
        sys.stderr.write("upstream broke\n")
        return 3
    if url.endswith("/empty"):
        return 0
    if url.endswith("/nul"):
        print(f"Summary\x00 of {url}\x00")
        return 0
    if url.endswith("/slow"):
        time.sleep(1)
    print(f"Summary of {url}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
