"""One chapter's Markdown -> CommonMark that Colab and JupyterLab render, with the website's
values (glue), links (roles, citations) and numbers (exercises, equations, figures)."""

from __future__ import annotations

import base64
import html
import posixpath
import re

from myst_nb.core.variables import format_plain_text

from scripts.reader import images
from scripts.reader.errors import ReaderNotebookError
from scripts.reader.myst import (
    HEADING,
    ROLE_OR_CODE,
    TARGET,
    Block,
    details,
    escape_markdown,
    parse_blocks,
    quote,
    tidy,
)
from scripts.reader.site import Site

ADMONITIONS = {
    "note": "Note", "tip": "Tip", "hint": "Hint", "important": "Important",
    "warning": "Warning", "caution": "Caution", "attention": "Attention", "danger": "Danger",
    "error": "Error", "seealso": "See also", "admonition": None, "margin": None,
    "sidebar": None, "topic": None,
}
# myst-nb's order of preference (html builder) when {glue} shows "the best" form of a value.
MIME_ORDER = ("text/html", "image/svg+xml", "image/png", "image/gif", "image/jpeg",
              "text/markdown", "text/latex", "text/plain")
CITE_ROLES = {"cite", "cite:p", "cite:t", "cite:ps", "cite:ts", "cite:author", "cite:year"}


class Converter:
    """Turns the Markdown of one chapter into CommonMark, with the website's values and links."""

    def __init__(self, site: Site, page: str):
        self.site = site
        self.page = page
        self.heading_level = 1
        self.exercises: dict[str, str] = {}  # label -> title (Markdown)

    # --- errors and lookups ------------------------------------------------------------------

    def fail(self, message: str):
        raise ReaderNotebookError(f"{self.page}: {message}")

    def glued(self, key: str) -> dict:
        """The stored output of glue(key) ({"data": ..., "metadata": ...}); `doc::key` reads
        another page's."""
        page = self.page
        if "::" in key:
            doc, key = key.split("::", 1)
            page = self.doc_path(doc)
        entry = self.site.glue.get(page, {}).get(key)
        if entry is None:
            self.fail(f"no glued value {key!r} in the build of {page} (glue it in a code cell, "
                      "and build the website before `make notebooks`)")
        return entry

    def glue_bundle(self, key: str) -> dict:
        return self.glued(key)["data"]

    def doc_path(self, target: str) -> str:
        target = target.strip()
        base = posixpath.dirname(self.page)
        path = target[1:] if target.startswith("/") else posixpath.join(base, target)
        path = posixpath.normpath(path)
        for suffix in (".md", ".ipynb"):
            path = path.removesuffix(suffix)
        if path not in self.site.docs:
            self.fail(f"{target!r} is not a page of the website (a {{doc}} or a link)")
        return path

    # --- inline --------------------------------------------------------------------------------

    @staticmethod
    def _title_and_target(content: str) -> tuple[str | None, str]:
        m = re.fullmatch(r"(?s)(?P<title>.*?)\s*<(?P<target>[^<>]+)>", content)
        if m and m["title"]:
            return m["title"], m["target"]
        return None, content

    def role(self, name: str, content: str) -> str:
        if name in ("glue", "glue:", "glue:any"):
            entry = self.glued(content)
            return self.glue_any(entry["data"], inline=True, metadata=entry.get("metadata"))
        if name == "glue:text":
            key, spec = content, "s"
            head, colon, tail = content.rpartition(":")
            if colon and not head.endswith(":"):  # key:spec, not the "::" of doc::key
                key, spec = head, tail
            bundle = self.glue_bundle(key)
            if "text/plain" not in bundle:
                self.fail(f"glued value {key!r} has no text/plain form")
            try:
                return escape_markdown(format_plain_text(bundle["text/plain"], spec))
            except (TypeError, ValueError) as error:
                self.fail(f"{{glue:text}}`{content}`: cannot format the value: {error}")
        if name == "glue:md":
            head, colon, _ = content.rpartition(":")
            key = head if colon and not head.endswith(":") else content
            bundle = self.glue_bundle(key)
            if "text/markdown" not in bundle:
                self.fail(f"glued value {key!r} has no text/markdown form")
            return self.inline(bundle["text/markdown"].strip())
        if name in CITE_ROLES:
            return self.cite(name, content)
        if name == "doc":
            title, target = self._title_and_target(content)
            path = self.doc_path(target)
            title = title or self.site.docs[path]
            return f"[{self.inline(title)}]({self.site.url(path)})"
        if name == "ref":
            title, label = self._title_and_target(content)
            if label not in self.site.labels:
                self.fail(f"{{ref}} names {label!r}, which is no label of the website")
            uri, default = self.site.labels[label]
            return f"[{self.inline(title or default)}]({self.site.url(uri)})"
        if name == "numref":
            title, label = self._title_and_target(content)
            if label not in self.site.numbers:
                self.fail(f"{{numref}} names {label!r}, which the website does not number")
            uri, number = self.site.numbers[label]
            text = number if title is None else title.replace("%s", number.split()[-1]).replace(
                "{number}", number.split()[-1])
            return f"[{self.inline(text)}]({self.site.url(uri)})"
        if name == "eq":
            if content not in self.site.equations:
                self.fail(f"{{eq}} names {content!r}, which is no numbered equation of the "
                          "website")
            uri, number = self.site.equations[content]
            return f"[({number})]({self.site.url(uri)})"
        if name == "math":
            return f"${content}$"
        if name in ("sub", "sup", "kbd", "abbr"):
            tag = {"abbr": "abbr"}.get(name, name)
            return f"<{tag}>{html.escape(content, quote=False)}</{tag}>"
        self.fail(f"the role {{{name}}} has no reader-notebook form (in {{{name}}}`{content}`)")

    def link(self, target: str) -> str:
        """A Markdown link's target: addresses stay; a page of the book ("encoder.md#x") or an
        anchor ("#label") becomes the website's address."""
        if re.match(r"^[a-zA-Z][\w+.-]*:", target):
            return target
        path, _, anchor = target.partition("#")
        if not path:
            if anchor in self.site.labels:
                return self.site.url(self.site.labels[anchor][0])
            return self.site.url(self.page) + f"#{anchor}"
        return self.site.url(self.doc_path(path)) + (f"#{anchor}" if anchor else "")

    def cite(self, name: str, content: str) -> str:
        keys = [k.strip() for k in content.split(",") if k.strip()]
        items = []
        for key in keys:
            if key not in self.site.citations:
                self.fail(f"{{{name}}} cites {key!r}, which is not in the bibliography")
            names, year = self.site.citations[key]
            anchor = self.site.citation_anchors.get(key)
            link = self.site.url(self.site.references_page + (f"#{anchor}" if anchor else ""))
            items.append((names, year, link))
        if name in ("cite:t", "cite:ts"):
            return ", ".join(f"[{n} ({y})]({link})" for n, y, link in items)
        if name == "cite:author":
            return ", ".join(f"[{n}]({link})" for n, _, link in items)
        if name == "cite:year":
            return ", ".join(f"[{y}]({link})" for _, y, link in items)
        return "(" + "; ".join(f"[{n} {y}]({link})" for n, y, link in items) + ")"

    def glue_any(self, bundle: dict, inline: bool, metadata: dict | None = None) -> str:
        """A glued value in its best form, as myst-nb picks it for the website."""
        for mime in MIME_ORDER:
            if mime not in bundle:
                continue
            value = bundle[mime]
            if mime == "text/markdown":
                return self.inline(value.strip()) if inline else self.convert(value)
            if mime == "text/html":
                return value.strip()
            if mime.startswith("image/"):
                data = value if mime != "image/svg+xml" else base64.b64encode(
                    value.encode()).decode()
                return f'<img src="data:{mime};base64,{data.strip()}" alt="" />'
            if mime == "text/latex":
                tex = value.strip().strip("$")
                return f"${tex}$" if inline else f"$$\n{tex}\n$$"
            # text/plain: the website shows it as written (a string keeps its quotes, unless
            # the output asked for them to go), inline as text, as a block in a code block
            if not inline:
                return f"```text\n{value.rstrip()}\n```"
            if (metadata or {}).get("strip_text_quotes") and re.fullmatch(r"(['\"]).*\1", value,
                                                                          re.S):
                value = value[1:-1]
            return escape_markdown(value)
        self.fail(f"a glued value has no form a notebook can show ({sorted(bundle)})")

    def inline(self, text: str) -> str:
        """Roles replaced in running text; code spans kept as written."""

        def replace(match):
            if match["code"]:
                return match["code"]
            if match["link"]:
                return f"]({self.link(match['target'])})"
            return self.role(match["name"], match["content"])

        return ROLE_OR_CODE.sub(replace, text)

    # --- blocks --------------------------------------------------------------------------------

    def text(self, lines: list[str]) -> str:
        out = []
        for line in lines:
            if TARGET.match(line):
                continue  # a (label)= target: the links point to the website
            if line.startswith("%"):
                continue  # a MyST comment
            heading = HEADING.match(line)
            if heading:
                self.heading_level = len(heading["hashes"])
            out.append(line)
        return self.inline("\n".join(out))

    def math(self, lines: list[str], label: str = "") -> str:
        body = "\n".join(lines)
        first, last = body.find("$$"), body.rfind("$$")
        inner = body[first + 2:last]
        return "$$" + self.fix_tex(inner, label) + "$$"

    def fix_tex(self, tex: str, label: str = "") -> str:
        """TeX that MathJax renders in Colab and JupyterLab: no \\label, the website's number as
        \\tag, and a \\tag never inside an environment (MathJax: "\\tag not allowed in ...")."""
        tex = re.sub(r"\\label\{[^{}]*\}", "", tex)
        tags = list(re.finditer(r"\\tag\*?\{[^{}]*\}", tex))
        if label:
            if label not in self.site.equations:
                self.fail(f"equation {label!r} has no number on the website")
            if tags:
                self.fail(f"equation {label!r} has both a label and a \\tag")
            return tex.rstrip() + f" \\tag{{{self.site.equations[label][1]}}}" + (
                "\n" if tex.endswith("\n") else "")
        if len(tags) > 1:
            self.fail(f"one display equation has {len(tags)} \\tag commands: {tex.strip()[:80]}")
        if tags:
            tag = tags[0]
            depth = len(re.findall(r"\\begin\{", tex[:tag.start()])) - len(
                re.findall(r"\\end\{", tex[:tag.start()]))
            if depth > 0:  # inside aligned/split/...: move it to the end of the display
                tex = tex[:tag.start()] + tex[tag.end():]
                tex = re.sub(r"[ \t]+\n", "\n", tex).rstrip() + f"\n{tag.group(0)}\n"
        return tex

    def directive(self, block: Block) -> str:
        name, arg = block.name, block.arg
        content = "\n".join(block.lines)
        if name in ADMONITIONS:
            title = ADMONITIONS[name] or arg or name.capitalize()
            if ADMONITIONS[name] is not None and arg:
                content = arg + "\n" + content  # {note} First line as argument
            return quote(f"**{self.inline(title)}**\n\n" + self.convert(content))
        if name == "exercise":
            label = block.options.get("label", "")
            return self.exercise_heading(label, arg) + "\n\n" + self.convert(content)
        if name == "math":
            label = block.options.get("label", "")
            return "$$\n" + self.fix_tex(content + "\n", label) + "$$"
        if name in ("code-block", "code", "sourcecode"):
            return f"```{arg}\n{content}\n```"
        if name in ("glue", "glue:", "glue:any", "glue:figure", "glue:math", "glue:md"):
            entry = self.glued(arg)
            bundle = entry["data"]
            if name == "glue:math":
                return "$$\n" + self.fix_tex(bundle.get("text/latex", "").strip().strip("$"))\
                    + "\n$$"
            shown = self.glue_any(bundle, inline=False, metadata=entry.get("metadata"))
            caption = self.convert(content).strip()
            return shown + (f"\n\n*{caption}*" if caption else "")
        if name == "figure":
            return self.figure(block)
        if name == "solution":
            return details(self.solution_summary(arg), self.convert(content))
        if name == "dropdown":
            return details(html.escape(arg or "Details", quote=False), self.convert(content))
        self.fail(f"the directive {{{name}}} has no reader-notebook form")

    def figure(self, block: Block) -> str:
        """The website's copy of the image embedded in the notebook (an <img> of a data: URI,
        see `images`, with the figure's alt text), then the caption with the website's figure
        number."""
        name, alt = block.options.get("name", ""), block.options.get("alt", "").strip()
        if not alt:
            self.fail(f"the figure {block.arg!r} has no :alt: text")
        if not name:
            self.fail(f"the figure {block.arg!r} has no :name: (the reader notebook finds the "
                      "website's copy of its image by it)")
        built = next((f for f in self.site.figures.get(self.page, []) if f["id"] == name), None)
        if built is None:
            self.fail(f"the figure {name!r} is not on the built page (build the website before "
                      "`make notebooks`)")
        if self.site.build is None:
            self.fail(f"the figure {name!r} needs the build's copy of its image (no build given)")
        try:
            mime, data, width = images.embedded(self.site.build / "html" / built["src"])
        except ReaderNotebookError as error:
            self.fail(str(error))
        size = f' width="{width}"' if width else ""
        image = f'<img src="data:{mime};base64,{data}" alt="{html.escape(alt)}"{size} />'
        caption = self.convert("\n".join(block.lines)).strip()
        if built["number"]:
            caption = f"**{built['number']}** {caption}".strip()
        return image + (f"\n\n{caption}" if caption else "")

    def exercise_heading(self, label: str, title: str) -> str:
        self.exercises[label] = title
        number = self.site.numbers.get(label, (None, "Exercise"))[1] if label else "Exercise"
        level = min(self.heading_level + 1, 6)
        return "#" * level + " " + number + (f": {self.inline(title)}" if title else "")

    def solution_summary(self, label: str) -> str:
        """The <summary> of a solution: "Solution to Exercise 2 (its title) (click to show)", as
        HTML; the words say that it opens, as the triangle does (see `myst.details`)."""
        if label not in self.site.numbers and label not in self.exercises:
            self.fail(f"a solution names the exercise {label!r}, which this page does not have")
        number = self.site.numbers.get(label, (None, "the exercise"))[1]
        title = self.exercises.get(label, "")
        text = f"<b>Solution to {html.escape(number, quote=False)}</b>"
        if title:
            plain = html.escape(self.inline(title), quote=False)
            plain = re.sub(r"`([^`]+)`", r"<code>\1</code>", plain)
            text += f" ({plain})"
        return text + " <i>(click to show)</i>"

    def convert(self, markdown: str) -> str:
        """One Markdown text (a cell, or a directive's content) in reader form."""
        parts = []
        for block in parse_blocks(markdown):
            if block.kind == "text":
                parts.append(self.text(block.lines))
            elif block.kind == "code":
                parts.append("\n".join(block.lines))
            elif block.kind == "math":
                parts.append(self.math(block.lines, block.label))
            else:
                parts.append(self.directive(block))
        return tidy("\n".join(parts))
