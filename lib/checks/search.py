"""Checkers for the greedy-vs-beam-search chapter's exercises.

* `check_greedy(fn)`: greedy decoding of one sentence, `fn(model, src, src_lengths, max_len)`
  -> list of token ids (ending with <eos> if the sentence ended), against `lib.search.greedy`
  on hand-set probability tables (`lib.experiments.toy.TableModel`) and on small random networks.
* `check_greedy_trap(fn)`: `fn() -> table`, a probability table (`lib.experiments.toy.TableModel`)
  on which greedy's output is at most half as likely as the best output, and a beam of two
  finds it.
* `check_beam_step(fn)`: one step of beam search, `fn(scores, logp, k)` -> (parent, token,
  new_scores), the k best (hypothesis, next token) pairs over ALL beams, against brute force.
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
    expect_close,
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


# tiny_model(seed): a small random Seq2Seq (hidden 32) with weights x3, so its distributions are
# peaked and the answers differ from sentence to sentence. Not trained.
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
# Exercise: one step of beam search
# ---------------------------------------------------------------------------------------------


def beam_step_reference(scores: torch.Tensor, logp: torch.Tensor, k: int):
    """Brute force: score every (hypothesis, token) pair, sort them all, keep the k best."""
    pairs = []
    for parent in range(logp.size(0)):
        for token in range(logp.size(1)):
            pairs.append((float(scores[parent] + logp[parent, token]), parent, token))
    pairs.sort(key=lambda p: -p[0])
    best = pairs[:k]
    return (torch.tensor([p[1] for p in best]), torch.tensor([p[2] for p in best]),
            torch.tensor([p[0] for p in best]))


def _wrong_answers(scores, logp, k):
    """What typical mistakes would return: (pair set, message)."""
    wrong = []
    one_each = []
    for parent in range(logp.size(0)):
        v, t = logp[parent].max(0)
        one_each.append((float(scores[parent] + v), parent, int(t)))
    wrong.append(({(p, t) for _, p, t in one_each}, "you kept the best token(s) per beam "
                  "instead of the k best (hypothesis, token) pairs overall: two of the k "
                  "survivors may extend the same hypothesis"))
    first_beam = logp[0].topk(k)
    wrong.append(({(0, int(t)) for t in first_beam.indices}, "you only extended the first "
                  "hypothesis: every live hypothesis must compete"))
    flat = logp.reshape(-1).topk(k).indices
    wrong.append(({(int(i) // logp.size(1), int(i) % logp.size(1)) for i in flat},
                  "you ranked the next tokens by their own log-probability only: add the "
                  "score of the hypothesis they extend (log P(prefix) + log P(token | prefix))"))
    added = (scores.exp().unsqueeze(1) + logp.exp()).reshape(-1).topk(k).indices
    wrong.append(({(int(i) // logp.size(1), int(i) % logp.size(1)) for i in added},
                  "you added probabilities instead of log-probabilities: the probability of a "
                  "sequence is a product, so its log is a SUM of log-probabilities"))
    mult = (scores.unsqueeze(1) * logp).reshape(-1)
    mult = torch.where(torch.isnan(mult), torch.full_like(mult, -math.inf), mult)
    mult_top = mult.topk(k).indices
    wrong.append(({(int(i) // logp.size(1), int(i) % logp.size(1)) for i in mult_top},
                  "you multiplied log-probabilities: logs turn the product of probabilities "
                  "into a sum, so add them"))
    return wrong


def _beam_case(fn, scores, logp, k, name) -> None:
    parent, token, best = beam_step_reference(scores, logp, k)
    got = call(fn, scores, logp, k, names=("scores", "logp", "k"), where=name)
    if not isinstance(got, (tuple, list)) or len(got) != 3:
        raise Mismatch("return three tensors: (parent, token, new_scores), each of shape (k,)")
    g_parent, g_token, g_best = (torch.as_tensor(x) for x in got)
    for label, x in (("parent", g_parent), ("token", g_token), ("new_scores", g_best)):
        expect_shape(f"{label} ({name})", x, (k,))
    got_pairs = [(int(p), int(t)) for p, t in zip(g_parent, g_token)]
    exp_pairs = [(int(p), int(t)) for p, t in zip(parent, token)]
    if set(got_pairs) != set(exp_pairs):
        for pairs, message in _wrong_answers(scores, logp, k):
            if set(got_pairs) == pairs:
                raise Mismatch(f"{name}: {message}")
        raise Mismatch(f"{name}: you kept the (parent, token) pairs {sorted(got_pairs)}, the k "
                       f"best are {sorted(exp_pairs)}")
    if got_pairs != exp_pairs:
        raise Mismatch(f"{name}: the right k pairs, but not best first: got {got_pairs}, "
                       f"expected {exp_pairs}")
    added = (scores[parent].exp() + logp[parent, token].exp()).double()
    if torch.allclose(g_best.double(), added, atol=1e-5) or \
            torch.allclose(g_best.double(), added.log(), atol=1e-5):
        raise Mismatch(f"{name}: you added probabilities instead of log-probabilities: the "
                       f"probability of a sequence is a product, so its log is a SUM of "
                       f"log-probabilities")
    if torch.allclose(g_best.double(), logp[parent, token].double(), atol=1e-5) and \
            not torch.allclose(scores[parent].double(), torch.zeros(k, dtype=torch.float64)):
        raise Mismatch(f"{name}: new_scores must be the log P of the whole new hypothesis "
                       f"(its parent's score + the token's log-probability), not the token's "
                       f"own log-probability")
    expect_close(f"new_scores ({name})", g_best, best)


def check_beam_step(fn) -> CheckResult:
    """Check `fn(scores (k,), logp (k, V), k) -> (parent (k,), token (k,), new_scores (k,))`."""
    g = torch.Generator().manual_seed(0)

    def random_logp(k, V, peaked=1.0):
        return torch.log_softmax(peaked * torch.randn(k, V, generator=g), dim=-1)

    def hand_case():
        # Hypothesis 0 is likely and has two good continuations; hypothesis 1 has one.
        scores = torch.log(torch.tensor([0.5, 0.3]))
        logp = torch.log(torch.tensor([[0.5, 0.4, 0.05, 0.05], [0.9, 0.04, 0.03, 0.03]]))
        _beam_case(fn, scores, logp, 2, "a hand-made case (k = 2, V = 4)")
        return "a hand-made case"

    def same_parent():
        scores = torch.log(torch.tensor([0.6, 0.1, 0.05]))
        logp = torch.log(torch.tensor([[0.35, 0.3, 0.25, 0.1], [0.7, 0.1, 0.1, 0.1],
                                       [0.25, 0.25, 0.25, 0.25]]))
        _beam_case(fn, scores, logp, 3, "a case where all k survivors extend hypothesis 0")
        return "a case where all survivors extend the same hypothesis"

    def random_cases():
        for k, V in ((2, 5), (3, 10), (5, 50), (4, 7)):
            scores = torch.sort(-5 * torch.rand(k, generator=g), descending=True).values
            _beam_case(fn, scores, random_logp(k, V, 2.0), k, f"a random case (k = {k}, V = {V})")
        return "random cases with k from 2 to 5"

    def first_step():
        k, V = 3, 6
        scores = torch.tensor([0.0, -math.inf, -math.inf])  # only <sos> is live at step 1
        _beam_case(fn, scores, random_logp(k, V), k, "the first step (one live hypothesis, "
                   "the others at -inf)")
        return "the first step, where only one hypothesis is live"

    return run_checks("one beam-search step", hand_case, same_parent, random_cases, first_step)


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
                          max_len: int, mistake: str = "") -> tuple[list[int], float]:
    """The exercise's beam search for one sentence, written to be read: (ids, log P).

    Every step extends each live hypothesis by every token and keeps the k best candidates
    overall. Those that end with <eos> move to the pool of finished hypotheses, the others stay
    live (so the beam may shrink). After max_len tokens the live ones join the pool too. Search
    stops when nothing is live or when the best finished hypothesis is at least as likely as
    the best live one (log P only goes down as tokens are added, so nothing live can win).
    The answer is the best hypothesis of the pool (the first found, on a tie).

    `mistake` computes a typical wrong version instead, to recognise it in a learner's answer:
    "first finished", "no pool", "cap not pooled" or "extend finished".
    """
    _, state, context = model.encode(src, src_lengths)
    live = [([], 0.0, state)]  # (tokens, log P, decoder state before reading the last token)
    pool: list[tuple[list[int], float]] = []  # finished: (tokens, log P)
    for t in range(1, max_len + 1):
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
    """With k larger than the number of hypotheses, the answer of exhaustive search."""
    # Two sentences where beam k = 3 misses the most likely output, 4 tokens at most:
    # 6^3 live hypotheses x 7 tokens = 1,512 candidates at the last step, fewer than k.
    for seed, src in ((3, [8, 9]), (8, [5, 6, 7])):
        model = tiny_model(seed)
        _beam_search_case(fn, f"random network {seed}", model, torch.tensor([src]),
                          torch.tensor([len(src)]), 2000, 4, exhaustive=True)
    table = TableModel(walkthrough_table())
    _beam_search_case(fn, "the k = 2 walk-through table", table, *table.inputs(), 2000, 3,
                      exhaustive=True)
    return "with k = 2000, more than all hypotheses, the answer of exhaustive search"


def decoder_calls(fn, model, src, src_lengths, k: int, max_len: int) -> list[int]:
    """Run `fn` under `call` and return the number of rows of each model.decoder.step call."""
    calls, step = [], model.decoder.step

    def counted(prev, state, context):
        calls.append(prev.numel())  # prev (n,): one row per live hypothesis
        return step(prev, state, context)

    model.decoder.step = counted
    try:
        call(fn, model, src, src_lengths, k, max_len, names=BEAM_NAMES, hint=DECODING_HINT,
             where="random network 1")
    finally:
        del model.decoder.step  # back to the Decoder's own method
    return calls


def _beam_one_call_per_step(fn) -> str:
    """Last, once the answers are right: the live hypotheses go through the decoder together."""
    model, max_len = tiny_model(1), 6
    calls = decoder_calls(fn, model, torch.tensor([[5, 6, 7, 8]]), torch.tensor([4]), 3, max_len)
    if len(calls) > max_len:
        raise Mismatch(f"the answers are right, but you called model.decoder.step "
                       f"{len(calls)} times for one sentence of at most {max_len} steps, "
                       f"with at most {max(calls)} hypothes{'is' if max(calls) == 1 else 'es'}"
                       f" per call: step all the live hypotheses together, in ONE call per "
                       f"step. Stack their last tokens into prev (n,), keep their states as "
                       f"one (L, n, H) tensor (with context.expand(n, -1)), and once the k "
                       f"best are chosen, take their parents' states with "
                       f"state.index_select(1, parents)")
    return f"one decoder call per step ({len(calls)} calls, up to {max(calls)} rows each)"


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
