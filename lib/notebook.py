"""`glue`: how a chapter hands a computed number to its text, in the book and in Colab alike.

The website is built with myst-nb, whose `glue(name, value)` stores a value so that the prose
can show it ({glue:text}`name`): every number in the text comes from the code above it.
Colab does not have myst-nb (and installing it would pull in Sphinx and replace some of
Colab's packages), so there this `glue` only shows the value when asked to; the prose around
it is plain Markdown in Colab anyway.
"""

from __future__ import annotations


def glue(name: str, value, display: bool = True) -> None:
    """myst-nb's glue when it is installed; otherwise display `value` if `display` is true."""
    try:
        from myst_nb import glue as myst_glue
    except ImportError:
        if display:
            from IPython.display import display as show

            show(value)
        return
    myst_glue(name, value, display=display)
