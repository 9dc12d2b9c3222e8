"""Checkers for the exercises of "Wrap-up: translate your own sentences".

    check_copy_unknowns(copy_unknowns)   each <unk> of the output replaced by an unknown source word
    check_diagnose(diagnose)             a wrong output: search error or model error?

The references are `copy_reference` (the rule as the exercise states it) and
`diagnose_reference` (`lib.search.sequence_log_prob` of the output and of every reference,
<eos> included). Each checker also computes the usual mistakes (tokenising the output, copying
known words, lowercasing, dropping or repeating; references without <eos>, per-token means,
the first reference only) and names the one the learner's answer matches; diagnose's answers
are binary, so there a wrong answer is told what is true of its case, and a mistake is named
only when the learner's answers on every case are the ones it gives.
"""

from __future__ import annotations

import math

import torch

from lib.checks.harness import CheckResult, Mismatch, call, run_checks
from lib.data import EOS, PAD, detokenize, tokenize
from lib.experiments import toy
from lib.search import sequence_log_prob

UNK_TEXT = "<unk>"

# ---------------------------------------------------------------------------------------------
# copy_unknowns(source, output, known) -> French text
# ---------------------------------------------------------------------------------------------


def copy_reference(source: str, output: str, known, mistake: str = "") -> str:
    """The k-th <unk> of `output` becomes the k-th token of `source` (lib.data.tokenize) that is
    not in `known`, spelled as in the source; <unk>s beyond those stay as they are.

    `mistake` reproduces a typical error so a checker can name it: "tokenized" (the output split
    with lib.data.tokenize, which cuts <unk> into three tokens, and joined again), "any word"
    (the k-th source token, known or not), "lower" (the copy lowercased), "dropped" (leftover
    <unk>s deleted), "first" (every <unk> gets the first unknown word).
    """
    if mistake == "tokenized":
        return detokenize(tokenize(output))
    words = [w for w in tokenize(source) if mistake == "any word" or w not in known]
    if mistake == "lower":
        words = [w.lower() for w in words]
    if mistake == "first":
        words = words[:1] * output.count(UNK_TEXT)
    parts = output.split(UNK_TEXT)  # k <unk>s make k + 1 parts
    out = parts[0]
    for k, part in enumerate(parts[1:]):
        if k < len(words):
            out += words[k] + part
        elif mistake == "dropped":
            out = out.rstrip() + (" " if part[:1].isalnum() else "") + part.lstrip() \
                if out else part.lstrip()
        else:
            out += UNK_TEXT + part
    return out


_KNOWN = {"My", "aunt", "lives", "in", "I", "met", "at", "the", "and", "is", "an", "active",
          ".", "?", "!", ",", "Tom", "Where", "does", "live"}

COPY_CASES = [  # (source, output): the known words are _KNOWN
    ("My aunt lives in Saskatchewan.", "Ma tante vit au <unk>."),
    ("I met Ziggy and Bruno at the Kursaal.", "J'ai rencontré <unk> et <unk> au <unk>."),
    ("Tom met Ziggy in Bruges.", "Tom a rencontré <unk> à <unk> hier <unk>."),
    ("Where does Ziggy live?", "Où habite Ziggy ?"),
]

_COPY_MISTAKES = (
    ("tokenized", "nothing was replaced: lib.data.tokenize cuts '<unk>' into '<', 'unk' and "
                  "'>', so the output's tokens never equal '<unk>'; find the '<unk>'s in the "
                  "text itself (str.split('<unk>') gives the pieces between them)"),
    ("any word", "you copied the k-th source word whether the model knows it or not; copy "
                 "only the source words that are not in `known`: those are the ones the model "
                 "could not translate"),
    ("lower", "you lowercased the copied word; copy it as the source spells it (names keep "
              "their capital)"),
    ("dropped", "you deleted the <unk>s for which no unknown source word was left; leave "
                "them as <unk>: the exercise changes only what it can fill"),
    ("first", "every <unk> got the first unknown word; the k-th <unk> takes the k-th unknown "
              "source word"),
)


def _squeezed(text: str) -> str:
    """The text without its whitespace: a slip is named whatever spacing the answer used
    (" ".join of tokens writes "hier ." where the reproduction writes "hier.")."""
    return "".join(text.split())


def _copy_case(fn, source: str, output: str) -> str:
    known = frozenset(_KNOWN)
    got = call(fn, source, output, set(known), names=("source", "output", "known"))
    if not isinstance(got, str):
        raise Mismatch(f"return the French text as a str, got {type(got).__name__}")
    expected = copy_reference(source, output, known)
    if got == expected:
        return f"«{output}» -> «{expected}»"
    for mistake, why in _COPY_MISTAKES:
        wrong = _squeezed(copy_reference(source, output, known, mistake))
        if _squeezed(got) == wrong != _squeezed(expected):
            raise Mismatch(f"«{source}» / «{output}»: {why}")
    if _squeezed(got) == _squeezed(expected):
        raise Mismatch(f"«{source}» / «{output}»: the right words, but the spacing changed: "
                       f"expected «{expected}», got «{got}»; keep the text around each <unk> "
                       f"as it is (joining tokens with spaces adds some)")
    raise Mismatch(f"«{source}» / «{output}»: expected «{expected}», got «{got}»")


def check_copy_unknowns(fn) -> CheckResult:
    """fn(source: str, output: str, known: set[str]) -> str, on sentences whose unknown words
    are made up (the known words are a small fixed set), with more, fewer and as many <unk>s as
    unknown source words."""
    return run_checks("copy_unknowns", *[
        lambda s=s, o=o: _copy_case(fn, s, o) for s, o in COPY_CASES])


# ---------------------------------------------------------------------------------------------
# diagnose(model, src_ids, output_ids, references) -> "search error" | "model error"
# ---------------------------------------------------------------------------------------------


def _log_probs(model, src_ids: list[int], outputs: list[list[int]]) -> list[float]:
    """log P(y | x) of each output (ids, <eos> where it ends), one batch padded with <pad>."""
    T = max(len(y) for y in outputs)
    tgt = torch.full((len(outputs), T), PAD, dtype=torch.long)  # (N, T)
    for i, y in enumerate(outputs):
        tgt[i, :len(y)] = torch.tensor(y)
    src = torch.tensor([src_ids] * len(outputs))  # (N, S)
    lengths = torch.full((len(outputs),), len(src_ids))  # (N,)
    with torch.no_grad():
        return sequence_log_prob(model, src, lengths, tgt).tolist()


def diagnose_reference(model, src_ids: list[int], output_ids: list[int],
                       references: list[list[int]], mistake: str = "") -> str:
    """"search error" when some reference (with <eos> appended) is strictly more probable
    under the model than the output, else "model error".

    `mistake`: "no eos" (references scored without their <eos>), "mean" (log P per token
    compared instead of log P), "first" (the first reference only), "ties" (a reference
    exactly as probable as the output counted as a search error).
    """
    refs = references[:1] if mistake == "first" else references
    ends = [] if mistake == "no eos" else [EOS]
    scored = [list(output_ids)] + [list(r) + ends for r in refs]
    lp = _log_probs(model, src_ids, scored)
    if mistake == "mean":
        lp = [x / len(y) for x, y in zip(lp, scored)]
    if mistake == "ties":
        return "search error" if max(lp[1:]) >= lp[0] else "model error"
    return "search error" if max(lp[1:]) > lp[0] else "model error"


def diagnose_tables() -> list[tuple[dict, list[str], list[list[str]], str]]:
    """Table models (lib.experiments.toy.TableModel) and cases, each built so that one mistake
    changes the
    answer: (table, output tokens, [reference tokens], what the case separates)."""
    greedy_loses = toy.greedy_loses_table()  # P(A C) = .2 < P(B C) = .36; P(A D) = .175
    long_ref = {
        (): {"A": 0.6, "E": 0.3, "<eos>": 0.1},
        ("A",): {"<eos>": 0.2, "F": 0.8},
        ("E",): {"F": 0.72, "<eos>": 0.28},
        ("E", "F"): {"F": 0.72, "<eos>": 0.28},
        ("E", "F", "F"): {"F": 0.72, "<eos>": 0.28},
        ("E", "F", "F", "F"): {"F": 0.72, "<eos>": 0.28},
    }  # A <eos>: .12; E F F F F <eos>: .3 * .72^4 = .081, but per token it is ahead
    tie = {(): {"A": 0.5, "B": 0.5}, ("A",): {"<eos>": 1.0}, ("B",): {"<eos>": 1.0}}
    # A <eos> and B <eos> are both exactly .5, and so is B without its <eos>
    return [
        (greedy_loses, ["A", "C", "<eos>"], [["A", "D"], ["B", "C"]],
         "the second reference is the more probable one"),
        (greedy_loses, ["A", "<eos>"], [["B"]],
         "a reference the model would not end where it ends"),
        (long_ref, ["A", "<eos>"], [["E", "F", "F", "F", "F"]],
         "a long reference, less probable in all but more per token"),
        (greedy_loses, ["A", "D", "<eos>"], [["A", "C"]],
         "a search error on the reference the search nearly wrote"),
        (tie, ["A", "<eos>"], [["B"]], "a reference exactly as probable as the output (a tie)"),
    ]


_DIAGNOSE_MISTAKES = (
    ("no eos", "you scored the references without <eos>: a finished translation also has to "
               "end there, and P(<eos>) belongs to its probability as it does to the output's "
               "(append <eos> to each reference)"),
    ("mean", "you compared log-probabilities per token; a search looks for the most probable "
             "output, log P(y | x) summed over its tokens, so a search error means a reference "
             "with a larger sum"),
    ("first", "you looked at the first reference only; any reference the model prefers to the "
              "output shows that a better search would have found an output the model prefers "
              "(one at least as probable as that reference), so compare with every reference"),
    ("ties", "you counted a tie as a search error: a reference exactly as probable as the "
             "output is one the model does not prefer, so a better search would have no reason "
             "to return it (count a reference only when it is strictly more probable: > not >=)"),
)


def _diagnose_inputs(table, output: list[str], references: list[list[str]]):
    """(model, src_ids, output ids, reference ids) of one case, on a fresh table model."""
    model = toy.TableModel(table)
    model.device = torch.device("cpu")  # as a Seq2Seq has, for code written against one
    src, _ = model.inputs()  # (1, 1): the table ignores the source
    return model, src[0].tolist(), model.ids(output), [model.ids(r) for r in references]


def _diagnose_answer(fn, model, src_ids, out_ids, ref_ids, label: str):
    with torch.no_grad():
        return call(fn, model, list(src_ids), list(out_ids), [list(r) for r in ref_ids],
                    names=("model", "src_ids", "output_ids", "references"), where=label)


def _diagnose_slip(fn) -> str:
    """What the learner's answers on all the cases have in common with a typical mistake: all
    the same answer, or every answer the one a mistake gives; "" when neither holds (or when an
    answer does not come back), so that a slip is named only when all the cases agree with it."""
    answers, by_mistake = [], {m: [] for m, _ in _DIAGNOSE_MISTAKES}
    for table, output, references, label in diagnose_tables():
        model, src_ids, out_ids, ref_ids = _diagnose_inputs(table, output, references)
        try:
            answers.append(_diagnose_answer(fn, model, src_ids, out_ids, ref_ids, label))
        except Exception:
            return ""
        for mistake in by_mistake:
            by_mistake[mistake].append(
                diagnose_reference(model, src_ids, out_ids, ref_ids, mistake))
    if len(set(answers)) == 1:
        return (f"your function returns {answers[0]!r} on every case, whatever the "
                f"probabilities: compare log P(y | x) of the output with that of each reference")
    for mistake, why in _DIAGNOSE_MISTAKES:
        if by_mistake[mistake] == answers:
            return why
    return ""


def _diagnose_case(fn, table, output: list[str], references: list[list[str]],
                   label: str) -> str:
    model, src_ids, out_ids, ref_ids = _diagnose_inputs(table, output, references)
    expected = diagnose_reference(model, src_ids, out_ids, ref_ids)
    got = _diagnose_answer(fn, model, src_ids, out_ids, ref_ids, label)
    if got not in ("search error", "model error"):
        raise Mismatch(f"return the string 'search error' or 'model error', got {got!r}")
    if got == expected:
        return f"{label}: {expected}"
    # What is true of this case, with the probabilities that show it, then the slip if every
    # answer of the learner's agrees with one.
    p_out, *p_refs = (math.exp(x) for x in _log_probs(
        model, src_ids, [list(out_ids)] + [list(r) + [EOS] for r in ref_ids]))
    shown = f"output {' '.join(output)}: P = {p_out:.3g}; " + ", ".join(
        f"reference {' '.join(r)} <eos>: P = {p:.3g}" for r, p in zip(references, p_refs))
    if expected == "model error":
        truth = ("the output is at least as probable as every reference, so none of them shows "
                 "that the search missed an output the model prefers: that is a model error, "
                 "not a search error")
    else:
        truth = ("a reference is more probable than the output, so a better search would have "
                 "found an output the model prefers: that is a search error, not a model error")
    slip = _diagnose_slip(fn)
    raise Mismatch(f"{label} ({shown}): {truth}" + (f"; {slip}" if slip else ""))


def check_diagnose(fn) -> CheckResult:
    """fn(model, src_ids, output_ids, references) -> "search error" | "model error", on table
    models whose every probability is known (lib.experiments.toy.TableModel)."""
    return run_checks("diagnose", *[
        lambda t=t, o=o, r=r, what=what: _diagnose_case(fn, t, o, r, what)
        for t, o, r, what in diagnose_tables()])

