"""BLEU explorer: which n-grams of a translation match its references, and how they add up.

    bleu_explorer("the cat sat on the mat", ["the cat is on the mat", "a cat sat on the mat"])
    bleu_explorer([hyp1, hyp2], [[ref1a, ref1b], [ref2]])          # corpus BLEU

Every number comes from `lib.bleu` (clipped matches, brevity penalty, `bleu_from_counts`), so the
score shown is exactly `lib.bleu.sentence_bleu` (one sentence) or `corpus_bleu` (a list), which
equal sacrebleu's. `bleu_breakdown` computes them; static/bleu.js draws them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lib import bleu
from lib.widgets.render import View, esc
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
    if corpus and (not isinstance(hypotheses, (list, tuple))
                   or not all(isinstance(h, str) for h in hypotheses)):
        raise TypeError(f"hypotheses must be a str (one sentence) or a list of str (a corpus), "
                        f"got {hypotheses!r}")
    if not isinstance(references, (str, list, tuple)):
        raise TypeError(f"references must be a list of reference strings (one hypothesis) or a "
                        f"list of such lists (a corpus), got {references!r}")
    if not corpus:
        if isinstance(references, str):
            raise TypeError("references must be a list of reference strings, not one string")
        hypotheses, references = [hypotheses], [list(references)]
    if len(hypotheses) != len(references) or not hypotheses:
        raise ValueError(f"need one list of references per hypothesis, got {len(hypotheses)} "
                         f"hypotheses and {len(references)} reference lists")
    if any(isinstance(r, str) or not r for r in references):
        raise ValueError("each hypothesis needs a non-empty list of reference strings")
    if not all(isinstance(r, (list, tuple)) and all(isinstance(x, str) for x in r)
               for r in references):
        raise TypeError(f"each hypothesis's references must be a list of str, got {references!r}")
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


class BleuView(View):
    """The BLEU explorer (see `bleu_explorer`), drawn by static/bleu.js from the trace."""

    kind = "bleu"
    scripts = styles = ("bleu",)  # static/bleu.js, static/bleu.css

    def __init__(self, trace: BleuTrace):
        what = "Corpus BLEU" if trace.corpus else "Sentence BLEU"
        body = (f'<noscript><p class="s2s-note">{what}: {trace.result["score"]:.2f} '
                f"({esc(trace.signature)}). JavaScript is off: the matching n-grams and how they "
                "add up are drawn by JavaScript.</p></noscript>")
        data = trace.to_dict()
        del data["references"]  # (the reference texts: drawn from their tokens, ref_tokens)
        super().__init__(body, data, f"BLEU: {trace.hypotheses[0]}", trace)


def bleu_explorer(hypotheses: str | list[str], references: list[str] | list[list[str]],
                  **settings) -> BleuView:
    """Explore the BLEU of one hypothesis (a str and its list of references) or of a corpus
    (a list of hypotheses and a list of reference lists). `settings` are those of
    `lib.bleu.sentence_bleu` / `corpus_bleu` (tokenize, lowercase, smooth_method, ...)."""
    return BleuView(bleu_breakdown(hypotheses, references, **settings))
