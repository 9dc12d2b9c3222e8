"""BLEU explorer: which n-grams of a translation match its references, and how they add up.

    bleu_explorer("the cat sat on the mat", ["the cat is on the mat", "a cat sat on the mat"])
    bleu_explorer([hyp1, hyp2], [[ref1a, ref1b], [ref2]])          # corpus BLEU

Every number comes from `lib.bleu` (clipped matches, brevity penalty, `bleu_from_counts`), so the
score shown is exactly `lib.bleu.sentence_bleu` (one sentence) or `corpus_bleu` (a list), which
equal sacrebleu's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lib import bleu
from lib.widgets.render import View, button_group, esc, header
from lib.widgets.trace import Record


@dataclass
class BleuTrace(Record):
    """Everything the explorer shows, from `lib.bleu`'s pieces.

    marks[s]["hyp"][n-1][i] says how hypothesis token i of sentence s takes part in the n-grams
    of order n: "m" covered by a credited n-gram, "x" only by n-grams beyond the clip limit,
    "" by no matching n-gram; marks[s]["refs"][r][n-1][j] likewise for reference token j
    ("m": part of an occurrence of a credited n-gram).
    """

    hypotheses: list[str]
    references: list[list[str]]
    hyp_tokens: list[list[str]]
    ref_tokens: list[list[list[str]]]
    marks: list[dict]
    details: list[list[list]]  # [order][i] = (n-gram text, count, max ref count, clipped), summed
    counts: list[int]  # clipped matches per order (corpus total)
    totals: list[int]
    sys_len: int
    ref_len: int
    ref_lens: list[list[int]]  # per sentence, the lengths of its references
    closest: list[int]  # per sentence, the reference length BP compares with
    result: dict = field(default_factory=dict)  # lib.bleu.BLEUResult fields
    signature: str = ""
    corpus: bool = False
    sentence_scores: list[float] = field(default_factory=list)


def _marks(hyp: list[str], refs: list[list[str]], order: int) -> dict:
    hyp_marks, ref_marks = [], [[] for _ in refs]
    for n in range(1, order + 1):
        clip = bleu.clipped_matches(hyp, refs, n)
        limit = {d.ngram: d.max_ref_count for d in clip.details}
        used: dict = {}
        row = [""] * len(hyp)
        for i in range(len(hyp) - n + 1):  # the first `limit` occurrences earn credit
            gram = tuple(hyp[i:i + n])
            if not limit.get(gram):
                continue
            credited = used.get(gram, 0) < limit[gram]
            used[gram] = used.get(gram, 0) + 1
            for j in range(i, i + n):
                if credited:
                    row[j] = "m"
                elif not row[j]:
                    row[j] = "x"
        hyp_marks.append(row)
        matched = {d.ngram for d in clip.details if d.clipped}
        for r, ref in enumerate(refs):
            rrow = [""] * len(ref)
            for i in range(len(ref) - n + 1):
                if tuple(ref[i:i + n]) in matched:
                    rrow[i:i + n] = ["m"] * n
            ref_marks[r].append(rrow)
    return {"hyp": hyp_marks, "refs": ref_marks}


def bleu_breakdown(hypotheses: str | list[str], references: list[str] | list[list[str]],
                   max_order: int = bleu.MAX_ORDER, tokenize: str = "13a",
                   lowercase: bool = False, smooth_method: str = "exp",
                   smooth_value: float | None = None,
                   use_effective_order: bool | None = None) -> BleuTrace:
    """BLEU of one sentence (`hypotheses` a str, `references` its list of references) or of a
    corpus (lists), piece by piece. Defaults follow `sentence_bleu` and `corpus_bleu`:
    the effective order is used for one sentence only."""
    corpus = not isinstance(hypotheses, str)
    if not corpus:
        if isinstance(references, str):
            raise TypeError("references must be a list of reference strings, not one string")
        hypotheses, references = [hypotheses], [list(references)]
    if len(hypotheses) != len(references) or not hypotheses:
        raise ValueError(f"need one list of references per hypothesis, got {len(hypotheses)} "
                         f"hypotheses and {len(references)} reference lists")
    if any(isinstance(r, str) or not r for r in references):
        raise ValueError("each hypothesis needs a non-empty list of reference strings")
    effective = (not corpus) if use_effective_order is None else use_effective_order
    split = dict(method=tokenize, lowercase=lowercase)
    hyp_tokens = [bleu.tokenize(h, **split) for h in hypotheses]
    ref_tokens = [[bleu.tokenize(r, **split) for r in refs] for refs in references]
    counts, totals = [0] * max_order, [0] * max_order
    merged: list[dict] = [{} for _ in range(max_order)]
    closest, ref_lens, marks = [], [], []
    for hyp, refs in zip(hyp_tokens, ref_tokens):
        for n in range(1, max_order + 1):
            clip = bleu.clipped_matches(hyp, refs, n)
            counts[n - 1] += clip.matches
            totals[n - 1] += clip.total
            for d in clip.details:
                c, m, k = merged[n - 1].get(d.ngram, (0, 0, 0))
                merged[n - 1][d.ngram] = (c + d.count, m + d.max_ref_count, k + d.clipped)
        lens = [len(r) for r in refs]
        ref_lens.append(lens)
        closest.append(bleu.closest_ref_length(len(hyp), lens))
        marks.append(_marks(hyp, refs, max_order))
    settings = dict(nrefs=len(references[0]) if len({len(r) for r in references}) == 1 else None,
                    lowercase=lowercase, tokenize=tokenize)
    result = bleu.bleu_from_counts(counts, totals, sum(len(h) for h in hyp_tokens), sum(closest),
                                   smooth_method=smooth_method, smooth_value=smooth_value,
                                   use_effective_order=effective, **settings)
    details = [[[" ".join(g), *v] for g, v in order.items()] for order in merged]
    scores = [bleu.sentence_bleu(h, r, tokenize=tokenize, lowercase=lowercase).score
              for h, r in zip(hypotheses, references)] if corpus else []
    fields_ = {k: getattr(result, k) for k in ("score", "precisions", "bp", "sys_len", "ref_len",
                                              "counts", "totals", "smooth_method",
                                              "effective_order", "tokenize", "lowercase")}
    return BleuTrace(list(hypotheses), [list(r) for r in references], hyp_tokens, ref_tokens,
                     marks, details, counts, totals, result.sys_len, result.ref_len, ref_lens,
                     closest, fields_, result.signature(), corpus, scores)


def _tokens(tokens: list[str], marks: list[list[str]]) -> str:
    spans = []
    for i, tok in enumerate(tokens):
        attrs = "".join(f' data-n{n + 1}="{m[i]}"' for n, m in enumerate(marks) if m[i])
        spans.append(f'<span class="tk"{attrs}>{esc(tok)}</span>')
    return " ".join(spans)


def _sentences(trace: BleuTrace) -> str:
    """Each hypothesis above its references, tokens marked for every order."""
    sents = []
    for s, (hyp, refs, marks) in enumerate(zip(trace.hyp_tokens, trace.ref_tokens,
                                               trace.marks)):
        lines = [f'<div class="s2s-line"><b>hypothesis</b>{_tokens(hyp, marks["hyp"])}</div>']
        for r, ref in enumerate(refs):
            name = "reference" if len(refs) == 1 else f"reference {r + 1}"
            lines.append(f'<div class="s2s-line"><b>{name}</b>'
                         f'{_tokens(ref, marks["refs"][r])}</div>')
        extra = (f'<div class="s2s-sub">sentence BLEU {trace.sentence_scores[s]:.1f}</div>'
                 if trace.corpus else "")
        sents.append(f'<div class="s2s-sent">{"".join(lines)}{extra}</div>')
    return "".join(sents)


def _precisions(trace: BleuTrace) -> str:
    """Clipped matches, n-gram counts and the (smoothed) precision of each order."""
    rows = ['<table><tr><th>n</th><th>matched (clipped)</th><th>n-grams</th>'
            "<th>p<sub>n</sub></th></tr>"]
    for n in range(1, len(trace.counts) + 1):
        m, t, p = trace.counts[n - 1], trace.totals[n - 1], trace.result["precisions"][n - 1]
        raw = f"{100 * m / t:.1f}%" if t else "—"
        shown = raw if (t and abs(100 * m / t - p) < 1e-9) else (
            f"{raw} → {p:.2f}% (smoothed)" if t and p else raw)
        rows.append(f'<tr data-n="{n}"><td>{n}</td><td>{m}</td><td>{t}</td>'
                    f"<td>{shown}</td></tr>")
    return "".join(rows) + "</table>"


def _ngrams(trace: BleuTrace) -> str:
    """One table per order: each n-gram, its count, the most any reference holds, its credit."""
    grams = []
    for n in range(1, len(trace.counts) + 1):
        rows_n = trace.details[n - 1]
        if trace.corpus:  # a corpus has too many n-grams to list: show those that match
            rows_n = [d for d in rows_n if d[2]]
        body = "".join(
            f'<tr><td class="l s2s-mono">{esc(g)}</td><td>{c}</td><td>{mx}</td>'
            f'<td style="color:var(--{"good" if k else "muted"})">{k}</td></tr>'
            for g, c, mx, k in rows_n)
        rest = len(trace.details[n - 1]) - len(rows_n)
        if rest:
            body += (f'<tr><td class="l" colspan="4">… and {rest} {n}-grams found in no '
                     f"reference</td></tr>")
        grams.append(
            f'<div class="ngr" data-n="{n}"><table><tr><th class="l">{n}-gram</th>'
            f"<th>in hypothesis</th><th>max in a reference</th><th>credited</th></tr>"
            + ("<tr><td class=l colspan=4>(summed over the sentences)</td></tr>"
               if trace.corpus else "")
            + f"{body or '<tr><td class=l>(none)</td></tr>'}</table></div>")
    return "".join(grams)


def _score(trace: BleuTrace) -> tuple[str, str, str]:
    """The brevity penalty's sentence, the formula with its numbers, and a note on the order
    (and, for a corpus, why its BLEU is not the mean of the sentence BLEUs)."""
    res, N = trace.result, len(trace.counts)
    c, r, bp = trace.sys_len, trace.ref_len, res["bp"]
    why = ("one reference" if all(len(x) == 1 for x in trace.ref_lens) else
           "for each sentence, the reference closest in length to the hypothesis")
    bp_text = (f"c = {c} hypothesis tokens ≥ r = {r}: BP = 1" if c >= r else
               f"c = {c} hypothesis tokens &lt; r = {r} reference tokens ({why}): "
               f"BP = exp(1 − {r}/{c}) = {bp:.3f}")
    used = [p for p in res["precisions"] if p > 0]
    order = len(used) if res["effective_order"] else N
    if res["score"] > 0:
        logs = " + ".join(f"log {p / 100:.3f}" for p in res["precisions"][:order])
        formula = (f"BLEU = BP · exp((1/{order}) Σ log p<sub>n</sub>) = {bp:.3f} · "
                   f"exp(({logs}) / {order}) = ")
    else:
        formula = "BLEU = 0: no n-gram matched (or a precision is 0) = "
    note = ""
    if res["effective_order"] and order < N:
        note = (f" Only orders 1–{order} count: the hypothesis has no longer n-grams "
                "(sentence BLEU's effective order).")
    if trace.corpus:
        avg = sum(trace.sentence_scores) / len(trace.sentence_scores)
        note += (f"<br>Corpus BLEU adds up the counts of all {len(trace.hypotheses)} "
                 f"sentences before dividing: it is not the mean of their sentence BLEUs "
                 f"({avg:.2f}).")
    return bp_text, formula, note


class BleuView(View):
    """The BLEU explorer (see `bleu_explorer`)."""

    kind = "bleu"
    scripts = styles = ("bleu",)  # static/bleu.js, static/bleu.css

    def __init__(self, trace: BleuTrace):
        res = trace.result
        bp_text, formula, note = _score(trace)
        what = "Corpus BLEU" if trace.corpus else "Sentence BLEU"
        orders = button_group("order", [(str(n), f"{n}-grams")
                                        for n in range(1, len(trace.counts) + 1)], "1",
                              "highlight:")
        body = (
            header(f"{what}, n-gram by n-gram", png=False)
            + '<p class="s2s-sub">Tokens of the chosen order\'s matching n-grams are green; a '
            "repeated n-gram beyond what any one reference holds is clipped (struck out). "
            f"Tokens as BLEU counts them ({esc(res['tokenize'])} tokenisation"
            f"{', lowercased' if res['lowercase'] else ''}).</p>"
            f'<div class="s2s-bleu" data-order="1">'
            f'<div class="s2s-bar">{orders}</div>'
            + _sentences(trace)
            + f'<div class="s2s-cols"><div>{_precisions(trace)}</div><div>{_ngrams(trace)}'
            f'</div></div><p>Brevity penalty: {bp_text}.</p>'
            f'<p class="s2s-score">{formula}<b>{res["score"]:.2f}</b></p>'
            f'<p class="s2s-note">{note}<br><span class="s2s-mono">'
            f"{esc(trace.signature)}</span></p></div>"
            '<noscript><p class="s2s-note">JavaScript is off: unigram matches are highlighted '
            "and every order's n-grams are listed.</p></noscript>")
        super().__init__(body, {}, f"BLEU: {trace.hypotheses[0]}", trace)


def bleu_explorer(hypotheses: str | list[str], references: list[str] | list[list[str]],
                  **settings) -> BleuView:
    """Explore the BLEU of one hypothesis (a str and its list of references) or of a corpus
    (a list of hypotheses and a list of reference lists). `settings` are those of
    `lib.bleu.sentence_bleu` / `corpus_bleu` (tokenize, lowercase, smooth_method, ...)."""
    return BleuView(bleu_breakdown(hypotheses, references, **settings))
