"""lib.checks.decoder: each checker accepts the reference solution, rejects typical wrong ones
with a message that names the mistake, and reports an unfinished skeleton as not done."""

from __future__ import annotations

import pytest
import torch
from conftest import assert_rejects, skeleton

from lib.checks import decoder as checks
from lib.data import EOS, SOS
from lib.search import log_probs


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """Tiny models run fastest on one thread; on 2 shared cores more threads thrash."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


# --- start_state ----------------------------------------------------------------------------


def start_state(model, src, src_lengths):
    _, hidden, context = model.encode(src, src_lengths)  # (L, B, H), (B, H)
    return hidden, context, torch.full((src.size(0),), SOS, dtype=torch.long)


def test_start_state_accepts_the_reference():
    result = checks.check_start_state(start_state)
    assert result.ok and result.done, result


def test_start_state_accepts_the_reference_on_the_course_model_interface():
    model = checks.tiny_model(9)  # prepare() needs words of its vocabulary: w0 w1 ...
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


# --- decoder_inputs -------------------------------------------------------------------------


def decoder_inputs(emb, context):
    T = emb.size(1)
    return torch.cat([emb, context.unsqueeze(1).expand(-1, T, -1)], dim=-1)  # (B, T, E+H)


def test_decoder_inputs_accepts_the_reference():
    result = checks.check_decoder_inputs(decoder_inputs)
    assert result.ok, result
    assert "Decoder.forward" in str(result)


@pytest.mark.parametrize("wrong, words", [
    (lambda e, c: torch.cat([c.unsqueeze(1).expand(-1, e.size(1), -1), e], -1),
     "context comes first"),
    (lambda e, c: torch.cat([e, c.repeat(e.size(1), 1).view(e.size(0), e.size(1), -1)], -1),
     "wrong context"),
    (lambda e, c: e, "not concatenated"),
    (lambda e, c: torch.cat([e, c.unsqueeze(1)], 1) if e.size(-1) == c.size(-1) else
     torch.cat([e, torch.zeros(e.size(0), 1, e.size(2))], 1), "along time"),
])
def test_decoder_inputs_rejects_typical_mistakes(wrong, words):
    result = checks.check_decoder_inputs(wrong)
    assert result.done and not result.ok
    assert words in str(result), result


def test_decoder_inputs_skeleton_is_not_done():
    assert not checks.check_decoder_inputs(skeleton).done


# --- greedy_decode --------------------------------------------------------------------------


def greedy_decode(model, src_ids, max_len):
    src = torch.tensor([src_ids])  # (1, S)
    _, state, context = model.encode(src, torch.tensor([len(src_ids)]))
    prev = torch.tensor([SOS])  # (1,)
    out = []
    for _ in range(max_len):
        logits, state = model.decoder.step(prev, state, context)  # (1, V)
        tok = int(log_probs(logits).argmax(-1))
        out.append(tok)
        if tok == EOS:
            break
        prev = torch.tensor([tok])
    return out


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

    def scales_context(emb, context):
        context *= 1.0
        context[0] = 0  # the first sentence's context, wiped in the caller's tensor
        return decoder_inputs(emb, context)

    assert_rejects(checks.check_decoder_inputs(scales_context), "`context` in place")
