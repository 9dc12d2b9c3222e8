"""lib.checks.search accepts the reference solutions and names typical mistakes."""

from __future__ import annotations

import torch

from lib.checks import search as checks
from lib.data import EOS, PAD, SOS


def greedy_ok(model, src, src_lengths, max_len):
    _, state, context = model.encode(src, src_lengths)
    prev = torch.tensor([SOS])
    out = []
    for _ in range(max_len):
        logits, state = model.decoder.step(prev, state, context)  # (1, V)
        logits[:, [PAD, SOS]] = float("-inf")
        tok = int(logits.argmax(-1))
        out.append(tok)
        if tok == EOS:
            break
        prev = torch.tensor([tok])
    return out


def greedy_drops_eos(model, src, src_lengths, max_len):
    out = greedy_ok(model, src, src_lengths, max_len)
    return out[:-1] if out and out[-1] == EOS else out


def greedy_never_stops(model, src, src_lengths, max_len):
    _, state, context = model.encode(src, src_lengths)
    prev = torch.tensor([SOS])
    out = []
    for _ in range(max_len):
        logits, state = model.decoder.step(prev, state, context)
        logits[:, [PAD, SOS]] = float("-inf")
        out.append(int(logits.argmax(-1)))
        prev = torch.tensor([out[-1]])
    return out


def greedy_feeds_sos(model, src, src_lengths, max_len):
    _, state, context = model.encode(src, src_lengths)
    out = []
    for _ in range(max_len):
        logits, state = model.decoder.step(torch.tensor([SOS]), state, context)
        logits[:, [PAD, SOS]] = float("-inf")
        out.append(int(logits.argmax(-1)))
        if out[-1] == EOS:
            break
    return out


def beam_step_ok(scores, logp, k):
    V = logp.size(1)
    best, flat = (scores.unsqueeze(1) + logp).reshape(-1).topk(k)  # (k,)
    return flat // V, flat % V, best


def beam_step_per_beam(scores, logp, k):
    best, tok = logp.max(1)  # each hypothesis' own best token
    order = (scores + best).argsort(descending=True)
    return order, tok[order], (scores + best)[order]


def beam_step_probabilities(scores, logp, k):
    V = logp.size(1)
    best, flat = (scores.exp().unsqueeze(1) + logp.exp()).reshape(-1).topk(k)
    return flat // V, flat % V, best.log()


def beam_step_token_only(scores, logp, k):
    V = logp.size(1)
    _, flat = logp.reshape(-1).topk(k)
    parent, tok = flat // V, flat % V
    return parent, tok, scores[parent] + logp[parent, tok]


def not_done(*args):
    raise NotImplementedError


def test_greedy_accepts_the_reference():
    result = checks.check_greedy(greedy_ok)
    assert result.ok and result.done, str(result)
    assert "all checks passed" in str(result)


def test_greedy_rejects_typical_mistakes():
    result = checks.check_greedy(greedy_drops_eos)
    assert not result.ok and "dropped the final <eos>" in str(result)
    result = checks.check_greedy(greedy_never_stops)
    assert not result.ok and "after <eos>" in str(result)
    result = checks.check_greedy(greedy_feeds_sos)
    assert not result.ok and "differ at step" in str(result)


def test_greedy_skeleton_is_not_done():
    result = checks.check_greedy(not_done)
    assert not result.ok and not result.done and "not done yet" in str(result)


def test_beam_step_accepts_the_reference():
    result = checks.check_beam_step(beam_step_ok)
    assert result.ok, str(result)


def test_beam_step_rejects_typical_mistakes():
    result = checks.check_beam_step(beam_step_per_beam)
    assert not result.ok and "per beam instead of" in str(result)
    result = checks.check_beam_step(beam_step_probabilities)
    assert not result.ok and "added probabilities instead of log-probabilities" in str(result)
    result = checks.check_beam_step(beam_step_token_only)
    assert not result.ok and "add the score of the hypothesis" in str(result)
    assert not checks.check_beam_step(not_done).done


def test_beam_step_reference_is_brute_force():
    g = torch.Generator().manual_seed(3)
    scores = torch.tensor([-0.1, -1.0, -2.5])
    logp = torch.log_softmax(torch.randn(3, 9, generator=g), -1)
    parent, tok, best = checks.beam_step_reference(scores, logp, 3)
    p2, t2, b2 = beam_step_ok(scores, logp, 3)
    assert parent.tolist() == p2.tolist() and tok.tolist() == t2.tolist()
    assert torch.allclose(best, b2)


def test_length_normalisation():
    assert checks.check_length_normalisation(lambda raw, n, a: raw / n ** a).ok
    result = checks.check_length_normalisation(lambda raw, n, a: raw * n ** a)
    assert not result.ok and "multiplied" in str(result)
    result = checks.check_length_normalisation(lambda raw, n, a: raw / n)
    assert not result.ok and "ignoring alpha" in str(result)
    result = checks.check_length_normalisation(lambda raw, n, a: raw / (n - 1).clamp(min=1) ** a)
    assert not result.ok
    assert not checks.check_length_normalisation(not_done).done


def test_inputs_changed_in_place_are_named():
    def accumulates_in_logp(scores, logp, k):
        logp += scores.unsqueeze(1)  # the caller's log-probabilities become totals
        best, flat = logp.reshape(-1).topk(k)
        return flat // logp.size(1), flat % logp.size(1), best

    result = checks.check_beam_step(accumulates_in_logp)
    assert not result.ok and result.done
    assert "your function changed its input `logp` in place" in str(result)

    def normalises_in_place(raw, lengths, alpha):
        raw /= lengths.double() ** alpha
        return raw

    assert "`raw` in place" in str(checks.check_length_normalisation(normalises_in_place))

    def greedy_in_training_mode(model, src, src_lengths, max_len):
        if hasattr(model, "train"):
            model.train()
        return greedy_ok(model, src, src_lengths, max_len)

    result = checks.check_greedy(greedy_in_training_mode)
    assert "switched `model` to training mode (model.train())" in str(result)
