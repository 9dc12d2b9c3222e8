"""Reader notebooks: each chapter as Google Colab and JupyterLab show it.

The chapters are MyST Markdown notebooks that only Jupyter Book renders: glue roles stand where
the numbers go, citations and cross-references are roles, exercises and admonitions are
directives, solutions are code cells between `solution-start` and `solution-end`. This package
turns each chapter of `_toc.yml` into a plain notebook (`<out>/<chapter>.ipynb`, flat, one per
chapter) from the executed build (myst-nb's copy of each chapter, so that the text and the
glued values belong together) and the website:

- glue roles become the values the build computed (`_build/jupyter_execute/book/<chapter>
  .glue.json`, where myst-nb stores every glued value), formatted as the role says;
- citations become "Cho et al. (2014)" / "(Cho et al. 2014)" linked to the website's
  references page; {doc}, {ref}, {numref} and {eq} become links to the website's pages, with
  the titles and numbers the website shows (its objects.inv and HTML);
- admonitions become quoted blocks with a bold title, exercises numbered headings
  ("Exercise 3: ..."), `{math}` and labelled `$$` blocks plain `$$` math with the website's
  number as `\\tag`, and a `\\tag` inside `aligned`/`split` (a MathJax error) moves outside it;
- a `{figure}` becomes an `<img>` embedding the build's copy of the image (the built page says
  where Sphinx put it, e.g. `_images/encoder_grid.svg`) as a data: URI, with the figure's alt
  text, and its caption with the website's number below: the notebook is whole on its own,
  offline or before the website is deployed. An SVG is drawn into a PNG first (`images`): Colab
  shows no SVG given as a data: URI and no cell attachment (googlecolab/colabtools#2092, #3836);
- each solution (code and text) becomes one Markdown cell holding a `<details>` block: it is
  collapsed in Colab, JupyterLab and the classic Notebook, and no front end runs Markdown, so
  Run All never runs a solution. Its summary starts with an icon only the classic Notebook
  draws (`myst.CLASSIC_MARKER`), the disclosure triangle its CSS hides. (A Colab form cell,
  `cellView: form`, only hides code: Colab still runs it with Run All, and JupyterLab ignores
  that metadata and shows it.)
- code cells keep their code and lose their outputs; `glue(...)` statements, which only feed
  the website's text, are removed (the `glue` import, and the computations that only fed them,
  with them); cells tagged `remove-cell` are website machinery and are left out (an error if a
  later cell needs what one defines), except the Colab setup cell, which comes first, and cells
  also tagged `reader-only` (live views, whose controls need a kernel), which stay; a
  `remove-input`/`hide-input` cell keeps its code, collapsed.

The website's address is `lib/course/links.py`'s `website()` of the repository URL in `_config.yml`
(through `scripts.colab_setup.website_url`): that derivation is written once, there. The same
input gives the same bytes.

Its steps, one module each: `site` reads what the build knows, `myst` splits MyST Markdown into
blocks, `convert` turns a chapter's Markdown into CommonMark (`images` embeds the figures),
`names` and `glue` take the glue() calls out of the code, `notebook` assembles one chapter,
`book` writes them all. The command line is `python -m scripts.reader_notebooks`
(`make notebooks`).
"""

from scripts.reader.book import executed_chapter, render_all, write_notebooks
from scripts.reader.convert import Converter
from scripts.reader.errors import ReaderNotebookError
from scripts.reader.glue import glue_inputs, prune_glue_leftovers, strip_glue
from scripts.reader.myst import escape_markdown
from scripts.reader.notebook import reader_notebook
from scripts.reader.site import Site, load_figures, load_site

__all__ = ["Converter", "ReaderNotebookError", "Site", "escape_markdown", "executed_chapter",
           "glue_inputs", "load_figures", "load_site", "prune_glue_leftovers", "reader_notebook",
           "render_all", "strip_glue", "write_notebooks"]
