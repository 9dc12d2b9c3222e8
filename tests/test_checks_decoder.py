"""lib.checks.decoder: each checker accepts the reference solution, rejects typical wrong ones
with a message that names the mistake, and reports an unfinished skeleton as not done."""

from __future__ import annotations

import re

import pytest
import torch
from conftest import assert_rejects, skeleton

from lib.checks import decoder as checks
from lib.checks.harness import Mismatch
from lib.checks.models import shared_vocab_model
from lib.data import EOS, SOS
from lib.search import log_probs

pytestmark = pytest.mark.usefixtures("one_thread")  # tiny models: see conftest


# --- start_state ----------------------------------------------------------------------------


def start_state(model, src, src_lengths):
    _, hidden, context = model.encode(src, src_lengths)  # (L, B, H), (B, H)
    return hidden, context, torch.full((src.size(0),), SOS, dtype=torch.long)


def test_start_state_accepts_the_reference():
    result = checks.check_start_state(start_state)
    assert result.ok and result.done, result


def test_start_state_accepts_the_reference_on_the_course_model_interface():
    model = shared_vocab_model(9)  # prepare() needs words of its vocabulary: w0 w1 ...
    src, lengths = model.prepare(["w0 w1 w2", "w3"])
    assert checks._start_case(start_state, model, src, lengths, "x")


@pytest.mark.parametrize("wrong, words", [
    (lambda m, s, n: (lambda o, h, c: (o[:, -1].expand(h.shape), c, h.new_full(
        (s.size(0),), SOS, dtype=torch.long)))(*m.encode(s, n)), "output states"),
    (lambda m, s, n: (lambda o, h, c: (h, h[0], torch.full((s.size(0),), SOS)))(
        *m.encode(s, n)), "FIRST layer"),
    (lambda m, s, n: (lambda o, h, c: (h.transpose(0, 1), c, torch.full((s.size(0),), SOS)))(
        *m.encode(s, n)), "(L, B, H)"),
    (lambda m, s, n: (lambda o, h, c: (h, c, torch.full((s.size(0),), EOS)))(
        *m.encode(s, n)), "<sos>"),
    (lambda m, s, n: (lambda o, h, c: (h[-1].expand(h.shape), c, torch.full((s.size(0),), SOS)))(
        *m.encode(s, n)), "s_0^i = h_S^i"),
])
def test_start_state_rejects_typical_mistakes(wrong, words):
    result = checks.check_start_state(wrong)
    assert result.done and not result.ok
    assert words in str(result), result


def test_start_state_skeleton_is_not_done():
    result = checks.check_start_state(skeleton)
    assert not result.done and "not done yet" in str(result)


# --- decode_mixed -----------------------------------------------------------------------------


def decode_mixed(model, src_ids, other_ids, max_len):
    _, state, _ = model.encode(torch.tensor([src_ids]), torch.tensor([len(src_ids)]))
    _, _, context = model.encode(torch.tensor([other_ids]), torch.tensor([len(other_ids)]))
    prev, out = torch.tensor([SOS]), []
    for _ in range(max_len):
        logits, state = model.decoder.step(prev, state, context)  # (1, V)
        tok = int(log_probs(logits).argmax(-1))
        out.append(tok)
        if tok == EOS:
            break
        prev = torch.tensor([tok])
    return out


def test_decode_mixed_accepts_the_reference():
    result = checks.check_decode_mixed(decode_mixed)
    assert result.ok and result.done, result
    assert "feed_context=False" in str(result)


def test_decode_mixed_differs_from_plain_greedy_on_the_fed_model():
    """The cases can tell the mistakes apart: on the model that feeds the context, decoding
    with another sentence's context changes the output, and the mistakes give other outputs."""
    fed = shared_vocab_model(8)
    a, b = [7, 8, 5, 5], [9, 6, 4]
    for x, y in ((a, b), (b, a)):
        outputs = {tuple(checks.reference_loop(fed, *ids, 10, mistake=mistake)[0])
                   for ids, mistake in (((x, y), ""), ((x, x), ""), ((y, y), ""), ((y, x), ""),
                                        ((x, y), "first layer"))}
        assert len(outputs) == 5
    unfed = shared_vocab_model(8, feed_context=False)  # there the fed context changes nothing
    assert checks.reference_loop(unfed, a, b, 10)[0] == checks.reference_loop(unfed, a, a, 10)[0]


@pytest.mark.parametrize("wrong, words", [
    (lambda m, s, o, n: decode_mixed(m, s, s, n), "you fed the context of src_ids"),
    (lambda m, s, o, n: decode_mixed(m, o, o, n), "you used other_ids for everything"),
    (lambda m, s, o, n: decode_mixed(m, o, s, n), "the roles are swapped"),
    (lambda m, s, o, n: checks.reference_loop(m, s, o, n, mistake="first layer")[0],
     "FIRST layer"),
    (lambda m, s, o, n: decode_mixed(m, s, o, n)[:-1] or [5], "first difference"),
    (lambda m, s, o, n: decode_mixed(m, s, o, n) + [5] * (n + 1), "length cap"),
])
def test_decode_mixed_rejects_typical_mistakes(wrong, words):
    assert_rejects(checks.check_decode_mixed(wrong), words)


def test_decode_mixed_skeleton_is_not_done():
    assert not checks.check_decode_mixed(skeleton).done


# --- greedy_unsure -----------------------------------------------------------------------------


def greedy_unsure(model, src_ids, max_len, min_prob):
    _, state, context = model.encode(torch.tensor([src_ids]), torch.tensor([len(src_ids)]))
    prev, out, probs = torch.tensor([SOS]), [], []
    for _ in range(max_len):
        logits, state = model.decoder.step(prev, state, context)  # (1, V)
        p = log_probs(logits)[0].exp()  # (V,)
        tok = int(p.argmax())
        if p[tok] < min_prob:
            break
        out.append(tok)
        probs.append(float(p[tok]))
        if tok == EOS:
            break
        prev = torch.tensor([tok])
    return out, probs


def test_greedy_unsure_accepts_the_reference_and_covers_every_way_out():
    result = checks.check_greedy_unsure(greedy_unsure)
    assert result.ok and result.done, result
    text = str(result)
    assert "ended with <eos>" in text and "cut by the length cap" in text
    assert "stopped by min_prob" in text


def test_greedy_unsure_with_min_prob_zero_is_lib_greedy():
    """The oracle: with min_prob 0 the reference loop writes what lib.search.greedy writes, and
    its probabilities are those of lib.search.sequence_log_prob's tokens."""
    from lib.search import greedy, sequence_log_prob

    model = shared_vocab_model(5)
    src = torch.tensor([[4, 7, 9, 5]])
    ids, probs = checks.reference_loop(model, [4, 7, 9, 5], [4, 7, 9, 5], 10)
    expected = [t for t in greedy(model, src, torch.tensor([4]), max_len=10)[0].tolist() if t]
    assert ids == expected
    total = sequence_log_prob(model, src, torch.tensor([4]), torch.tensor([ids]))
    assert torch.isclose(total, torch.tensor(probs).log().sum(), atol=1e-5).all()


def test_the_mid_sentence_threshold_stops_after_two_tokens_or_more():
    model = shared_vocab_model(5)
    src = [9, 9, 4]
    min_prob = checks.unsure_threshold(model, src, 10)
    assert min_prob is not None
    ids, probs = checks.reference_loop(model, src, src, 10, min_prob)
    plain, _ = checks.reference_loop(model, src, src, 10)
    assert 2 <= len(ids) < len(plain) and min(probs) >= min_prob
    for mistake in ("written", "prefix", "renormalised"):  # each one is told apart
        assert checks.reference_loop(model, src, src, 10, min_prob, mistake)[0] != ids


def test_widest_gap_threshold_keeps_away_from_every_probability():
    """The course model's min_prob: halfway across the widest gap between the probabilities
    greedy writes, below the first token's, so the loop writes a token, then stops, and no
    rounding of a probability can cross it."""
    model = shared_vocab_model(5)
    for src in ([9, 9, 4], [4, 7, 9, 5], [5, 5]):
        _, probs = checks.reference_loop(model, src, src, 10)
        min_prob = checks.widest_gap_threshold(model, src, 10)
        levels = sorted(set(probs))
        if len(levels) < 2:
            assert min_prob is None
            continue
        below_first = [b - a for a, b in zip(levels, levels[1:]) if b <= probs[0]]
        assert min(abs(p - min_prob) for p in probs) == pytest.approx(max(below_first) / 2)
        ids, _ = checks.reference_loop(model, src, src, 10, min_prob)
        assert 1 <= len(ids) < len(probs)


def test_greedy_unsure_on_a_given_model_uses_the_widest_gap():
    result = checks.check_greedy_unsure(greedy_unsure, shared_vocab_model(5))
    assert result.ok and result.done, result
    assert "course model, «I am cold.», min_prob" in str(result)


def _mistake(name):
    return lambda m, s, n, p: checks.reference_loop(m, s, s, n, p, mistake=name)


@pytest.mark.parametrize("wrong, words", [
    (_mistake("log"), "log-probabilities"),
    (_mistake("written"), "stop *before* writing"),
    (_mistake("prefix"), "probability of the whole prefix"),
    (_mistake("renormalised"), "renormalises"),
    (lambda m, s, n, p: greedy_unsure(m, s, n, 0.0), "never stopped for an unsure token"),
    (lambda m, s, n, p: (greedy_unsure(m, s, n, p)[0], greedy_unsure(m, s, n, p)[1][:-1]),
     "one probability per token"),
    (lambda m, s, n, p: greedy_unsure(m, s, n, p)[0], "two lists"),
])
def test_greedy_unsure_rejects_typical_mistakes(wrong, words):
    assert_rejects(checks.check_greedy_unsure(wrong), words)


@pytest.mark.parametrize("mistake, threshold, words", [
    ("", None, None),  # the right loop: no mistake named
    ("written", None, "stop *before* writing"),
    ("prefix", None, "probability of the whole prefix"),
    ("renormalised", None, "renormalises"),
    ("", 0.0, "never stopped for an unsure token (here)"),
])
def test_unsure_mistake_names_the_loop_the_answer_equals(mistake, threshold, words):
    model, src = shared_vocab_model(5), [9, 9, 4]
    min_prob = checks.unsure_threshold(model, src, 10)
    ids, probs = checks.reference_loop(model, src, src, 10,
                                       min_prob if threshold is None else threshold, mistake)
    why = checks._unsure_mistake(model, src, 10, min_prob, ids, probs, " (here)")
    assert why is None if words is None else words in why


@pytest.mark.parametrize("got, words", [
    (([5, 3], [0.5, 0.9]), None),
    (([5, 3],), "two lists"),
    (([5, 3], [0.5]), "2 tokens but 1 probabilities"),
    (([5, 3], [-0.7, -0.1]), "log-probabilities"),
    (([5, 3], ["a", "b"]), "list of floats"),
])
def test_unsure_answer_reads_the_form_of_the_answer(got, words):
    if words is None:
        assert checks._unsure_answer(got, "x") == ([5, 3], [0.5, 0.9])
        return
    with pytest.raises(Mismatch, match=re.escape(words)):
        checks._unsure_answer(got, "x")


def test_greedy_unsure_skeleton_is_not_done():
    assert not checks.check_greedy_unsure(skeleton).done


# --- greedy_decode --------------------------------------------------------------------------


def greedy_decode(model, src_ids, max_len):
    """Plain greedy: the mixed decoder fed its own sentence's context."""
    return decode_mixed(model, src_ids, src_ids, max_len)


def test_greedy_accepts_the_reference_and_covers_eos_and_the_cap():
    result = checks.check_greedy_decode(greedy_decode)
    assert result.ok, result
    text = str(result)
    assert "ended with <eos>" in text and "reached the length cap" in text


def _no_stop(model, src_ids, max_len):
    return checks._wrong_greedy(model, src_ids, max_len, "no stop")


def _always_sos(model, src_ids, max_len):
    return checks._wrong_greedy(model, src_ids, max_len, "always sos")


def _state_not_carried(model, src_ids, max_len):
    return checks._wrong_greedy(model, src_ids, max_len, "state not carried")


def _drops_eos(model, src_ids, max_len):
    out = greedy_decode(model, src_ids, max_len)
    return out[:-1] if out[-1] == EOS else out


def _plain_argmax_with_sos(model, src_ids, max_len):
    out = greedy_decode(model, src_ids, max_len)
    return [SOS] + out[:-1]  # the start token written as if it were output


def _ignores_cap(model, src_ids, max_len):
    return greedy_decode(model, src_ids, max_len + 5)


@pytest.mark.parametrize("wrong, words", [
    (_no_stop, "did not stop at <eos>"),
    (_always_sos, "fed <sos> at every step"),
    (_state_not_carried, "pass the state"),
    (_drops_eos, "keep the <eos>"),
    (_plain_argmax_with_sos, "never generated"),
    (_ignores_cap, "length cap"),
])
def test_greedy_rejects_typical_mistakes(wrong, words):
    result = checks.check_greedy_decode(wrong)
    assert result.done and not result.ok
    assert words in str(result), result


def test_greedy_skeleton_is_not_done():
    assert not checks.check_greedy_decode(skeleton).done


def test_greedy_wrong_return_type_is_explained():
    result = checks.check_greedy_decode(lambda m, s, n: "Je suis")
    assert not result.ok and "list of token ids" in str(result)


# --- inputs changed in place ------------------------------------------------------------------


def test_inputs_changed_in_place_are_named():
    def train_mode(model, src_ids, max_len):
        model.train()  # dropout on: the output would change from run to run
        return greedy_decode(model, src_ids, max_len)

    assert_rejects(checks.check_greedy_decode(train_mode),
                   "switched `model` to training mode (model.train())")

    def reverses_source(model, src_ids, max_len):
        src_ids.reverse()  # Sutskever et al. reversed the source, but not the caller's list
        return greedy_decode(model, src_ids[::-1], max_len)

    assert_rejects(checks.check_greedy_decode(reverses_source),
                   "changed its input `src_ids` in place (e.g. src_ids.sort()")

    def pops_other(model, src_ids, other_ids, max_len):
        other_ids.pop()  # shortens the caller's list
        return decode_mixed(model, src_ids, other_ids + [4], max_len)

    assert_rejects(checks.check_decode_mixed(pops_other), "`other_ids` in place")


# --- the chapter's forgetful loop -----------------------------------------------------------


def forgetful(model, src_ids, max_len):
    """book/decoder.md's buggy loop: the state that step returns is never passed on."""
    src = torch.tensor([src_ids], device=model.device)
    _, state, context = model.encode(src, torch.tensor([len(src_ids)]))
    prev = torch.tensor([SOS], device=model.device)
    out = []
    for _ in range(max_len):
        logits, new_state = model.decoder.step(prev, state, context)
        token = int(log_probs(logits).argmax(-1))
        out.append(token)
        if token == EOS:
            break
        prev = torch.tensor([token], device=model.device)
    return out


def test_the_forgetful_loop_starts_like_greedy_and_is_named():
    model = shared_vocab_model(5)
    with torch.no_grad():
        pairs = [(forgetful(model, ids, 10), greedy_decode(model, ids, 10))
                 for ids in ([4, 7, 9, 5], [6, 11], [9, 9, 4])]
    assert all(lost[0] == right[0] for lost, right in pairs)  # step 1 is the same
    assert any(lost != right for lost, right in pairs)
    assert_rejects(checks.check_greedy_decode(forgetful), "initial state; pass the state")
