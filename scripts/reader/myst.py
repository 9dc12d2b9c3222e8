"""MyST Markdown split into blocks (text, fenced code, `$$` math, directives), and the
CommonMark helpers the conversion writes with (escaping, block quotes, collapsed blocks)."""

from __future__ import annotations

import html
import re

import yaml

from scripts.reader.errors import ReaderNotebookError

FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,}|:{3,})(?P<rest>.*)$")
DIRECTIVE = re.compile(r"^\s*\{(?P<name>[a-zA-Z][\w:.-]*)\}\s*(?P<arg>.*?)\s*$")
_OPTION = re.compile(r"^:(?P<key>[\w-]+):\s*(?P<value>.*?)\s*$")
TARGET = re.compile(r"^\s*\((?P<label>[^()\s]+)\)=\s*$")
ROLE_OR_CODE = re.compile(
    r"(?P<role>\{(?P<name>[a-zA-Z][\w:.-]*)\}`(?P<content>[^`]*)`)"
    r"|(?P<code>(?P<ticks>`+).+?(?<!`)(?P=ticks)(?!`))"
    r"|(?P<link>\]\((?P<target>[^()\s]+)\))", re.S)
HEADING = re.compile(r"^(?P<hashes>#{1,6})\s+\S")
_MATH_LABEL = re.compile(r"\$\$\s*\((?P<label>[^()\s]+)\)\s*$")


class Block:
    """One block of a Markdown text: "text", "code" (a fence), "math" ($$) or "directive"."""

    def __init__(self, kind: str, lines: list[str], name: str = "", arg: str = "",
                 options: dict[str, str] | None = None, label: str = ""):
        self.kind = kind
        self.lines = lines  # text/code/math: the raw lines; directive: its content
        self.name = name  # directive name
        self.arg = arg  # directive argument (its title)
        self.options = options or {}
        self.label = label  # math: the label of a labelled `$$` block


def closing_line(lines: list[str], start: int, char: str, width: int) -> int:
    """The index of the first line from `start` that closes a fence of `width` `char`s, or -1."""
    closer = re.compile(rf"^ {{0,3}}{re.escape(char)}{{{width},}}\s*$")
    for j in range(start, len(lines)):
        if closer.match(lines[j]):
            return j
    return -1


def directive_body(body: list[str]) -> tuple[dict[str, str], list[str]]:
    """Split a directive's options (`:key: value` lines or a `---` YAML block) from its content."""
    options: dict[str, str] = {}
    i = 0
    if body and body[0].strip() == "---":
        end = next((j for j in range(1, len(body)) if body[j].strip() == "---"), -1)
        if end < 0:
            raise ReaderNotebookError("a directive's YAML options (---) are never closed")
        options = {str(k): str(v) for k, v in (yaml.safe_load("\n".join(body[1:end])) or {})
                   .items()}
        i = end + 1
    else:
        while i < len(body) and _OPTION.match(body[i]):
            m = _OPTION.match(body[i])
            options[m["key"]] = m["value"]
            i += 1
    while i < len(body) and not body[i].strip():
        i += 1
    return options, body[i:]


def parse_blocks(text: str) -> list[Block]:
    """Split Markdown into text, fenced code, `$$` math and MyST directive blocks."""
    lines = text.split("\n")
    blocks: list[Block] = []
    i = 0

    def add_text(line):
        if blocks and blocks[-1].kind == "text":
            blocks[-1].lines.append(line)
        else:
            blocks.append(Block("text", [line]))

    while i < len(lines):
        line = lines[i]
        fence = FENCE.match(line)
        if fence:
            char, width = fence["fence"][0], len(fence["fence"])
            end = closing_line(lines, i + 1, char, width)
            directive = DIRECTIVE.match(fence["rest"])
            if directive:
                if end < 0:
                    raise ReaderNotebookError(
                        f"the directive {{{directive['name']}}} opened by {line.strip()!r} is "
                        "never closed")
                options, body = directive_body(lines[i + 1:end])
                blocks.append(Block("directive", body, directive["name"], directive["arg"],
                                    options))
                i = end + 1
                continue
            if char != ":":  # a plain code fence; to the end of the cell if never closed
                stop = len(lines) - 1 if end < 0 else end
                blocks.append(Block("code", lines[i:stop + 1]))
                i = stop + 1
                continue
        stripped = line.strip()
        if stripped.startswith("$$"):
            rest = stripped[2:]
            if "$$" in rest:  # one line: $$ x $$ (label)
                end = i
            else:
                end = next((j for j in range(i + 1, len(lines)) if "$$" in lines[j]), -1)
                if end < 0:
                    raise ReaderNotebookError(f"display math opened by {line.strip()!r} is "
                                              "never closed with $$")
            math_lines = lines[i:end + 1]
            label = ""
            m = _MATH_LABEL.search(math_lines[-1])
            if m and math_lines[-1].rstrip().endswith(")"):
                label = m["label"]
                math_lines[-1] = math_lines[-1][:m.start()] + "$$"
            blocks.append(Block("math", math_lines, label=label))
            i = end + 1
            continue
        add_text(line)
        i += 1
    return blocks


def escape_markdown(text: str) -> str:
    """Text that Markdown shows as written (a glued string can hold `<eos>` or `*`)."""
    text = html.escape(text, quote=False)
    return re.sub(r"([\\`*_\[\]$|])", r"\\\1", text)


def tidy(text: str) -> str:
    """At most one blank line in a row outside fenced code (code keeps its own), none at the
    ends."""
    out: list[str] = []
    fence = ""
    for line in text.split("\n"):
        opening = FENCE.match(line)
        if fence:
            if re.match(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}\s*$", line):
                fence = ""
        elif opening and opening["fence"][0] != ":":
            fence = opening["fence"]
        elif not line.strip() and out and not out[-1].strip():
            continue
        out.append(line if line.strip() or fence else "")
    return "\n".join(out).strip("\n")


def quote(markdown: str) -> str:
    """A Markdown block quote; each `$$` display is put on one line, because JupyterLab reads the
    math before the Markdown and would otherwise see the `> ` marks inside the TeX."""
    def one_line(match):
        return "$$" + " ".join(part.strip() for part in match.group(1).split("\n")) + "$$"

    markdown = re.sub(r"\$\$(.+?)\$\$", one_line, markdown, flags=re.S)
    return "\n".join(f"> {line}" if line.strip() else ">" for line in markdown.split("\n"))


# The classic Notebook styles <summary> `display: block` (normalize.css), which hides the
# disclosure triangle, and its sanitizer drops any style; its own jQuery UI theme draws this
# icon, a right-pointing triangle, where no other front end has that theme and the empty
# <span> shows nothing beside their own triangle (and says nothing to a screen reader).
CLASSIC_MARKER = '<span class="ui-icon ui-icon-triangle-1-e"></span>'


def details(summary_html: str, markdown: str) -> str:
    """A collapsed block, its summary led by the classic Notebook's ▶ (`CLASSIC_MARKER`). The
    blank line after </summary> makes Colab and JupyterLab read the inside as Markdown (code,
    maths), not as raw HTML."""
    return (f"<details>\n<summary>{CLASSIC_MARKER}{summary_html}</summary>\n\n"
            f"{markdown.strip()}\n\n</details>")
