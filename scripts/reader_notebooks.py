"""Reader notebooks: each chapter as Google Colab and JupyterLab show it.

The command line of the `scripts.reader` package, which does the conversion: every chapter of
`_toc.yml`, from the strict build. After the build (`make notebooks`):

    python -m scripts.reader_notebooks --out _build/notebooks [--build _build]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scripts.reader import ReaderNotebookError, write_notebooks
from scripts.reader.site import BUILD


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=BUILD / "notebooks",
                        help="where to write <chapter>.ipynb (default: _build/notebooks)")
    parser.add_argument("--build", type=Path, default=BUILD,
                        help="the strict build's directory (default: _build)")
    args = parser.parse_args(argv)
    try:
        written = write_notebooks(args.out, args.build)
    except (ReaderNotebookError, FileNotFoundError) as error:
        print(f"reader notebooks: {error}", file=sys.stderr)
        return 1
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
