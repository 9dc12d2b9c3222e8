"""A figure's image embedded in a reader notebook, so the notebook is whole on its own.

Every front end shows a PNG given as a data: URI in a Markdown cell's <img>; an SVG given that
way or as a cell attachment is shown by JupyterLab but not by Colab (googlecolab/colabtools#2092,
#3836), and the classic Notebook's sanitizer drops an inline <svg>. So an SVG figure is drawn
into a PNG (resvg, at twice its size for sharp text on high-density screens) and shown at its
own size; a PNG, JPEG or GIF figure is embedded as it is.
"""

from __future__ import annotations

import base64
import struct
from pathlib import Path

import resvg_py

from scripts.reader.errors import ReaderNotebookError

SCALE = 2  # pixels of the PNG per CSS pixel of the figure
_RASTER = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif"}


def png_size(png: bytes) -> tuple[int, int]:
    """(width, height) in pixels, from the PNG's header (its IHDR chunk)."""
    if png[:8] != b"\x89PNG\r\n\x1a\n" or png[12:16] != b"IHDR":
        raise ReaderNotebookError("not a PNG image")
    return struct.unpack(">II", png[16:24])


def embedded(path: Path) -> tuple[str, str, int | None]:
    """(mime type, base64 data, width to show it at in CSS pixels, or None) of the image file at
    `path`, for an <img src="data:..."> that needs no file beside the notebook."""
    suffix = path.suffix.lower()
    if not path.is_file():
        raise ReaderNotebookError(f"the figure's image {path} is missing (build the website "
                                  "before `make notebooks`)")
    if suffix == ".svg":
        try:
            png = bytes(resvg_py.svg_to_bytes(svg_path=str(path), zoom=SCALE))
        except ValueError as error:  # resvg's word for a malformed SVG
            raise ReaderNotebookError(f"cannot draw the figure {path}: {error}") from error
        return "image/png", base64.b64encode(png).decode(), png_size(png)[0] // SCALE
    if suffix in _RASTER:
        return _RASTER[suffix], base64.b64encode(path.read_bytes()).decode(), None
    raise ReaderNotebookError(f"the figure {path} is neither SVG, PNG, JPEG nor GIF: a reader "
                              "notebook cannot embed it")
