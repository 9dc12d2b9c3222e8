"""lib.checks.wrap_up: each checker accepts the reference, rejects typical mistakes with a
message that names them, and reports an unfinished skeleton as not done. The references are
checked against hand-computed answers first."""

from __future__ import annotations

import math

import torch
from conftest import assert_rejects, skeleton

from lib.checks import wrap_up as checks
from lib.data import EOS, PAD, detokenize, tokenize
from lib.experiments import toy
from lib.search import sequence_log_prob

# --- copy_unknowns -------------------------------------------------------------------------------


def copy_unknowns(source, output, known):
    unknown = [w for w in tokenize(source) if w not in known]
    parts = output.split("<unk>")
    out = parts[0]
    for k, part in enumerate(parts[1:]):
        out += (unknown[k] if k < len(unknown) else "<unk>") + part
    return out


def test_copy_reference_by_hand():
    known = {"My", "aunt", "lives", "in", ".", "Tom", "met", "I", "and", "at", "the"}
    assert checks.copy_reference("My aunt lives in Saskatchewan.", "Ma tante vit au <unk>.",
                                 known) == "Ma tante vit au Saskatchewan."
    assert checks.copy_reference("Tom met Ziggy in Bruges.",
                                 "Tom a rencontré <unk> à <unk> hier <unk>.", known) == (
        "Tom a rencontré Ziggy à Bruges hier <unk>.")
    assert checks.copy_reference("Tom met Ziggy in Bruges.",
                                 "Tom a rencontré <unk> à <unk> hier <unk>.", known,
                                 "dropped") == "Tom a rencontré Ziggy à Bruges hier."


def test_copy_accepts_reference_and_skeleton_is_not_done():
    assert checks.check_copy_unknowns(copy_unknowns).ok
    r = checks.check_copy_unknowns(skeleton)
    assert not r.ok and not r.done and "not done yet" in str(r)


def test_copy_names_the_typical_mistakes():
    def tokenized(source, output, known):
        unknown = iter(w for w in tokenize(source) if w not in known)
        return " ".join(next(unknown, t) if t == "<unk>" else t for t in tokenize(output))

    def any_word(source, output, known):
        return copy_unknowns(source, output, set())

    def lowered(source, output, known):
        return copy_unknowns(source.lower(), output, {w.lower() for w in known})

    def first_only(source, output, known):
        unknown = [w for w in tokenize(source) if w not in known]
        return output.replace("<unk>", unknown[0]) if unknown else output

    def dropped(source, output, known):
        out = copy_unknowns(source, output, known)
        return " ".join(out.replace("<unk>", "").split()).replace(" .", ".")

    assert_rejects(checks.check_copy_unknowns(any_word), "knows it or not")
    assert_rejects(checks.check_copy_unknowns(lowered), "lowercased")
    assert_rejects(checks.check_copy_unknowns(first_only), "the k-th <unk> takes")
    assert_rejects(checks.check_copy_unknowns(dropped), "deleted the <unk>s")
    assert_rejects(checks.check_copy_unknowns(lambda s, o, k: None), "as a str")
    # tokenise, replace, join with spaces: "au < unk > ." is the tokenizer trap whatever the
    # spacing of the checker's own reproduction ("au < unk >.")
    assert_rejects(checks.check_copy_unknowns(tokenized), "cuts '<unk>' into")


def test_copy_names_the_tokenizer_trap():
    def retokenized(source, output, known):
        return detokenize(tokenize(output))  # <unk> cut into three, nothing replaced

    assert_rejects(checks.check_copy_unknowns(retokenized), "cuts '<unk>' into")


def test_copy_names_deleted_unks_whatever_the_spacing():
    def replaced(source, output, known):  # leftovers deleted with str.replace: "hier ."
        return copy_unknowns(source, output, known).replace("<unk>", "")

    assert checks.copy_reference("Tom met Ziggy in Bruges.",
                                 "Tom a rencontré <unk> à <unk> hier <unk>.", _KNOWN_HERE,
                                 "dropped") == "Tom a rencontré Ziggy à Bruges hier."
    assert replaced("Tom met Ziggy in Bruges.", "Tom a rencontré <unk> à <unk> hier <unk>.",
                    _KNOWN_HERE) == "Tom a rencontré Ziggy à Bruges hier ."
    assert_rejects(checks.check_copy_unknowns(replaced), "deleted the <unk>s")


def test_copy_names_a_spacing_only_difference():
    def spaced(source, output, known):  # the right words, joined with spaces
        return " ".join(tokenize(copy_unknowns(source, output, known)))

    assert_rejects(checks.check_copy_unknowns(spaced), "the spacing changed")


_KNOWN_HERE = {"Tom", "met", "in", "."}


# --- diagnose ------------------------------------------------------------------------------------


def diagnose(model, src_ids, output_ids, references):
    outputs = [list(output_ids)] + [list(r) + [EOS] for r in references]
    T = max(len(y) for y in outputs)
    tgt = torch.full((len(outputs), T), PAD, dtype=torch.long)
    for i, y in enumerate(outputs):
        tgt[i, :len(y)] = torch.tensor(y)
    src = torch.tensor([src_ids] * len(outputs))
    lp = sequence_log_prob(model, src, torch.full((len(outputs),), len(src_ids)), tgt)
    return "search error" if bool((lp[1:] > lp[0]).any()) else "model error"


def test_diagnose_reference_by_hand():
    # greedy_loses_table: P(A C <eos>) = .5 * .4 = .2, P(B C <eos>) = .4 * .9 = .36,
    # P(A D <eos>) = .5 * .35 = .175, P(A <eos>) = .125, P(B <eos>) = .04
    model = toy.TableModel(toy.greedy_loses_table())
    src = model.inputs()[0][0].tolist()
    ids = model.ids
    lp = checks._log_probs(model, src, [ids(["A", "C", "<eos>"]), ids(["B", "<eos>"])])
    assert math.isclose(lp[0], math.log(0.2), rel_tol=1e-6)
    assert math.isclose(lp[1], math.log(0.04), rel_tol=1e-6)
    assert checks.diagnose_reference(model, src, ids(["A", "C", "<eos>"]),
                                     [ids(["A", "D"]), ids(["B", "C"])]) == "search error"
    assert checks.diagnose_reference(model, src, ids(["A", "C", "<eos>"]),
                                     [ids(["A", "D"])]) == "model error"
    assert checks.diagnose_reference(model, src, ids(["A", "<eos>"]), [ids(["B"])]) == \
        "model error"
    assert checks.diagnose_reference(model, src, ids(["A", "<eos>"]), [ids(["B"])],
                                     "no eos") == "search error"


def test_diagnose_accepts_reference_and_skeleton_is_not_done():
    r = checks.check_diagnose(diagnose)
    assert r.ok, str(r)
    assert not checks.check_diagnose(skeleton).done


def test_diagnose_names_the_typical_mistakes():
    def no_eos(model, src_ids, output_ids, references):
        return _scored(model, src_ids, output_ids, references, eos=False)

    def mean(model, src_ids, output_ids, references):
        return _scored(model, src_ids, output_ids, references, per_token=True)

    def first(model, src_ids, output_ids, references):
        return diagnose(model, src_ids, output_ids, references[:1])

    def swapped(model, src_ids, output_ids, references):
        return {"search error": "model error", "model error": "search error"}[
            diagnose(model, src_ids, output_ids, references)]

    assert_rejects(checks.check_diagnose(no_eos), "without <eos>")
    assert_rejects(checks.check_diagnose(mean), "per token")
    assert_rejects(checks.check_diagnose(first), "first reference only")
    def ties(model, src_ids, output_ids, references):
        outputs = [list(output_ids)] + [list(r) + [EOS] for r in references]
        lp = [sequence_log_prob(model, torch.tensor([src_ids]), torch.tensor([len(src_ids)]),
                                torch.tensor([y])).item() for y in outputs]
        return "search error" if max(lp[1:]) >= lp[0] else "model error"

    assert_rejects(checks.check_diagnose(ties), "counted a tie as a search error")
    assert_rejects(checks.check_diagnose(swapped))
    assert_rejects(checks.check_diagnose(lambda *a: True), "'search error' or 'model error'")


def _scored(model, src_ids, output_ids, references, eos=True, per_token=False):
    scores = []
    for y in [list(output_ids)] + [list(r) + [EOS] * eos for r in references]:
        lp = float(sequence_log_prob(model, torch.tensor([src_ids]),
                                     torch.tensor([len(src_ids)]), torch.tensor([y]))[0])
        scores.append(lp / len(y) if per_token else lp)
    return "search error" if max(scores[1:]) > scores[0] else "model error"


def test_diagnose_says_what_is_true_and_names_a_slip_only_when_every_answer_fits_it():
    always_model = checks.check_diagnose(lambda *a: "model error")
    # case 1 (P(B C <eos>) = .36 > P(A C <eos>) = .2): a search error, said with its numbers;
    # a constant answer matches the first-reference slip on that case, but not on every case
    assert_rejects(always_model, "search error, not a model error", "P = 0.36", "P = 0.2",
                   "returns 'model error' on every case")
    assert "first reference" not in str(always_model)
    always_search = checks.check_diagnose(lambda *a: "search error")
    assert_rejects(always_search, "model error, not a search error",
                   "returns 'search error' on every case")

    def swapped(model, src_ids, output_ids, references):
        return {"search error": "model error", "model error": "search error"}[
            diagnose(model, src_ids, output_ids, references)]

    r = checks.check_diagnose(swapped)
    assert_rejects(r, "search error, not a model error")
    for _, why in checks._DIAGNOSE_MISTAKES:  # no slip fits every answer: none is named
        assert why not in str(r), str(r)
    assert "every case" not in str(r)


def test_diagnose_first_reference_message_agrees_with_the_exercise():
    def first(model, src_ids, output_ids, references):
        return diagnose(model, src_ids, output_ids, references[:1])

    # the exercise: a better search finds an output at least as probable as the reference,
    # not necessarily a right translation
    r = checks.check_diagnose(first)
    assert_rejects(r, "first reference only", "an output the model prefers")
    assert "right translation" not in str(r)
