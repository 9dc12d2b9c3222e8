"""`glue`: how a chapter hands a computed number to its text, in the book and in Colab alike.

The website is built with myst-nb, whose `glue(name, value)` stores a value so that the prose
can show it ({glue:text}`name`): every number in the text comes from the code above it.
Readers never meet it: their notebooks (scripts/reader_notebooks.py) carry the built values in
the text and leave the glue() calls out. Where a chapter source runs without myst-nb (a kernel
that lacks it, such as bench/gpu_chapters.py's or Colab's, which would lose some of its own
packages to Sphinx), this `glue` only shows the value when asked to.
"""

from __future__ import annotations

import inspect

import IPython.display

# The longest sentence a chapter may generate from its numbers: a reader parses it once.
MAX_WORDS = 40


def glue(name: str, value, display: bool = True) -> None:
    """myst-nb's glue when it is installed; otherwise display `value` if `display` is true.

    Text longer than `MAX_WORDS` words is refused, so that no page shows a generated sentence a
    reader has to parse twice: the build fails and names it.
    """
    words = len(value.split()) if isinstance(value, str) else 0  # "-1.7" is one word
    if words > MAX_WORDS:
        raise ValueError(f"glue {name!r}: {words} words, more than the {MAX_WORDS} a generated "
                         f"sentence may have: {value!r}")
    try:  # myst-nb is optional (Sphinx): the website's build has it, Colab's kernel does not
        from myst_nb import glue as myst_glue
    except ImportError:
        if display:
            IPython.display.display(value)
        return
    myst_glue(name, value, display=display)


def show_source(*objs) -> None:
    """Show the real source code of `lib` functions or classes, so the page never drifts from it."""
    for obj in objs:
        IPython.display.display(IPython.display.Code(inspect.getsource(obj), language="python"))
