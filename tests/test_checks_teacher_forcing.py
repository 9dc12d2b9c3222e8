"""lib.checks.teacher_forcing: each checker accepts the reference, rejects typical mistakes with
a message that names them, and reports an unfinished skeleton as not done."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from conftest import assert_rejects, skeleton

from lib.checks import teacher_forcing as checks
from lib.data import EOS, PAD, SOS, pad
from lib.head import masked_cross_entropy

torch.set_num_threads(1)


# --- make_decoder_io --------------------------------------------------------------------------


def make_decoder_io(targets):
    return pad([[SOS] + t for t in targets]), pad([t + [EOS] for t in targets])


def test_shift_accepts_reference():
    r = checks.check_shift(make_decoder_io)
    assert r.ok, str(r)


def test_shift_skeleton_is_not_done():
    r = checks.check_shift(skeleton)
    assert not r.ok and not r.done
    assert "not done yet" in str(r)


def test_shift_names_the_missing_shift():
    def wrong(targets):
        t = pad([t + [EOS] for t in targets])
        return t, t.clone()

    assert_rejects(checks.check_shift(wrong), "forgot to shift")


def test_shift_names_eos_in_the_inputs():
    def wrong(targets):  # <sos> y1 .. yn <eos> cut to length: shorter rows keep their <eos>
        return pad([[SOS] + t + [EOS] for t in targets])[:, :-1], make_decoder_io(targets)[1]

    assert_rejects(checks.check_shift(wrong), "<eos>", "only has to predict it")


def test_shift_names_the_swap_and_the_missing_column():
    assert_rejects(checks.check_shift(lambda ts: make_decoder_io(ts)[::-1]), "swapped")
    assert_rejects(checks.check_shift(lambda ts: (pad(ts), pad(ts))), "one column short")


def test_shift_names_wrong_padding():
    def wrong(targets):
        tgt_in, tgt_out = make_decoder_io(targets)
        tgt_out = pad([t + [EOS] for t in targets], value=-1)
        return tgt_in, tgt_out

    assert_rejects(checks.check_shift(wrong), "<pad>")


# --- choose_inputs ----------------------------------------------------------------------------


def choose_inputs(gold, own, ratio, generator):
    coin = torch.rand(gold.shape, generator=generator) < ratio
    return torch.where(coin, gold, own)


def test_choose_accepts_reference():
    r = checks.check_choose_inputs(choose_inputs)
    assert r.ok, str(r)


def test_choose_skeleton_is_not_done():
    assert not checks.check_choose_inputs(skeleton).done


def test_choose_names_one_coin_for_the_batch():
    def wrong(gold, own, ratio, generator):
        return gold if torch.rand(1, generator=generator).item() < ratio else own

    assert_rejects(checks.check_choose_inputs(wrong), "PER SENTENCE")


def test_choose_names_the_inverted_coin():
    def wrong(gold, own, ratio, generator):
        coin = torch.rand(gold.shape, generator=generator) < ratio
        return torch.where(coin, own, gold)

    assert_rejects(checks.check_choose_inputs(wrong), "ratio 1.0", "TRUE previous token")

    def inverted_rate(gold, own, ratio, generator):  # right at the extremes, wrong between
        if ratio in (0.0, 1.0):
            return gold if ratio else own
        coin = torch.rand(gold.shape, generator=generator) < 1 - ratio
        return torch.where(coin, gold, own)

    assert_rejects(checks.check_choose_inputs(inverted_rate), "wrong way round")


def test_choose_names_a_mixed_token():
    assert_rejects(checks.check_choose_inputs(lambda g, o, r, gen: (g + o) // 2), "neither")


# --- forced_loss ------------------------------------------------------------------------------


def forced_loss(model, batch):
    logits = model(batch.src, batch.src_lengths, batch.tgt_in)  # (B, T, V)
    return masked_cross_entropy(logits, batch.tgt_out)


def test_forced_loss_accepts_reference_and_stepping_agrees():
    r = checks.check_forced_loss(forced_loss)
    assert r.ok, str(r)
    # the checker's stepping reference equals lib.train.batch_loss's one-call path
    from lib.train import batch_loss

    model = checks.tiny_model(3)
    for batch in checks._batches():
        with torch.no_grad():
            assert torch.allclose(checks.stepping_loss(model, batch), batch_loss(model, batch),
                                  atol=1e-5)


def test_forced_loss_skeleton_is_not_done():
    assert not checks.check_forced_loss(skeleton).done


def test_forced_loss_names_tgt_out_as_input():
    def wrong(model, batch):
        return masked_cross_entropy(model(batch.src, batch.src_lengths, batch.tgt_out),
                                    batch.tgt_out)

    assert_rejects(checks.check_forced_loss(wrong), "fed tgt_out")


def test_forced_loss_names_unmasked_padding_and_sum():
    def unmasked(model, batch):
        logits = model(batch.src, batch.src_lengths, batch.tgt_in)
        return F.cross_entropy(logits.reshape(-1, logits.size(-1)), batch.tgt_out.reshape(-1))

    def summed(model, batch):
        return masked_cross_entropy(model(batch.src, batch.src_lengths, batch.tgt_in),
                                    batch.tgt_out, reduction="sum")

    assert_rejects(checks.check_forced_loss(unmasked), "<pad>")
    assert_rejects(checks.check_forced_loss(summed), "SUM")


def test_forced_loss_names_the_stepping_loop():
    def stepping(model, batch):
        return checks.stepping_loss(model, batch)

    assert_rejects(checks.check_forced_loss(stepping), "one call")
    assert PAD == 0


# --- inputs changed in place ------------------------------------------------------------------


def test_inputs_changed_in_place_are_named():
    def appends_eos(targets):
        for t in targets:
            t.append(EOS)  # the caller's reference lists grow an <eos>
        return pad([[SOS] + t[:-1] for t in targets]), pad(targets)

    assert_rejects(checks.check_shift(appends_eos), "changed its input `targets[0]` in place")

    def overwrites_own(gold, own, ratio, generator):
        coin = torch.rand(gold.shape, generator=generator) < ratio
        own[coin] = gold[coin]  # the model's predictions, overwritten
        return own

    assert_rejects(checks.check_choose_inputs(overwrites_own), "`own` in place")

    def takes_a_training_step(model, batch):
        loss = forced_loss(model, batch)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()  # the value is right, but the model has changed
        return loss

    assert_rejects(checks.check_forced_loss(takes_a_training_step),
                   "changed the weights of `model` in place")
