"""Beam explorer: the tree of hypotheses that beam search considered, step by step.

    beam_explorer(model, "I am cold.", beam_size=3)

Drawn from `lib.search.beam_search(..., trace=True).trace`: every step's 2k best candidates,
which stayed in the beam (blue), which were pruned (grey, dashed: beyond the k best, or too far
below the step's best with the default pruning margin), which ended with <eos>
(purple), the winner's path (green) and, beside it, the path greedy search takes (orange).
"""

from __future__ import annotations

import math

from lib.search import normalize
from lib.widgets.render import View, button_group, esc, fmt, header, short, slider
from lib.widgets.trace import BeamCapture, capture_beam

BW, BH, DX, DY = 72, 32, 86, 40  # node box width/height, column and row spacing
ML, TOP = 8, 8  # the tree's left and top margins
GREEDY_GAP = 26  # between the tree's lowest row and the greedy strip
BOX_CHARS = 10  # a token's characters that fit a box



def _layout(nodes: list[dict]) -> dict[int, tuple[float, float]]:
    """(x, y) of every node: one column per step, children grouped under their parent's row
    order and sorted by log-probability, so the tree's branches cross as little as possible."""
    by_step: dict[int, list[dict]] = {}
    for n in nodes:
        by_step.setdefault(n["step"], []).append(n)
    row: dict[int, int] = {}
    pos = {}
    for step in sorted(by_step):
        column = sorted(by_step[step], key=lambda n: (row.get(n["parent"], 0), -n["raw"]))
        for r, n in enumerate(column):
            row[n["id"]] = r
            pos[n["id"]] = (ML + step * DX, TOP + r * DY)
    return pos


def _path_ids(nodes: dict[int, dict], node_id: int) -> list[int]:
    ids = []
    while node_id is not None:
        ids.append(node_id)
        node_id = nodes[node_id]["parent"]
    return ids[::-1]


def _tokens(nodes: dict[int, dict], node_id: int) -> list[str]:
    return [nodes[i]["text"] for i in _path_ids(nodes, node_id)[1:]]


def _captions(cap: BeamCapture, nodes: list[dict], by_id: dict[int, dict]) -> list[str]:
    """One sentence per step that says what happened, for the readout under the slider."""
    t = cap.trace
    out = [f"Step 0: the beam holds a single hypothesis, &lt;sos&gt;. Each step extends every "
           f"live hypothesis by every token and keeps the {t['beam_size']} most probable"
           + ("." if t.get("margin") is None else
              f", unless they fall more than {t['margin']:g} below the step's best.")]
    best = None
    for step in range(1, 1 + max(n["step"] for n in nodes)):
        here = [n for n in nodes if n["step"] == step]
        count = {s: sum(n["status"] == s for n in here) for s in ("kept", "finished", "pruned")}
        for n in here:
            if n["status"] == "finished" and (best is None or n["score"] > best["score"]):
                best = n
        text = (f"Step {step}: of the {len(here)} best candidates, {count['kept']} stay in the "
                f"beam, {count['finished']} finished, {count['pruned']} pruned.")
        if best is not None:
            words = esc(" ".join(_tokens(by_id, best["id"])))
            text += f" Best finished so far: «{words}» (score {fmt(best['score'])})."
        out.append(text)
    last = len(out) - 1
    if last == t["max_len"]:
        out[-1] += " The length cap is reached: what is still in the beam counts as finished."
    elif any(n["status"] == "kept" for n in nodes if n["step"] == last):
        out[-1] += (" The search stops: no hypothesis left in the beam can beat the best "
                    "finished one any more, however it continues.")
    return out


def _node(n: dict, x: float, y: float, cls: str) -> str:
    status = n["status"] if n["text"] == "<eos>" or n["status"] != "finished" \
        else "finished at the length cap"
    tip = f"{n['text']} · {status} · log P {n['raw']:.3f} · score {n['score']:.3f}"
    return (f'<g class="node {cls}" data-step="{n["step"]}" transform="translate({x} {y})">'
            f'<title>{esc(tip)}</title><rect width="{BW}" height="{BH}" rx="5"/>'
            f'<text x="{BW / 2}" y="13">{esc(short(n["text"], BOX_CHARS))}</text>'
            f'<text class="sc" x="{BW / 2}" y="26" data-norm="{fmt(n["score"])}">'
            f'{fmt(n["raw"])}</text></g>')


def _curve(x1, y1, x2, y2) -> str:
    mx = (x1 + x2) / 2
    return f"M{x1:g} {y1:g}C{mx:g} {y1:g} {mx:g} {y2:g} {x2:g} {y2:g}"


def _edge(x1, y1, x2, y2, cls: str, step: int) -> str:
    return f'<path class="{cls}" data-step="{step}" d="{_curve(x1, y1, x2, y2)}"/>'


def _edges(nodes: list[dict], pos: dict, win_path: set) -> list[str]:
    """Edges parent -> child, one <path> per (step, status): shown and hidden together."""
    groups: dict[tuple[int, str], list[str]] = {}
    for n in nodes:
        if n["parent"] is None:
            continue
        (px, py), (x, y) = pos[n["parent"]], pos[n["id"]]
        cls = f"edge {n['status']}" + (" win" if n["id"] in win_path else "")
        groups.setdefault((n["step"], cls), []).append(_curve(px + BW, py + BH / 2, x,
                                                              y + BH / 2))
    return [f'<path class="{cls}" data-step="{step}" d="{"".join(d)}"/>'
            for (step, cls), d in groups.items()]


def _tree(cap: BeamCapture, nodes: list[dict], by_id: dict[int, dict], last: int) -> str:
    """The tree's SVG: edges, then the boxes, the G marks of greedy's path, the greedy strip."""
    alpha = cap.trace["alpha"]
    pos = _layout(nodes)
    win_path = set(_path_ids(by_id, cap.trace["winner"]))
    # tree nodes on greedy's path: the node whose tokens are greedy's first `step` tokens
    greedy_ids = {n["id"] for n in nodes
                  if n["step"] and _tokens(by_id, n["id"]) == cap.greedy[:n["step"]]}
    rows = max(sum(n["step"] == s for n in nodes) for s in range(last + 1))
    gy = TOP + rows * DY + GREEDY_GAP  # the greedy strip under the tree
    width = ML + max(last, len(cap.greedy)) * DX + BW + 12
    height = gy + BH + 10
    parts = _edges(nodes, pos, win_path)  # under the boxes
    for n in nodes:
        x, y = pos[n["id"]]
        cls = "root" if n["parent"] is None else n["status"]
        cls += " win" if n["id"] in win_path else ""
        parts.append(_node(n, x, y, cls))
        if n["id"] in greedy_ids:
            parts.append(f'<g data-step="{n["step"]}"><title>on greedy\'s path</title>'
                         f'<circle class="gb" cx="{x + BW - 2}" cy="{y + 2}" r="6"/>'
                         f'<text x="{x + BW - 2}" y="{y + 5}">G</text>'
                         f"</g>")
    # the greedy strip: greedy's tokens with the running log P (or score)
    parts.append(f'<text class="glabel" x="{ML}" y="{gy + BH / 2 + 4}">greedy →</text>')
    raw = 0.0
    for i, (tok, lp) in enumerate(zip(cap.greedy, cap.greedy_logp), start=1):
        raw += lp
        x = ML + i * DX
        if i > 1:
            parts.append(_edge(x - DX + BW, gy + BH / 2, x, gy + BH / 2, "gedge", i))
        tip = f"greedy step {i}: {tok} · P = {math.exp(lp):.3f}"
        parts.append(
            f'<g class="gnode" data-step="{i}" transform="translate({x} {gy})">'
            f'<title>{esc(tip)}</title><rect width="{BW}" height="{BH}" rx="5"/>'
            f'<text x="{BW / 2}" y="13">{esc(short(tok, BOX_CHARS))}</text>'
            f'<text class="sc" x="{BW / 2}" y="26" '
            f'data-norm="{fmt(normalize(raw, i, alpha))}">{fmt(raw)}</text></g>')
    return (f'<div class="s2s-scroll"><svg class="s2s-fig s2s-tree final" '
            f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
            f'style="max-width:none" role="img" aria-label="beam search tree">'
            + "".join(parts) + "</svg></div>")


def _finished_table(nodes: list[dict], by_id: dict[int, dict], winner: int) -> str:
    """The finished hypotheses, best score first, the winner starred."""
    finished = sorted((n for n in nodes if n["status"] == "finished"), key=lambda n: -n["score"])
    table = ['<table><tr><th class="l">finished hypothesis</th><th>step</th>'
             '<th>log P</th><th>score</th><th></th></tr>']
    for n in finished:
        win = n["id"] == winner
        table.append(
            f'<tr data-step="{n["step"]}"{" class=win" if win else ""}><td class="l">'
            f'{esc(" ".join(_tokens(by_id, n["id"])))}</td><td>{n["step"]}</td>'
            f'<td>{fmt(n["raw"], 3)}</td><td>{fmt(n["score"], 3)}</td>'
            f'<td>{"★ winner" if win else ""}</td></tr>')
    return "".join(table) + "</table>"


def _summary(cap: BeamCapture, win: dict) -> str:
    """Beam's and greedy's outputs with their log P and score, and which one won and why."""
    k, alpha = cap.trace["beam_size"], cap.trace["alpha"]
    g_raw = sum(cap.greedy_logp)
    verdict = ("Beam and greedy agree." if cap.translation == cap.greedy_translation else
               "Beam search found a more probable sentence than greedy."
               if win["raw"] > g_raw else
               "Beam's winner is less probable than greedy's output but scores higher once "
               "normalised by length.")
    return (f'<p class="s2s-summary"><b style="color:var(--win)">Beam</b> (k = {k}, α = '
            f'{alpha:g}): «{esc(cap.translation)}» · log P = {fmt(win["raw"], 3)} · score = '
            f'{fmt(win["score"], 3)}<br><b style="color:var(--greedy)">Greedy</b>: '
            f'«{esc(cap.greedy_translation)}» · log P = {fmt(g_raw, 3)} · score = '
            f'{fmt(cap.greedy_score, 3)}<br>{verdict}</p>')


def _legend() -> str:
    key = "".join(
        f'<span class="s2s-key"><i style="border-color:var(--{c});background:var(--{c}-bg)'
        f'{";border-style:dashed" if c == "prune" else ""}"></i>{name}</span>'
        for c, name in (("keep", "in the beam"), ("prune", "pruned"), ("fin", "finished"),
                        ("win", "winner's path")))
    return key + ('<span class="s2s-key"><span class="s2s-dot" style="background:var(--greedy)">'
                  "</span>G: on greedy's path</span>")


def _controls(last: int) -> str:
    return (slider("step", 0, last, last, "step") + '<span class="s2s-js s2s-stepval"></span>'
            '<label class="s2s-js"><input type="checkbox" data-toggle="pruned" checked> show '
            "pruned</label>"
            + button_group("score", [("raw", "log P"), ("norm", "log P / L^α")], "raw",
                           "scores:"))


class BeamView(View):
    """The beam explorer of one search (see `beam_explorer`)."""

    kind = "beam"
    scripts = styles = ("beam",)  # static/beam.js, static/beam.css

    def __init__(self, cap: BeamCapture):
        t = cap.trace
        nodes, k, alpha, margin = t["nodes"], t["beam_size"], t["alpha"], t.get("margin")
        by_id = {n["id"]: n for n in nodes}
        last = max(n["step"] for n in nodes)
        title = "Beam search" + (f" on «{esc(cap.sentence)}»" if cap.sentence else "")
        pruning = ("" if margin is None else
                   f", minus those more than {margin:g} below the step's best (pruned)")
        body = (
            header(title)
            + f'<p class="s2s-sub">Every step keeps the {k} best hypotheses by log P{pruning}; a '
            f"hypothesis that ends with &lt;eos&gt; leaves the beam and is scored by "
            f"log P / L^α (L = its length, α = {alpha:g}). Boxes show a token and the log P of "
            f"the hypothesis ending there.</p>"
            f'<div class="s2s-bar">{_controls(last)}</div><div>{_legend()}</div>'
            f"{_tree(cap, nodes, by_id, last)}"
            f'<div class="s2s-readout s2s-beamout"></div>{_summary(cap, by_id[t["winner"]])}'
            f'{_finished_table(nodes, by_id, t["winner"])}'
            '<noscript><p class="s2s-note">JavaScript is off: the whole search is shown; the '
            "step slider and the toggles need JavaScript.</p></noscript>")
        data = {"steps": last, "dx": DX, "ml": ML, "bw": BW,
                "captions": _captions(cap, nodes, by_id)}
        super().__init__(body, data, f"Beam search: {cap.sentence}".rstrip(": "), cap)


def beam_explorer(model, sentence: str = "", beam_size: int = 3, alpha: float | None = None,
                  max_len: int | None = None) -> BeamView:
    """Run beam search on `sentence` with a trace and draw its tree (alpha None: the default
    of `lib.search`). The winner is what `model.translate([sentence], beam_size, ...)` gives.

    `model` may also be a `lib.toy.TableModel` (no sentence needed): the chapter's hand-set
    probability tables, e.g. `beam_explorer(TableModel(walkthrough_table()), beam_size=2)`.
    """
    from lib.search import DEFAULT_ALPHA

    alpha = DEFAULT_ALPHA if alpha is None else alpha
    return BeamView(capture_beam(model, sentence, beam_size, alpha, max_len))
