"""`python -m pywebbench.report.pages [DOCS] [--check]`: write (or check) the docs pages."""

from __future__ import annotations

import sys
from pathlib import Path

from pywebbench.core.errors import UserError
from pywebbench.report.pages import build, stale


def main(argv: list[str]) -> int:
    """0 written (or current), 1 some page out of date (--check), 2 a committed results file is unreadable."""
    try:
        return _main(argv)
    except UserError as error:
        print(f"scripts/docs: {error}", file=sys.stderr)
        return 2


def _main(argv: list[str]) -> int:
    check = "--check" in argv
    args = [a for a in argv if a != "--check"]
    docs = Path(args[0]) if args else Path("docs")
    if check:
        out_of_date = stale(docs)
        for path in out_of_date:
            print(f"{path}: differs from what docs/results renders to; run scripts/docs", file=sys.stderr)
        return 1 if out_of_date else 0
    for path, text in build(docs).items():
        path.write_text(text)
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
