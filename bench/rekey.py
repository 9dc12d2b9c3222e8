"""Re-key BENCHMARKS.md once, when the key's formula changes but not what the report measured.

The reference key hashes the settings, the corpus, torch and `lib.train.TRAINING_VERSION`
(docs/decisions.md). When that formula changes, a report measured under the other formula
describes the same settings and the same training behaviour, yet names a key that does not
exist, and tests/test_bench_report.py rightly fails on it. This script replaces the key
line and says, in the report, what was and was not re-measured; it refuses when the report's
settings are not the current ones. A full `make bench` replaces the whole report.

    python -m bench.rekey --old 71ebfafbf7db18c7 --why "the key's formula changed"
"""

from __future__ import annotations

import argparse
import datetime
import re
from pathlib import Path

from bench.report import KEY_LINE
from lib.course import reference

ROOT = Path(__file__).resolve().parents[1]
NOTE = ("> Re-keyed on {date} from `{old}`: {why}. The figures below were measured under the old "
        "key with the same settings ({settings}) and the same training behaviour, and were not "
        "measured again; the reference model itself was retrained under the new key. `make bench` "
        "replaces this report.")


def settings_text() -> str:
    """The reference settings as the report's training section prints them."""
    return ", ".join(f"{k}={v}" for k, v in reference.MODEL.items())


def rekey(text: str, old: str, new: str, why: str, date: str) -> str:
    """The report with its key line naming `new`, and a note saying why; refuses a mismatch."""
    line = KEY_LINE.format(key=old)
    if line not in text:
        raise SystemExit(f"the report does not name key {old}: nothing to re-key")
    if settings_text() not in text:
        raise SystemExit(f"the report's settings are not the current ones ({settings_text()}): "
                         f"its figures describe another model; run `make bench`")
    text = re.sub(r"\n> Re-keyed on [^\n]*\n", "\n", text)  # at most one note
    head, tail = text.split(line, 1)
    end = tail.index("\n")
    note = NOTE.format(date=date, old=old, why=why, settings=settings_text())
    return f"{head}{KEY_LINE.format(key=new)}{tail[:end]}\n\n{note}{tail[end:]}"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", required=True, help="the key the report names now")
    parser.add_argument("--why", required=True, help="why the key changed")
    parser.add_argument("--out", type=Path, default=ROOT / "BENCHMARKS.md")
    args = parser.parse_args(argv)
    date = datetime.date.today().isoformat()
    text = args.out.read_text(encoding="utf-8")
    args.out.write_text(rekey(text, args.old, reference.reference_key(), args.why, date),
                        encoding="utf-8")
    print(f"{args.out}: key {args.old} -> {reference.reference_key()}")


if __name__ == "__main__":
    main()
