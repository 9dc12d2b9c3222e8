"""Checkers for the greedy-vs-beam-search chapter's exercises.

* `check_greedy(fn)`: greedy decoding of one sentence, `fn(model, src, src_lengths, max_len)`
  -> list of token ids (ending with <eos> if the sentence ended), against `lib.search.greedy`
  on hand-set probability tables (`lib.experiments.toy.TableModel`) and on small random networks.
* `check_greedy_trap(fn)`: `fn() -> table`, a probability table (`lib.experiments.toy.TableModel`)
  on which greedy's output is at most half as likely as the best output, and a beam of two
  finds it.
* `check_one_parent_step(fn)`: `fn() -> (scores, logp)`, one step of two live hypotheses on
  which both survivors of a beam of two extend the less likely one (ranked by brute force).
* `check_parting(fn)`: where greedy's output and the beam's part, `fn(greedy_steps,
  beam_steps)` -> (step t from 1, greedy's lead in log P at t, how much less greedy gains after t).
* `check_beam_search(fn)`: a whole beam search for one sentence with a pool of finished
  hypotheses and one decoder call per step for all live hypotheses,
  `fn(model, src, src_lengths, k, max_len)` -> (ids, log P), against `beam_search_reference`
  and, when k keeps every hypothesis, exhaustive search.

Each returns a `lib.checks.harness.CheckResult` that says in words what is wrong. The chapter's
two length penalties, `check_length_normalisation` and `check_gnmt`, are checked in
`lib.checks.length_penalty` and imported here with the others.
"""

from __future__ import annotations

import functools
import math

import torch

from lib.checks.harness import (
    DECODING_HINT,
    CheckResult,
    Mismatch,
    call,
    expect_shape,
    run_checks,
    tokens_text,
)
from lib.checks.length_penalty import (  # the chapter imports them from here
    check_gnmt as check_gnmt,
)
from lib.checks.length_penalty import (
    check_length_normalisation as check_length_normalisation,
)
from lib.data import EOS, PAD, SOS
from lib.exhaustive import exhaustive_search
from lib.experiments import toy
from lib.experiments.toy import TableModel, greedy_loses_table, walkthrough_table
from lib.search import (
    beam_search,
    greedy,
    greedy_with_scores,
    log_probs,
    sequence_log_prob,
)
from lib.validate import is_number

# ---------------------------------------------------------------------------------------------
# Test models
# ---------------------------------------------------------------------------------------------


# tiny_model(seed): a small random Seq2Seq (hidden 32) with weights x3, so its answers differ
# from sentence to sentence. Not trained: its next-token distributions stay far from one-hot.
tiny_model = functools.partial(toy.tiny_model, src_words=12, tgt_words=6, emb_dim=16, hidden=32,
                               max_tgt_len=8, scale=3.0)


def _tables():
    return [("the table where greedy loses", TableModel(greedy_loses_table())),
            ("the k = 2 walk-through table", TableModel(walkthrough_table()))]


# ---------------------------------------------------------------------------------------------
# Exercise: greedy decoding
# ---------------------------------------------------------------------------------------------


def _as_ids(got) -> list[int]:
    if isinstance(got, torch.Tensor):
        if got.dim() == 2 and got.size(0) == 1:
            got = got[0]
        if got.dim() != 1:
            raise Mismatch(f"return one sentence's token ids as a list (or a 1-D tensor), got "
                           f"a tensor of shape {tuple(got.shape)}")
        got = got.tolist()
    if not isinstance(got, (list, tuple)) or not all(isinstance(i, int) for i in got):
        raise Mismatch(f"return a list of token ids (ints), got {type(got).__name__}: "
                       f"{str(got)[:80]}")
    return [i for i in got if i != PAD]


def _greedy_case(fn, name, model, src, lengths, max_len) -> None:
    expected = [i for i in greedy(model, src, lengths, max_len=max_len)[0].tolist() if i != PAD]
    case = f"{name} (max_len={max_len})"
    where = f"on {case}"
    got = _as_ids(call(fn, model, src, lengths, max_len,
                       names=("model", "src", "src_lengths", "max_len"), hint=DECODING_HINT,
                       where=case))
    if got == expected:
        return
    if SOS in got or (got and got[0] == SOS):
        raise Mismatch(f"{where} your output contains <sos>: it is the decoder's first input, "
                       f"not a generated token (and <pad>/<sos> are never generated)")
    if EOS in got and got.index(EOS) < len(got) - 1:
        raise Mismatch(f"{where} you kept going after <eos>: stop as soon as the decoder "
                       f"writes <eos> (got {tokens_text(model, got)})")
    if expected and expected[-1] == EOS and got == expected[:-1]:
        raise Mismatch(f"{where} you dropped the final <eos>: keep it, so that the caller "
                       f"knows the sentence ended (expected {tokens_text(model, expected)})")
    if len(got) > max_len:
        raise Mismatch(f"{where} you wrote {len(got)} tokens: max_len={max_len} caps the "
                       f"number of generated tokens, <eos> included")
    t = next((i for i, (a, b) in enumerate(zip(got, expected)) if a != b),
             min(len(got), len(expected)))
    hint = ""
    if t > 0 and t < len(got) and got[t] == got[0] and expected[t] != got[t]:
        hint = " (are you feeding <sos> again instead of the token just chosen?)"
    elif t < len(got) and got[t] in (PAD, SOS):
        hint = " (<pad> and <sos> must never be generated: mask them out)"
    raise Mismatch(f"{where} your tokens first differ at step {t + 1}: got "
                   f"{tokens_text(model, got)}, expected {tokens_text(model, expected)}{hint}")


def check_greedy(fn) -> CheckResult:
    """Check `fn(model, src (1, S), src_lengths (1,), max_len) -> list of ids` against greedy."""
    def on_tables():
        for name, model in _tables():
            src, lengths = model.inputs()
            _greedy_case(fn, name, model, src, lengths, max_len=5)
        return "greedy on the hand-set probability tables"

    def on_networks():
        g = torch.Generator().manual_seed(1)
        for seed in range(3):
            model = tiny_model(seed)
            for _ in range(4):
                n = int(torch.randint(2, 7, (1,), generator=g))
                src = torch.randint(4, len(model.src_vocab), (1, n), generator=g)
                _greedy_case(fn, f"random network {seed}", model, src, torch.tensor([n]),
                             max_len=8)
        return "greedy on 12 sentences of small random networks"

    def length_cap():
        model = tiny_model(0)
        src = torch.tensor([[5, 6, 7]])
        for max_len in (1, 2):
            _greedy_case(fn, "a random network", model, src, torch.tensor([3]), max_len)
        return "the length cap max_len"

    return run_checks("greedy decoding", on_tables, on_networks, length_cap)


# ---------------------------------------------------------------------------------------------
# Exercise: make greedy lose
# ---------------------------------------------------------------------------------------------

TRAP_RATIO = 0.5  # greedy's output may be at most this fraction as likely as the best output


def check_greedy_trap(fn) -> CheckResult:
    """Check `fn() -> table` (a `lib.experiments.toy.TableModel` table): greedy decoding's output
    is at most
    TRAP_RATIO times as likely as the most likely output (exhaustive search, the oracle), and a
    beam of two finds that output. Names the usual misses: a table TableModel refuses, greedy
    already right, greedy not far enough behind, and a best output a beam of two drops."""
    max_len = 4

    def trap():
        table = call(fn, names=())
        if not isinstance(table, dict):
            raise Mismatch(f"return the table, a dict {{prefix tuple: {{token: probability}}}}, "
                           f"got {type(table).__name__}")
        try:
            model = TableModel(table, max_len=max_len)
        except (ValueError, TypeError, AttributeError) as e:
            raise Mismatch(f"this is not a valid table: {e}") from None
        src, lengths = model.inputs()
        ids, raw = greedy_with_scores(model, src, lengths)
        greedy_ids = [i for i in ids[0].tolist() if i != PAD]
        best = exhaustive_search(model, src, lengths, max_len).nbest[0][0]  # (ids, score, raw)
        best_ids, best_raw = [i for i in best[0] if i != PAD], best[2]
        p_greedy, p_best = math.exp(float(raw[0])), math.exp(best_raw)
        said = (f"greedy writes {tokens_text(model, greedy_ids)} (P = {p_greedy:.3f}), the most "
                f"likely output is {tokens_text(model, best_ids)} (P = {p_best:.3f})")
        if greedy_ids == best_ids or p_greedy >= p_best - 1e-9:
            raise Mismatch(f"{said}: greedy already finds the best output. Make the best first "
                           f"token lead to uncertain continuations, and a slightly less likely "
                           f"first token to a continuation the model is sure of")
        if p_greedy > TRAP_RATIO * p_best:
            raise Mismatch(f"{said}: greedy loses, but its output is {p_greedy / p_best:.0%} "
                           f"as likely as the best; make it at most {TRAP_RATIO:.0%} (spread "
                           f"greedy's continuations more thinly, or make the other path surer)")
        found = beam_search(model, src, lengths, beam_size=2, alpha=0.0, margin=None)
        beam_ids = [i for i in found.tokens[0].tolist() if i != PAD]
        if beam_ids != best_ids:
            first = model.tgt_vocab.itos[best_ids[0]]
            raise Mismatch(f"{said}, but a beam of two answers {tokens_text(model, beam_ids)}: it "
                           f"drops the best output's prefix on the way (is its first token "
                           f"{first} among the two most likely first tokens?)")
        return (f"{said}, {p_greedy / p_best:.0%} as likely; a beam of two finds the best "
                f"output")

    return run_checks("make greedy lose", trap)


# ---------------------------------------------------------------------------------------------
# Exercise: a step whose two survivors both extend the less likely hypothesis
# ---------------------------------------------------------------------------------------------


def _as_step(got) -> tuple[torch.Tensor, torch.Tensor]:
    if not isinstance(got, (tuple, list)) or len(got) != 2:
        raise Mismatch("return two tensors: (scores (2,), logp (2, V))")
    try:
        scores, logp = (torch.as_tensor(x, dtype=torch.float64) for x in got)
    except (TypeError, ValueError, RuntimeError):
        raise Mismatch("return two tensors of numbers: (scores (2,), logp (2, V))") from None
    expect_shape("scores", scores, (2,))
    if logp.dim() != 2 or logp.size(0) != 2 or logp.size(1) < 2:
        raise Mismatch(f"logp has shape {tuple(logp.shape)}, expected (2, V): one row of "
                       f"next-token log-probabilities per hypothesis, V >= 2 tokens")
    return scores, logp


def _valid_step(scores: torch.Tensor, logp: torch.Tensor) -> None:
    """Log-probabilities that two real hypotheses of one length and their next tokens could
    have; a Mismatch names the first thing that is not."""
    if bool(torch.isnan(scores).any() or torch.isnan(logp).any()):
        raise Mismatch("your tensors hold NaN: every entry must be a log-probability")
    if bool((logp > 1e-6).any()) and bool((logp >= 0).all()):
        raise Mismatch("logp holds probabilities, not log-probabilities: take their log "
                       "(a log-probability is <= 0)")
    if bool((scores > 1e-6).any() or (logp > 1e-6).any()):
        raise Mismatch("a log-probability is <= 0; some of yours are positive")
    for h in range(2):
        total = float(logp[h].exp().sum())
        if abs(total - 1) > 1e-4:
            raise Mismatch(f"row {h} of logp is not a distribution over the next token: its "
                           f"probabilities sum to {total:.4g}, not 1 (log_softmax makes "
                           f"any row one)")
    if not bool(torch.isfinite(scores).all()):
        raise Mismatch("both hypotheses must be live: a score of -inf is a hypothesis that "
                       "does not exist")
    if float(scores.exp().sum()) > 1 + 1e-6:
        raise Mismatch(f"the two hypotheses' probabilities add up to "
                       f"{float(scores.exp().sum()):.4g}: two different prefixes of the same "
                       f"length are different events, so together they are at most 1")
    if not float(scores[0]) > float(scores[1]):
        raise Mismatch(f"hypothesis 0 must be the likelier one: scores[0] > scores[1], yours "
                       f"are {float(scores[0]):.4g} and {float(scores[1]):.4g}")


def _one_parent_case(fn) -> str:
    scores, logp = _as_step(call(fn, where="one_parent_step()"))
    _valid_step(scores, logp)
    ranked = sorted(((float(scores[h] + logp[h, w]), h, w) for h in range(2)
                     for w in range(logp.size(1))), key=lambda e: (-e[0], e[1], e[2]))
    # (log P, hypothesis, token) of every extension, best first

    def show(e):
        return f"hypothesis {e[1]} + token {e[2]} (log P {e[0]:.4g})"

    if ranked[1][0] - ranked[2][0] < 1e-6 and ranked[1][1] != ranked[2][1]:
        raise Mismatch(f"the second and third best extensions tie ({show(ranked[1])} and "
                       f"{show(ranked[2])}), so the beam could keep either: make the ranking "
                       f"strict")
    losers = [e for e in ranked[:2] if e[1] != 1]
    if losers:
        rival = next(e for e in ranked if e[1] == 1 and e not in ranked[:2])
        V = logp.size(1)
        hint = (" With V = 2 it cannot work: hypothesis 0's best token has probability at "
                "least 1/2, hypothesis 1's second at most 1/2." if V == 2 else "")
        raise Mismatch(f"the two survivors are {show(ranked[0])} and {show(ranked[1])}: "
                       f"{show(losers[0])} beats {show(rival)}.{hint}")
    return (f"both survivors extend hypothesis 1: {show(ranked[0])} and {show(ranked[1])}, "
            f"ahead of hypothesis 0's best, {show(next(e for e in ranked if e[1] == 0))}")


def check_one_parent_step(fn) -> CheckResult:
    """Check `fn() -> (scores (2,), logp (2, V))`: two live hypotheses, hypothesis 0 the
    likelier, and their next-token log-probabilities, on which a beam of two keeps two
    extensions of hypothesis 1 (ranked by brute force over all 2V extensions)."""
    return run_checks("two survivors from the weaker hypothesis",
                      lambda: _one_parent_case(fn))


# ---------------------------------------------------------------------------------------------
# Exercise: a whole beam search with a pool of finished hypotheses
# ---------------------------------------------------------------------------------------------

BEAM_NAMES = ("model", "src", "src_lengths", "k", "max_len")


def first_finished_table() -> dict:
    """<eos> alone finishes first (0.3), but A <eos> (0.5 * 0.9 = 0.45), found one step later,
    is better: stopping at the first finished hypothesis loses."""
    return {(): {"A": 0.5, "<eos>": 0.3, "B": 0.2}, ("A",): {"<eos>": 0.9, "C": 0.1}}


def capped_wins_table() -> dict:
    """With max_len = 2 the best output is A B (0.9 * 0.8 = 0.72), cut by the cap without
    <eos>; the best finished one is A <eos> (0.18)."""
    return {(): {"A": 0.9, "<eos>": 0.1}, ("A",): {"B": 0.8, "<eos>": 0.2}}


@torch.no_grad()
def beam_search_reference(model, src: torch.Tensor, src_lengths: torch.Tensor, k: int,
                          max_len: int, mistake: str = "",
                          live_per_step: list[int] | None = None) -> tuple[list[int], float]:
    """The exercise's beam search for one sentence, written to be read: (ids, log P).

    Every step extends each live hypothesis by every token and keeps the k best candidates
    overall. Those that end with <eos> move to the pool of finished hypotheses, the others stay
    live (so the beam may shrink). After max_len tokens the live ones join the pool too. Search
    stops when nothing is live or when the best finished hypothesis is at least as likely as
    the best live one (log P only goes down as tokens are added, so nothing live can win).
    The answer is the best hypothesis of the pool (the first found, on a tie).

    `mistake` computes a typical wrong version instead, to recognise it in a learner's answer:
    "first finished", "no pool", "cap not pooled" or "extend finished". `live_per_step`, if
    given, receives the number of live hypotheses stepped at each step the search runs.
    """
    _, state, context = model.encode(src, src_lengths)
    live = [([], 0.0, state)]  # (tokens, log P, decoder state before reading the last token)
    pool: list[tuple[list[int], float]] = []  # finished: (tokens, log P)
    for t in range(1, max_len + 1):
        if live_per_step is not None:
            live_per_step.append(len(live))
        candidates = []  # (tokens, log P, decoder state after reading the parent's tokens)
        for tokens, score, state in live:
            prev = torch.tensor([tokens[-1] if tokens else SOS], device=src.device)  # (1,)
            logits, new_state = model.decoder.step(prev, state, context)  # (1, V)
            logp = log_probs(logits)[0].double()  # (V,)
            for token in range(logp.numel()):
                if logp[token] > -math.inf:
                    candidates.append((tokens + [token], score + float(logp[token]), new_state))
        candidates.sort(key=lambda c: -c[1])  # stable: ties keep the order they were made in
        live = []
        for tokens, score, state in candidates[:k]:
            if tokens[-1] == EOS and mistake != "extend finished":
                if mistake != "no pool":
                    pool.append((tokens, score))
            else:
                live.append((tokens, score, state))
        if mistake == "first finished" and pool:
            return max(pool, key=lambda p: p[1])
        if t == max_len and mistake != "cap not pooled":
            pool += [(tokens, score) for tokens, score, _ in live]
            live = []
        if not live or (pool and max(p[1] for p in pool) >= max(s for _, s, _ in live)):
            break
    if not pool:
        return [], -math.inf
    return max(pool, key=lambda p: p[1])  # max() keeps the first of equal scores


def _as_answer(got) -> tuple[list[int], float]:
    if not isinstance(got, (tuple, list)) or len(got) != 2:
        raise Mismatch(f"return a pair (ids, log_p): the best hypothesis' token ids and its "
                       f"log-probability, got {type(got).__name__}: {str(got)[:80]}")
    ids, score = got
    ids = _as_ids(ids)
    if torch.is_tensor(score):
        if score.numel() != 1:
            raise Mismatch(f"log_p must be one number, got a tensor of shape "
                           f"{tuple(score.shape)}")
        score = float(score)
    if not is_number(score):
        raise Mismatch(f"log_p must be a number, got {type(score).__name__}")
    return ids, float(score)


def _log_p(model, src, lengths, ids) -> float:
    if not ids:
        return -math.inf
    return float(sequence_log_prob(model, src, lengths, torch.tensor([ids], device=src.device)))


_BEAM_MISTAKES = {
    "first finished": "you stopped at the first hypothesis that wrote <eos>; a hypothesis that "
                      "finishes later can still be more likely. Put finished hypotheses in a "
                      "pool and go on while a live hypothesis is more likely than the best of "
                      "the pool",
    "no pool": "finished hypotheses were dropped: when a hypothesis among the k best writes "
               "<eos>, keep it in a pool of finished hypotheses, and answer with the best of "
               "that pool",
    "cap not pooled": "after max_len tokens the live hypotheses are finished too (the cap cuts "
                      "them): add them to the pool before you pick the best",
    "extend finished": "a hypothesis that wrote <eos> went on being extended; it is finished: "
                       "move it to the pool and stop extending it",
}


def _beam_search_case(fn, name, model, src, lengths, k, max_len, exhaustive=False) -> None:
    where = f"{name} (k = {k}, max_len = {max_len})"
    want, want_score = beam_search_reference(model, src, lengths, k, max_len)
    got, score = _as_answer(call(fn, model, src, lengths, k, max_len, names=BEAM_NAMES,
                                 hint=DECODING_HINT, where=where))
    if got == want and math.isclose(score, want_score, rel_tol=1e-4, abs_tol=1e-4):
        return
    if EOS in got[:-1]:
        raise Mismatch(f"on {where} your answer {tokens_text(model, got)} goes on after <eos>: "
                       f"{_BEAM_MISTAKES['extend finished']}")
    if len(got) > max_len:
        raise Mismatch(f"on {where} your answer has {len(got)} tokens: max_len = {max_len} "
                       f"caps the number of tokens, <eos> included")
    if not got:
        raise Mismatch(f"on {where} you returned no tokens: {_BEAM_MISTAKES['no pool']}")
    if got + [EOS] == want:
        raise Mismatch(f"on {where} you dropped the final <eos>: keep it, so that the caller "
                       f"knows the sentence ended (expected {tokens_text(model, want)})")
    if got[-1] != EOS and len(got) < max_len:
        raise Mismatch(f"on {where} your answer {tokens_text(model, got)} is unfinished: it "
                       f"neither ends with <eos> nor has max_len tokens. Only finished "
                       f"hypotheses (and after max_len tokens, the live ones) can be the answer")
    true = _log_p(model, src, lengths, got)
    if not math.isclose(score, true, rel_tol=1e-4, abs_tol=1e-4):
        if math.isclose(score, math.exp(true), rel_tol=1e-4, abs_tol=1e-6):
            raise Mismatch(f"on {where} you return the probability of your answer "
                           f"({score:.4f}); return its log-probability, log P = {true:.4f} "
                           f"(sums of logs do not underflow as products of probabilities do)")
        raise Mismatch(f"on {where} you return log_p = {score:.4f}, but the log-probability "
                       f"of your tokens {tokens_text(model, got)} is {true:.4f}: return the sum "
                       f"of log P(y_t | y_<t, x) over the tokens, <eos> included")
    if exhaustive:
        best = exhaustive_search(model, src, lengths, max_len).nbest[0][0]
        best_ids = [i for i in best[0] if i != PAD]
        raise Mismatch(f"on {where} k is larger than the number of hypotheses, so beam search "
                       f"keeps them all and must find what exhaustive search finds, "
                       f"{tokens_text(model, best_ids)} (log P {best[2]:.4f}); yours is "
                       f"{tokens_text(model, got)} (log P {true:.4f})")
    for mistake, why in _BEAM_MISTAKES.items():
        if got == beam_search_reference(model, src, lengths, k, max_len, mistake)[0]:
            raise Mismatch(f"on {where}: {why}")
    more = ("more likely than the beam's answer: did you keep more than k hypotheses per step?"
            if true > want_score else
            "less likely than the beam's answer: keep the k best candidates over ALL live "
            "hypotheses at each step, and answer with the best of the pool")
    raise Mismatch(f"on {where} you returned {tokens_text(model, got)} (log P {true:.4f}), "
                   f"expected {tokens_text(model, want)} (log P {want_score:.4f}); yours is "
                   f"{more}")


def _beam_on_tables(fn) -> str:
    """The hand-set tables where stopping at the first finished hypothesis, dropping the capped
    ones and k = 1 (greedy) each give another answer."""
    for name, table, k, max_len in (
            ("the table where the first finished hypothesis loses", first_finished_table(), 2, 4),
            ("the table where the cap cuts the best output", capped_wins_table(), 2, 2),
            ("the k = 2 walk-through table", walkthrough_table(), 2, 3),
            ("the table where greedy loses", greedy_loses_table(), 1, 4),
            ("the table where greedy loses", greedy_loses_table(), 2, 4)):
        model = TableModel(table)
        _beam_search_case(fn, name, model, *model.inputs(), k, max_len)
    return "the hand-set tables: a pool, the cap, and k = 1 is greedy"


def _beam_on_networks(fn) -> str:
    g = torch.Generator().manual_seed(2)
    for seed in range(3):
        model = tiny_model(seed)
        for _ in range(3):
            n = int(torch.randint(2, 7, (1,), generator=g))
            src = torch.randint(4, len(model.src_vocab), (1, n), generator=g)
            _beam_search_case(fn, f"random network {seed}", model, src, torch.tensor([n]), 3, 6)
    return "9 sentences of small random networks, k = 3"


def _beam_exhaustive(fn) -> str:
    """With k at least the candidates of every step before the last, exhaustive search's answer."""
    # Two sentences where beam k = 3 misses the most likely output, 4 tokens at most. 7 tokens
    # continue a prefix (<unk> and 6 words) and <eos> ends one, so a step before the last has at
    # most 7^2 * 8 = 392 candidates, fewer than k: each is among the k best, so every <eos> one
    # finishes and every other one stays live. The last step's candidates (up to 7^3 * 8 = 2744)
    # all have the same length, so the best of them finishes whatever k.
    for seed, src in ((3, [8, 9]), (8, [5, 6, 7])):
        model = tiny_model(seed)
        _beam_search_case(fn, f"random network {seed}", model, torch.tensor([src]),
                          torch.tensor([len(src)]), 2000, 4, exhaustive=True)
    table = TableModel(walkthrough_table())
    _beam_search_case(fn, "the k = 2 walk-through table", table, *table.inputs(), 2000, 3,
                      exhaustive=True)
    return ("with k = 2000, more than the candidates of any step before the last (at most 392), "
            "the answer of exhaustive search")


def decoder_calls(fn, model, src, src_lengths, k: int, max_len: int,
                  where: str = "random network 1") -> list[int]:
    """Run `fn` under `call` and return the number of rows of each model.decoder.step call."""
    calls, step = [], model.decoder.step

    def counted(prev, state, context):
        calls.append(prev.numel())  # prev (n,): one row per live hypothesis
        return step(prev, state, context)

    model.decoder.step = counted
    try:
        call(fn, model, src, src_lengths, k, max_len, names=BEAM_NAMES, hint=DECODING_HINT,
             where=where)
    finally:
        del model.decoder.step  # back to the Decoder's own method
    return calls


def one_call_per_step(fn, model, src, src_lengths, k: int, max_len: int,
                      where: str = "random network 1") -> str:
    """The learner's decoder calls against the steps the search runs: a search that stops
    early runs at least as many steps as the reference (which stops as early as it may) and at
    most max_len, one call each; where the reference steps several live hypotheses at once, so
    does some call."""
    live: list[int] = []
    beam_search_reference(model, src, src_lengths, k, max_len, live_per_step=live)
    calls = decoder_calls(fn, model, src, src_lengths, k, max_len, where)
    if not calls:
        raise Mismatch(f"on {where} model.decoder.step was never called: step the live "
                       f"hypotheses with it, in one call per step")
    if len(calls) > max_len or (max(live) > 1 and max(calls) == 1):
        raise Mismatch(f"the answers are right, but you called model.decoder.step "
                       f"{len(calls)} times on {where}, with at most {max(calls)} "
                       f"hypothes{'is' if max(calls) == 1 else 'es'} per call; the search "
                       f"runs {len(live)} to {max_len} steps, with up to {max(live)} live "
                       f"hypotheses at once: step all the live hypotheses together, in ONE "
                       f"call per step. Stack their last tokens into prev (n,), keep their "
                       f"states as one (L, n, H) tensor (with context.expand(n, -1)), and "
                       f"once the k best are chosen, take their parents' states with "
                       f"state.index_select(1, parents)")
    return f"one decoder call per step ({len(calls)} calls, up to {max(calls)} rows each)"


def _beam_one_call_per_step(fn) -> str:
    """Last, once the answers are right: the live hypotheses go through the decoder together."""
    return one_call_per_step(fn, tiny_model(1), torch.tensor([[5, 6, 7, 8]]), torch.tensor([4]),
                             3, 6)


_BEAM_PARTS = (_beam_on_tables, _beam_on_networks, _beam_exhaustive, _beam_one_call_per_step)


def check_beam_search(fn) -> CheckResult:
    """Check `fn(model, src (1, S), src_lengths (1,), k, max_len) -> (ids, log_p)`: beam search
    with a pool of finished hypotheses, against `beam_search_reference` on hand-set tables and
    small random networks, and against exhaustive search when k keeps every hypothesis."""
    return run_checks("beam search with a pool of finished hypotheses",
                      *[lambda part=part: part(fn) for part in _BEAM_PARTS])


# ---------------------------------------------------------------------------------------------
# Exercise: where greedy and the beam part
# ---------------------------------------------------------------------------------------------


def parting_reference(greedy_steps, beam_steps) -> tuple[int, float, float]:
    """(t from 1, greedy's lead at t, the beam's sum of log P after t minus greedy's)."""
    t = next(i for i, (a, b) in enumerate(zip(greedy_steps, beam_steps)) if a[0] != b[0])
    lead = greedy_steps[t][1] - beam_steps[t][1]
    after = sum(lp for _, lp in beam_steps[t + 1:]) - sum(lp for _, lp in greedy_steps[t + 1:])
    return t + 1, lead, after


def _parting_case(fn, greedy_steps, beam_steps, label: str) -> str:
    t, lead, after = parting_reference(greedy_steps, beam_steps)
    got = call(fn, [tuple(x) for x in greedy_steps], [tuple(x) for x in beam_steps],
               names=("greedy_steps", "beam_steps"), where=label)
    if not isinstance(got, (tuple, list)) or len(got) != 3:
        raise Mismatch(f"{label}: return three numbers (t, lead, cost_after), got {got!r:.80}")
    g_t, g_lead, g_after = (x.item() if torch.is_tensor(x) and x.numel() == 1 else x
                            for x in got)
    if not is_number(g_t) or not is_number(g_lead) or not is_number(g_after):
        raise Mismatch(f"{label}: return three numbers (t, lead, cost_after), got {got!r:.80}")
    if g_t != t:
        if g_t == t - 1:
            raise Mismatch(f"{label}: you returned t = {g_t}, counted from 0; count the steps "
                           f"from 1 (the first token is step 1): t = {t}")
        raise Mismatch(f"{label}: the outputs first write different tokens at step {t}, you "
                       f"returned {g_t}")
    close = functools.partial(math.isclose, rel_tol=1e-6, abs_tol=1e-6)
    if not close(g_lead, lead):
        if close(g_lead, -lead):
            raise Mismatch(f"{label}: lead is greedy's log P minus the beam's at step t (greedy "
                           f"took the likelier token, so it is >= 0): {lead:.4f}, you returned "
                           f"its opposite")
        raise Mismatch(f"{label}: lead should be {lead:.4f}, you returned {g_lead:.4f}")
    if not close(g_after, after):
        with_t = after - lead
        if close(g_after, -after):
            raise Mismatch(f"{label}: cost_after is the BEAM's sum of log P after step t minus "
                           f"greedy's (how much less greedy gains), {after:.4f}; you returned "
                           f"its opposite")
        if close(g_after, with_t):
            raise Mismatch(f"{label}: cost_after counts the steps AFTER t only; you included "
                           f"step t itself, whose difference is the lead")
        raise Mismatch(f"{label}: cost_after should be {after:.4f}, you returned "
                       f"{g_after:.4f}")
    return label


def check_parting(fn) -> CheckResult:
    """Check `fn(greedy_steps, beam_steps) -> (t, lead, cost_after)` on hand-made outputs."""
    ln = math.log
    # greedy_trap's table in the solution of the chapter's first exercise
    greedy_a = [("A", ln(0.5)), ("<eos>", ln(0.4))]  # P = 0.2
    beam_a = [("B", ln(0.45)), ("C", ln(0.95)), ("<eos>", ln(1.0))]  # P = 0.43
    greedy_b = [("Je", ln(0.8)), ("suis", ln(0.6)), ("las", ln(0.3)), (".", ln(0.5)),
                ("<eos>", ln(0.9))]
    beam_b = [("Je", ln(0.8)), ("suis", ln(0.6)), ("très", ln(0.25)), ("fatigué", ln(0.9)),
              (".", ln(0.95)), ("<eos>", ln(0.95))]
    greedy_c = [("Tu", ln(0.5)), ("as", ln(0.3)), ("<eos>", ln(0.2))]
    beam_c = [("Vous", ln(0.4)), ("avez", ln(0.9)), ("<eos>", ln(0.9))]
    return run_checks(
        "where greedy and the beam part",
        lambda: _parting_case(fn, greedy_a, beam_a,
                              "the trap table of the first exercise's solution"),
        lambda: _parting_case(fn, greedy_b, beam_b, "outputs that part at step 3 and have "
                              "different lengths"),
        lambda: _parting_case(fn, greedy_c, beam_c, "outputs that part at the first step"),
    )
