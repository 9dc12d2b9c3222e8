"""lib.train and lib.evaluate: determinism by seed, the teacher-forcing paths against loops
written here, the learning-rate schedule by hand, the history, and BLEU against all references.
Every model here is tiny (hidden 16) and trains for a few steps."""

from __future__ import annotations

import functools
import hashlib
import math

import pytest
import sacrebleu
import torch
import torch.nn.functional as F

from lib import bleu, data
from lib import evaluate as ev
from lib import train as tr
from lib.course import checkpoint
from lib.data import EOS, PAD, Vocab
from lib.experiments import toy
from lib.train import History, TrainConfig, batch_loss, lr_at

PAIRS = [("I am here.", "Je suis là."), ("You are here.", "Tu es là."),
         ("He is here.", "Il est là."), ("We are here.", "Nous sommes là."),
         ("Go away!", "Va-t'en !"), ("Who is it?", "Qui est-ce ?"),
         ("I am tired.", "Je suis fatigué."), ("You are tired.", "Tu es fatigué.")]
SRC = Vocab.build([data.tokenize(en) for en, _ in PAIRS])
TGT = Vocab.build([data.tokenize(fr) for _, fr in PAIRS])
EXAMPLES = data.encode_pairs(PAIRS, SRC, TGT)
N_TARGET_TOKENS = sum(len(t) + 1 for _, t in EXAMPLES)  # + <eos>


pytestmark = pytest.mark.usefixtures("one_thread")  # tiny models: see conftest


tiny_model = functools.partial(toy.tiny_model, src_vocab=SRC, tgt_vocab=TGT, dropout=0.1,
                               max_tgt_len=8)


def quick(**kw):
    base = dict(epochs=3, batch_size=3, lr=5e-3, warmup_steps=2, seed=7)
    return TrainConfig(**{**base, **kw})


@pytest.fixture(autouse=True)
def cpu_only(monkeypatch):
    monkeypatch.delenv("SEQ2SEQ_DEVICE", raising=False)


# ---------------------------------------------------------------------------------------------
# Determinism
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("teacher_forcing", [1.0, 0.5])
def test_same_seed_gives_identical_weights_and_checkpoint(teacher_forcing, tmp_path):
    states, digests = [], []
    for run in range(2):
        model = tiny_model()
        tr.train(model, EXAMPLES, quick(teacher_forcing=teacher_forcing), device="cpu",
                 progress=False)
        states.append(model.state_dict())
        # same file name: torch.save records it inside the zip
        path = checkpoint.save(model, tmp_path / f"run{run}" / "model.pt")
        digests.append(hashlib.sha256(path.read_bytes()).hexdigest())
    a, b = states
    assert a.keys() == b.keys()
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert digests[0] == digests[1]  # byte-identical checkpoint files
    # ...and training really changed the weights
    start = tiny_model().state_dict()
    assert not all(torch.equal(a[k], start[k]) for k in a)

    other = tiny_model()
    tr.train(other, EXAMPLES, quick(teacher_forcing=teacher_forcing, seed=8), device="cpu",
             progress=False)
    c = other.state_dict()
    assert not all(torch.equal(a[k], c[k]) for k in a)


# ---------------------------------------------------------------------------------------------
# The moving average of the weights
# ---------------------------------------------------------------------------------------------


def test_weight_average_by_hand():
    layer = torch.nn.Linear(1, 1, bias=False)
    layer.weight.data.fill_(1.0)
    avg = tr.WeightAverage(layer, decay=0.9)
    layer.weight.data.fill_(3.0)
    avg.update()  # d = min(0.9, 2 / 11): 2/11 * 1 + 9/11 * 3
    assert avg.average[0].item() == pytest.approx(2 / 11 + 27 / 11)
    expected = 2 / 11 + 27 / 11
    for n, w in enumerate([-1.0, 2.0, 5.0] + [4.0] * 100, start=2):
        layer.weight.data.fill_(w)
        avg.update()
        d = min(0.9, (1 + n) / (10 + n))  # reaches 0.9 from n = 80 on
        expected = d * expected + (1 - d) * w
        assert avg.average[0].item() == pytest.approx(expected)
    with avg.applied():
        assert layer.weight.item() == pytest.approx(expected)
    assert layer.weight.item() == 4.0  # the last weights are back
    avg.copy_to_model()
    assert layer.weight.item() == pytest.approx(expected)


def test_training_with_ema_returns_and_evaluates_the_average(monkeypatch):
    """The average is computed from the weights after every step (recorded here), the
    validation checks and on_eval see it, and it never feeds back into training: the last
    weights are those of the same run without it."""
    after_step, averages = [], []
    update = tr.WeightAverage.update

    def recording(self):
        after_step.append([p.detach().clone() for p in self.params])
        update(self)
        averages.append([a.clone() for a in self.average])

    monkeypatch.setattr(tr.WeightAverage, "update", recording)
    seen_by_eval = []

    def on_eval(model, hist):
        seen_by_eval.append((hist.eval_step[-1], [p.detach().clone() for p in model.parameters()]))

    decay = 0.5
    model = tiny_model()
    start = [p.detach().clone() for p in model.parameters()]
    tr.train(model, EXAMPLES, quick(ema=decay, eval_every=4), valid_pairs=ev_pairs(),
             device="cpu", progress=False, on_eval=on_eval)
    expected = start
    for n, weights in enumerate(after_step, start=1):
        d = min(decay, (1 + n) / (10 + n))
        expected = [d * e + (1 - d) * w for e, w in zip(expected, weights)]
    got = list(model.parameters())
    assert all(torch.allclose(g, e, atol=1e-6) for g, e in zip(got, expected))
    assert seen_by_eval and all(
        all(torch.equal(p, a) for p, a in zip(params, averages[step - 1]))
        for step, params in seen_by_eval)

    plain = tiny_model()
    tr.train(plain, EXAMPLES, quick(eval_every=4), valid_pairs=ev_pairs(), device="cpu",
             progress=False)
    assert all(torch.equal(p, w) for p, w in zip(plain.parameters(), after_step[-1]))
    assert not all(torch.equal(p, g) for p, g in zip(plain.parameters(), got))


@pytest.mark.parametrize("ema", [1.0, -0.1, 1.5])
def test_bad_ema_is_refused(ema):
    with pytest.raises(ValueError, match=r"ema \(the weight-average decay\)"):
        tr.train(tiny_model(), EXAMPLES, quick(ema=ema), device="cpu", progress=False)


def ev_pairs():
    return [(en, [fr]) for en, fr in PAIRS[:3]]


# ---------------------------------------------------------------------------------------------
# batch_loss: the fast path, the stepping path and the coins
# ---------------------------------------------------------------------------------------------


def _stepped_loss(model, batch, feed):
    """Decoder stepped by hand; feed(t, true_next, own_prediction) picks the next input."""
    _, state, context = model.encode(batch.src, batch.src_lengths)
    prev = batch.tgt_in[:, 0]
    nll, count = 0.0, 0
    T = batch.tgt_in.size(1)
    for t in range(T):
        logits, state = model.decoder.step(prev, state, context)  # (B, V)
        logp = F.log_softmax(logits, dim=-1)
        y = batch.tgt_out[:, t]
        real = y != PAD
        nll = nll - logp[real, y[real]].sum()
        count += int(real.sum())
        if t + 1 < T:
            prev = feed(t, batch.tgt_in[:, t + 1], logits.argmax(-1))
    return nll / count


@pytest.fixture
def batch():
    return data.collate(EXAMPLES[:5])


def _count_steps(model, monkeypatch):
    """Record the number of time steps of each decoder GRU call."""
    calls = []
    real = model.decoder.features

    def spy(tgt_in, *args):
        calls.append(tgt_in.size(1))
        return real(tgt_in, *args)

    monkeypatch.setattr(model.decoder, "features", spy)
    return calls


def test_teacher_forcing_one_equals_stepping_with_all_true_tokens(batch, monkeypatch):
    model = tiny_model(dropout=0.0)
    fast = batch_loss(model, batch, teacher_forcing=1.0)
    by_hand = _stepped_loss(model, batch, lambda t, true, own: true)
    torch.testing.assert_close(fast, by_hand, atol=1e-5, rtol=0)
    # The library's own stepping path, with every coin heads (float32 rand < 1 - 1e-9 == 1.0):
    calls = _count_steps(model, monkeypatch)
    stepped = batch_loss(model, batch, 1 - 1e-9, torch.Generator().manual_seed(0))
    assert calls == [1] * batch.tgt_in.size(1)  # it did step
    torch.testing.assert_close(stepped, fast, atol=1e-5, rtol=0)
    # and the gradients agree too
    g_fast = torch.autograd.grad(fast, list(model.parameters()), allow_unused=True)
    g_step = torch.autograd.grad(stepped, list(model.parameters()), allow_unused=True)
    for a, b in zip(g_fast, g_step):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-4)


def test_fast_path_is_one_decoder_call(batch, monkeypatch):
    model = tiny_model(dropout=0.0)
    calls = _count_steps(model, monkeypatch)
    batch_loss(model, batch, teacher_forcing=1.0)
    assert calls == [batch.tgt_in.size(1)]


def test_teacher_forcing_zero_feeds_the_models_own_predictions(batch):
    model = tiny_model(dropout=0.0)
    got = batch_loss(model, batch, 0.0, torch.Generator().manual_seed(0))
    torch.testing.assert_close(got, _stepped_loss(model, batch, lambda t, true, own: own),
                               atol=1e-5, rtol=0)
    assert (got - batch_loss(model, batch, 1.0)).abs() > 1e-4  # a different loss


def test_teacher_forcing_half_flips_a_coin_per_sentence_and_step(batch):
    model = tiny_model(dropout=0.0)
    gen = torch.Generator().manual_seed(11)
    coins = torch.Generator().manual_seed(11)
    heads = []

    def feed(t, true, own):
        coin = torch.rand(true.size(0), generator=coins) < 0.5
        heads.append(coin)
        return torch.where(coin, true, own)

    expected = _stepped_loss(model, batch, feed)
    torch.testing.assert_close(batch_loss(model, batch, 0.5, gen), expected, atol=1e-5, rtol=0)
    flips = torch.stack(heads)
    assert 0 < int(flips.sum()) < flips.numel()  # both kinds of input were fed


# ---------------------------------------------------------------------------------------------
# train(): learning, schedule, clipping, history, validation
# ---------------------------------------------------------------------------------------------


def test_loss_decreases_on_a_tiny_overfit_set():
    model = tiny_model(dropout=0.0)
    full = data.collate(EXAMPLES)
    model.eval()
    before = batch_loss(model, full).item()
    assert before == pytest.approx(math.log(len(TGT)), rel=0.1)  # untrained: about uniform
    hist = tr.train(model, EXAMPLES, TrainConfig(epochs=40, batch_size=8, lr=2e-2,
                                                 warmup_steps=3, seed=0),
                    device="cpu", progress=False, log_every=5)
    after = batch_loss(model, full).item()
    assert after < 0.5 * before
    assert hist.loss[-1] < 0.7 * hist.loss[0]
    assert not model.training  # train() leaves the model in eval mode


def test_history_fields_are_filled_and_monotone():
    cfg = quick(epochs=2)  # 8 examples, batches of 3: 3 steps per epoch
    hist = tr.train(tiny_model(), EXAMPLES, cfg, device="cpu", progress=False, log_every=1)
    assert hist.step == [1, 2, 3, 4, 5, 6]
    assert len(hist.loss) == len(hist.tokens) == len(hist.seconds) == len(hist.lr) == 6
    assert all(math.isfinite(v) and v > 0 for v in hist.loss)
    assert all(b > a for a, b in zip(hist.tokens, hist.tokens[1:]))
    assert hist.tokens[2] == N_TARGET_TOKENS and hist.tokens[-1] == 2 * N_TARGET_TOKENS
    assert hist.seconds[0] > 0 and all(b >= a for a, b in zip(hist.seconds, hist.seconds[1:]))
    assert hist.lr == [lr_at(s, 6, cfg) for s in range(6)]
    assert hist.tokens_per_second == hist.tokens[-1] / hist.seconds[-1]
    assert hist.eval_step == hist.valid_bleu == hist.eval_seconds == []
    assert set(hist.to_dict()) == {"step", "loss", "tokens", "seconds", "lr", "eval_step",
                                   "eval_seconds", "valid_bleu"}
    # the running loss is an exponential average of the batch losses: it starts at the first
    first = tr.train(tiny_model(), EXAMPLES, quick(epochs=2), device="cpu", progress=False,
                     log_every=1)
    assert first.loss == hist.loss


def test_history_logs_every_n_steps_and_the_last_step():
    hist = tr.train(tiny_model(), EXAMPLES, quick(epochs=3), device="cpu", progress=False,
                    log_every=4)
    assert hist.step == [4, 8, 9]
    assert History().tokens_per_second != History().tokens_per_second  # nan when empty


@pytest.mark.parametrize("teacher_forcing", [1.0, 0.5])
def test_label_smoothing_reaches_the_loss_on_both_paths(batch, teacher_forcing):
    """batch_loss(label_smoothing=eps) == a hand mix of the one-hot and the uniform targets."""
    model, eps = tiny_model(dropout=0.0), 0.2
    gen = torch.Generator().manual_seed(3)
    got = batch_loss(model, batch, teacher_forcing, gen, label_smoothing=eps)
    # the same coins again, the per-token terms by hand
    plain = batch_loss(model, batch, teacher_forcing, torch.Generator().manual_seed(3))
    uniform = _mean_uniform_nll(model, batch, teacher_forcing)
    torch.testing.assert_close(got, (1 - eps) * plain + eps * uniform, atol=1e-5, rtol=0)


def _mean_uniform_nll(model, batch, teacher_forcing):
    """Mean over real target positions of mean_v -log P(v), with the coins of seed 3."""
    if teacher_forcing >= 1.0:
        logits = model(batch.src, batch.src_lengths, batch.tgt_in)  # (B, T, V)
    else:
        gen = torch.Generator().manual_seed(3)
        _, state, context = model.encode(batch.src, batch.src_lengths)
        prev, steps = batch.tgt_in[:, 0], []
        for t in range(batch.tgt_in.size(1)):
            out, state = model.decoder.step(prev, state, context)
            steps.append(out)
            if t + 1 < batch.tgt_in.size(1):
                coin = torch.rand(prev.size(0), generator=gen) < teacher_forcing
                prev = torch.where(coin, batch.tgt_in[:, t + 1], out.argmax(-1))
        logits = torch.stack(steps, 1)
    real = batch.tgt_out != PAD
    return -F.log_softmax(logits, -1).mean(-1)[real].mean()


def test_train_passes_its_label_smoothing_to_the_loss(monkeypatch):
    seen = []
    real = tr.batch_loss

    def spy(*args):
        seen.append(args[4:])  # (label_smoothing, shortlist, samples)
        return real(*args)

    monkeypatch.setattr(tr, "batch_loss", spy)
    tr.train(tiny_model(), EXAMPLES, quick(label_smoothing=0.1, shortlist=5, samples=2),
             device="cpu", progress=False)
    assert seen and all(args == (0.1, 5, 2) for args in seen)


@pytest.mark.parametrize("teacher_forcing", [1.0, 0.5])
def test_shortlist_reaches_the_loss_on_both_paths(batch, teacher_forcing):
    """batch_loss(shortlist=n) == shortlist_cross_entropy on the decoder states by hand."""
    from lib.head import shortlist_cross_entropy

    model = tiny_model(dropout=0.0)
    full = batch_loss(model, batch, teacher_forcing, torch.Generator().manual_seed(3))
    same = batch_loss(model, batch, teacher_forcing, torch.Generator().manual_seed(3),
                      shortlist=len(TGT))
    torch.testing.assert_close(same, full, atol=1e-6, rtol=0)  # every word listed: no change
    drawn = batch_loss(model, batch, teacher_forcing, torch.Generator().manual_seed(3),
                       shortlist=4, samples=len(TGT))
    torch.testing.assert_close(drawn, full, atol=1e-6, rtol=0)  # every rare word drawn
    # the same coins again; the decoder's states collected by hand
    gen = torch.Generator().manual_seed(3)
    _, state, context = model.encode(batch.src, batch.src_lengths)
    prev, states = batch.tgt_in[:, 0], []
    for t in range(batch.tgt_in.size(1)):
        logits, state = model.decoder.step(prev, state, context)
        states.append(state[-1])  # (B, H): the top layer's s_t^L (no dropout here)
        if t + 1 < batch.tgt_in.size(1):
            coin = torch.rand(prev.size(0), generator=gen) < teacher_forcing
            prev = torch.where(coin, batch.tgt_in[:, t + 1], logits.argmax(-1))
    expected = shortlist_cross_entropy(model.decoder.head, torch.stack(states, 1),
                                       batch.tgt_out, 4)
    got = batch_loss(model, batch, teacher_forcing, torch.Generator().manual_seed(3),
                     shortlist=4)
    torch.testing.assert_close(got, expected, atol=1e-6, rtol=0)
    assert got < full  # fewer words in the softmax's denominator


@pytest.mark.parametrize("field", ["shortlist", "samples"])
@pytest.mark.parametrize("bad", [-1, 2.5, True, "all"])
def test_bad_shortlist_in_the_config_is_refused(field, bad):
    with pytest.raises(ValueError, match=f"{field} must be an int >= 0"):
        TrainConfig(**{"shortlist": 10, field: bad})


def test_samples_need_a_shortlist():
    with pytest.raises(ValueError, match="samples .* needs a shortlist > 0"):
        TrainConfig(samples=100)


def test_fractional_epochs_stop_inside_the_last_epoch():
    cfg = quick(epochs=0.5, batch_size=2)  # 4 batches per epoch -> 2 steps
    hist = tr.train(tiny_model(), EXAMPLES, cfg, device="cpu", progress=False, log_every=1)
    assert hist.step == [1, 2]
    assert hist.lr == [lr_at(0, 2, cfg), lr_at(1, 2, cfg)]


def test_gradients_are_clipped_every_step(monkeypatch):
    seen = []
    real = torch.nn.utils.clip_grad_norm_

    def spy(parameters, max_norm, *args, **kwargs):
        parameters = list(parameters)
        total = real(parameters, max_norm, *args, **kwargs)
        after = torch.norm(torch.stack([p.grad.norm() for p in parameters if p.grad is not None]))
        seen.append((max_norm, float(total), float(after)))
        return total

    monkeypatch.setattr(torch.nn.utils, "clip_grad_norm_", spy)
    tr.train(tiny_model(), EXAMPLES, quick(clip=0.05), device="cpu", progress=False)
    assert len(seen) == 9
    assert all(m == 0.05 for m, _, _ in seen)
    assert any(before > 0.05 for _, before, _ in seen)  # clipping had work to do
    assert all(after <= 0.05 * (1 + 1e-4) for _, _, after in seen)


def test_validation_bleu_at_each_epoch_end_or_every_n_steps(monkeypatch):
    valid = [("I am here.", ["Je suis là.", "Je suis ici."]), ("Who is it?", ["Qui est-ce ?"]),
             ("Go away!", ["Va-t'en !"])]
    hist = tr.train(tiny_model(), EXAMPLES, quick(epochs=2), valid_pairs=valid, device="cpu",
                    progress=False)
    assert hist.eval_step == [3, 6]
    assert len(hist.valid_bleu) == len(hist.eval_seconds) == 2
    assert all(0.0 <= b <= 100.0 for b in hist.valid_bleu)
    assert hist.eval_seconds[0] <= hist.eval_seconds[1]

    asked = []
    monkeypatch.setattr(tr, "evaluate_bleu", lambda model, pairs: asked.append(pairs) or 12.5)
    hist = tr.train(tiny_model(), EXAMPLES, quick(epochs=2, eval_every=2, eval_sentences=2),
                    valid_pairs=valid, device="cpu", progress=False)
    assert hist.eval_step == [2, 4, 6] and hist.valid_bleu == [12.5] * 3
    assert asked == [valid[:2]] * 3


def test_progress_bar_shows_the_running_loss(capsys):
    hist = tr.train(tiny_model(), EXAMPLES, quick(epochs=1), device="cpu", progress=True,
                    log_every=1)
    err = capsys.readouterr().err
    assert "training" in err and "3/3" in err
    assert f"loss={hist.loss[-1]:.3f}" in err
    tr.train(tiny_model(), EXAMPLES, quick(epochs=1), device="cpu", progress=False)
    assert capsys.readouterr().err == ""


def test_train_refuses_an_unknown_device():
    with pytest.raises(ValueError, match="unknown device 'banana'"):
        tr.train(tiny_model(), EXAMPLES, quick(), device="banana", progress=False)


# ---------------------------------------------------------------------------------------------
# lr_at by hand
# ---------------------------------------------------------------------------------------------


def test_lr_schedule_by_hand():
    cfg = TrainConfig(lr=1.0, warmup_steps=4, final_lr_fraction=0.1)
    total = 14  # 4 warm-up steps, then 10 steps of cosine decay
    assert [lr_at(s, total, cfg) for s in range(4)] == [0.25, 0.5, 0.75, 1.0]
    assert lr_at(4, total, cfg) == pytest.approx(1.0)  # cosine starts at the top
    assert lr_at(9, total, cfg) == pytest.approx(0.55)  # halfway: 0.1 + 0.9 * 0.5
    # a quarter of the way: 0.1 + 0.9 * (1 + cos(pi/4)) / 2
    assert lr_at(6.5, total, cfg) == pytest.approx(0.1 + 0.45 * (1 + math.sqrt(0.5)))
    assert lr_at(14, total, cfg) == pytest.approx(0.1)  # the floor at the last step...
    assert lr_at(100, total, cfg) == pytest.approx(0.1)  # ...and after it
    values = [lr_at(s, total, cfg) for s in range(4, 15)]
    assert all(b < a for a, b in zip(values, values[1:]))
    no_warmup = TrainConfig(lr=2e-3, warmup_steps=0, final_lr_fraction=0.0)
    assert lr_at(0, 10, no_warmup) == pytest.approx(2e-3)
    assert lr_at(10, 10, no_warmup) == pytest.approx(0.0)


def test_configs_serialise():
    assert TrainConfig().to_dict()["teacher_forcing"] == 1.0
    assert TrainConfig(seed=3).to_dict() == {**TrainConfig().to_dict(), "seed": 3}


# ---------------------------------------------------------------------------------------------
# lib.evaluate: BLEU against all references
# ---------------------------------------------------------------------------------------------

HYPS = ["Je suis là.", "Qui est-ce ?", "Il fait beau aujourd'hui.", "Va-t'en !"]
REFS = [["Je suis ici.", "Je suis là.", "J'y suis."], ["Qui est-ce ?"],
        ["Il fait beau.", "Le temps est beau aujourd'hui."], ["Va-t'en !", "Allez-vous-en !"]]


def test_reference_streams_transposes_and_pads_with_none():
    assert ev.reference_streams(REFS) == [
        ["Je suis ici.", "Qui est-ce ?", "Il fait beau.", "Va-t'en !"],
        ["Je suis là.", None, "Le temps est beau aujourd'hui.", "Allez-vous-en !"],
        ["J'y suis.", None, None, None],
    ]
    assert ev.reference_streams([["a"], ["b"]]) == [["a", "b"]]


def test_sacrebleu_score_equals_lib_bleu_with_per_sentence_references():
    ours = bleu.corpus_bleu(HYPS, REFS)
    theirs = ev.sacrebleu_score(HYPS, REFS)
    assert theirs.score == pytest.approx(ours.score, abs=1e-9)
    assert 0 < theirs.score < 100
    # the extra references count: scoring against the first one alone is lower
    first_only = sacrebleu.corpus_bleu(HYPS, [[r[0] for r in REFS]]).score
    assert first_only < theirs.score
    assert ev.sacrebleu_score(HYPS, [[h] for h in HYPS]).score == pytest.approx(100.0)


class _EchoModel:
    """Stands in for Seq2Seq: 'translates' by upper-casing, and records its batches."""

    def __init__(self, answers=None):
        self.batches = []
        self.answers = answers or {}

    def translate(self, sentences, beam_size=1, **kwargs):
        self.batches.append((list(sentences), beam_size, kwargs))
        return [self.answers.get(s, s.upper()) for s in sentences]


def test_translate_all_keeps_input_order_and_sorts_batches_by_length():
    sources = ["ccc", "a", "bbbbb", "dd", "e", "ffff"]
    model = _EchoModel()
    out = ev.translate_all(model, sources, beam_size=3, batch_size=4, max_len=9)
    assert out == [s.upper() for s in sources]
    assert [b[0] for b in model.batches] == [["a", "e", "dd", "ccc"], ["ffff", "bbbbb"]]
    assert all(b[1] == 3 and b[2] == {"max_len": 9} for b in model.batches)


def test_evaluate_bleu_scores_against_all_references():
    pairs = [(f"src{i}", refs) for i, refs in enumerate(REFS)]
    # a system that always writes the *last* reference scores 100 only if all are used
    model = _EchoModel({f"src{i}": refs[-1] for i, refs in enumerate(REFS)})
    assert ev.evaluate_bleu(model, pairs) == pytest.approx(100.0)
    model = _EchoModel({f"src{i}": h for i, h in enumerate(HYPS)})
    assert ev.evaluate_bleu(model, pairs) == pytest.approx(bleu.corpus_bleu(HYPS, REFS).score)


def test_untrained_model_translations_are_scored():
    model = tiny_model().eval()
    pairs = [(en, [fr]) for en, fr in PAIRS[:3]]
    hyps = ev.translate_all(model, [en for en, _ in pairs])
    assert hyps == model.translate([en for en, _ in pairs])
    assert ev.evaluate_bleu(model, pairs) == pytest.approx(
        bleu.corpus_bleu(hyps, [refs for _, refs in pairs]).score)
    assert EOS not in [model.tgt_vocab.stoi.get(w) for h in hyps for w in h.split()]
