"""lib.checks.search accepts the reference solutions and names typical mistakes."""

from __future__ import annotations

import math
import re

import pytest
import torch
from conftest import assert_rejects, skeleton

from lib.checks import search as checks
from lib.checks.harness import Mismatch
from lib.data import EOS, PAD, SOS
from lib.exhaustive import exhaustive_search
from lib.experiments.toy import TableModel, greedy_loses_table, walkthrough_table
from lib.search import NEVER_GENERATED, greedy, log_probs


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


def one_parent_step():
    """The chapter's solution: a flat hypothesis 0, a hypothesis 1 with two strong tokens."""
    scores = torch.log(torch.tensor([0.5, 0.4]))
    logp = torch.log(torch.tensor([[0.25, 0.25, 0.25, 0.25], [0.48, 0.48, 0.02, 0.02]]))
    return scores, logp


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


def test_one_parent_step_accepts_a_right_design():
    result = checks.check_one_parent_step(one_parent_step)
    assert result.ok, str(result)
    # 0.4 * 0.48 = 0.192 twice, ahead of 0.5 * 0.25 = 0.125
    assert "hypothesis 1 + token 0" in str(result) and "hypothesis 0 + token 0" in str(result)


def _step(scores, rows):
    return lambda: (torch.log(torch.tensor(scores)), torch.log(torch.tensor(rows)))


@pytest.mark.parametrize("design, words", [
    # hypothesis 0 peaked: its best extension beats hypothesis 1's second
    (_step([0.5, 0.4], [[0.7, 0.1, 0.1, 0.1], [0.48, 0.48, 0.02, 0.02]]),
     "hypothesis 0 + token 0 (log P -1.05) beats hypothesis 1 + token 1"),
    # V = 2 cannot work, and the message says why
    (_step([0.5, 0.4], [[0.5, 0.5], [0.5, 0.5]]), "With V = 2 it cannot work"),
    # probabilities instead of log-probabilities
    (lambda: (torch.tensor([0.5, 0.4]), torch.tensor([[0.25] * 4, [0.48, 0.48, 0.02, 0.02]])),
     "not log-probabilities"),
    # a row that is not a distribution
    (_step([0.5, 0.4], [[0.25] * 4, [0.6, 0.6, 0.02, 0.02]]), "row 1 of logp"),
    # two prefixes whose probabilities add up to more than 1
    (_step([0.7, 0.6], [[0.25] * 4, [0.48, 0.48, 0.02, 0.02]]), "at most 1"),
    # hypothesis 1 the likelier: the task asks for the weaker one
    (_step([0.4, 0.5], [[0.48, 0.48, 0.02, 0.02], [0.25] * 4]), "scores[0] > scores[1]"),
    # a tie between the second and third extension
    (_step([0.5, 0.4], [[0.25] * 4, [0.625, 0.3125, 0.03125, 0.03125]]), "tie"),
    # a hypothesis that does not exist
    (lambda: (torch.tensor([0.0, -math.inf]), torch.log(torch.tensor([[0.25] * 4] * 2))),
     "must be live"),
    (lambda: torch.zeros(2), "return two tensors"),
    (lambda: (torch.zeros(2), torch.zeros(3, 4)), "expected (2, V)"),
])
def test_one_parent_step_names_what_fails(design, words):
    assert_rejects(checks.check_one_parent_step(design), words)


def test_one_parent_step_skeleton_is_not_done():
    assert not checks.check_one_parent_step(not_done).done


def test_inputs_changed_in_place_are_named():
    def greedy_in_training_mode(model, src, src_lengths, max_len):
        if hasattr(model, "train"):
            model.train()
        return greedy_ok(model, src, src_lengths, max_len)

    result = checks.check_greedy(greedy_in_training_mode)
    assert "switched `model` to training mode (model.train())" in str(result)


# --- a whole beam search with a pool of finished hypotheses -----------------------------------


def beam_search_one_at_a_time(model, src, src_lengths, k, max_len):
    """Right answers, but one decoder call per hypothesis (as lib.search.beam_search_one)."""
    _, state, context = model.encode(src, src_lengths)
    live = [([], 0.0, state)]  # (tokens, log P, decoder state)
    finished = []  # (tokens, log P)
    for _ in range(max_len):
        candidates = []
        for tokens, score, state in live:
            prev = torch.tensor([tokens[-1] if tokens else SOS], device=src.device)
            logits, new_state = model.decoder.step(prev, state, context)
            for token, lp in enumerate(log_probs(logits)[0].tolist()):
                if lp > float("-inf"):
                    candidates.append((tokens + [token], score + lp, new_state))
        candidates.sort(key=lambda c: c[1], reverse=True)
        live = []
        for tokens, score, state in candidates[:k]:
            if tokens[-1] == EOS:
                finished.append((tokens, score))
            else:
                live.append((tokens, score, state))
        if not live or max((s for _, s in finished), default=-math.inf) >= live[0][1]:
            break
    finished += [(tokens, score) for tokens, score, _ in live]  # cut by the cap
    return max(finished, key=lambda f: f[1])


def beam_search_topk(model, src, src_lengths, k, max_len):
    """Another right answer: tensors and one topk per step, float32 scores."""
    _, state, context = model.encode(src, src_lengths)
    seqs, scores = [[]], torch.zeros(1)  # live hypotheses: (N,) log P
    states, best, best_score = state, None, -math.inf
    for t in range(max_len):
        prev = torch.tensor([s[-1] if s else SOS for s in seqs])  # (N,)
        logits, states = model.decoder.step(prev, states, context.expand(len(seqs), -1))
        total = scores[:, None] + log_probs(logits)  # (N, V)
        top, flat = total.reshape(-1).topk(min(k, total.numel()))
        keep = []
        for score, i in zip(top.tolist(), flat.tolist()):
            parent, token = divmod(i, total.size(1))
            if score == -math.inf:
                break
            if token == EOS or t == max_len - 1:
                if score > best_score:
                    best, best_score = seqs[parent] + [token], score
            else:
                keep.append((parent, token, score))
        if not keep or best_score >= keep[0][2]:
            break
        parents = torch.tensor([p for p, _, _ in keep])
        seqs = [seqs[p] + [tok] for p, tok, _ in keep]
        scores, states = torch.tensor([s for _, _, s in keep]), states[:, parents]
    return best, torch.tensor(best_score)


def _state_after(model, src, n, prefix):
    """(state, context) of the decoder before it reads the last token of `prefix`."""
    _, state, context = model.encode(src, n)
    prev = torch.tensor([SOS])
    for token in prefix[:-1]:
        _, state = model.decoder.step(prev, state, context)
        prev = torch.tensor([token])
    return state, context


def beam_search_wrong(mistake):
    return lambda model, src, n, k, max_len: checks.beam_search_reference(
        model, src, n, k, max_len, mistake)


def test_beam_search_accepts_right_answers():
    result = checks.check_beam_search(beam_search_topk)
    assert result.ok, result
    assert "one decoder call per step" in str(result)


def test_beam_search_one_hypothesis_at_a_time_is_named():
    """The exercise asks for one decoder call per step; the answers alone are right."""
    assert_rejects(checks.check_beam_search(beam_search_one_at_a_time), "the answers are right",
                   "ONE call per step", "state.index_select(1, parents)")


def test_beam_search_reference_is_exhaustive_when_k_keeps_everything():
    """The checker's reference, with k above the number of candidates, is exhaustive search;
    with k = 1 it is greedy."""
    for seed, src in ((3, [8, 9]), (8, [5, 6, 7]), (5, [4, 6])):
        model = checks.tiny_model(seed)
        s, n = torch.tensor([src]), torch.tensor([len(src)])
        ids, score = checks.beam_search_reference(model, s, n, 2000, 4)
        best = exhaustive_search(model, s, n, 4).nbest[0][0]
        assert ids == [i for i in best[0] if i != PAD]
        assert math.isclose(score, best[2], abs_tol=1e-5)
        assert checks.beam_search_reference(model, s, n, 3, 4)[0] != ids or seed == 5
        g = [i for i in greedy(model, s, n, max_len=4)[0].tolist() if i != PAD]
        assert checks.beam_search_reference(model, s, n, 1, 4)[0] == g
    # the checker's message: k = 2000 exceeds the candidates of every step before the last
    # (7^2 live prefixes times 8 tokens = 392), not those of the last step (7^3 * 8 = 2744)
    continuing = len(model.tgt_vocab) - len(NEVER_GENERATED) - 1
    assert continuing ** 2 * (continuing + 1) == 392 < 2000 < (continuing + 1) * continuing ** 3
    table = TableModel(walkthrough_table())
    ids, score = checks.beam_search_reference(table, *table.inputs(), 2000, 3)
    assert ids == table.ids(["A", "<eos>"]) and math.isclose(score, math.log(0.16), rel_tol=1e-6)


@pytest.mark.parametrize("wrong, words", [
    (beam_search_wrong("first finished"), ["first hypothesis that wrote <eos>", "pool"]),
    (beam_search_wrong("no pool"), ["no tokens", "keep it in a pool"]),
    (beam_search_wrong("cap not pooled"), ["the cap cuts the best output", "after max_len",
                                           "add them to the pool"]),
    (beam_search_wrong("extend finished"), ["goes on after <eos>", "stop extending it"]),
])
def test_beam_search_names_the_mistakes_of_the_pool(wrong, words):
    assert_rejects(checks.check_beam_search(wrong), *words)


@pytest.mark.parametrize("part", checks._BEAM_PARTS, ids=lambda part: part.__name__)
def test_every_beam_part_passes_a_right_answer(part):
    assert part(beam_search_topk)


@pytest.mark.parametrize("part, mistake, words", [
    (checks._beam_on_tables, "first finished", "first hypothesis that wrote <eos>"),
    (checks._beam_on_tables, "cap not pooled", "add them to the pool"),
    (checks._beam_on_tables, "extend finished", "goes on after <eos>"),
    (checks._beam_exhaustive, "first finished", "what exhaustive search finds"),
])
def test_each_beam_part_names_its_mistake(part, mistake, words):
    with pytest.raises(Mismatch, match=re.escape(words)):
        part(beam_search_wrong(mistake))


def test_decoder_calls_counts_the_rows_of_every_step():
    model, src, n = checks.tiny_model(1), torch.tensor([[5, 6, 7, 8]]), torch.tensor([4])
    batched = checks.decoder_calls(beam_search_topk, model, src, n, 3, 6)
    assert len(batched) <= 6 and batched[0] == 1 and max(batched) <= 3
    one_by_one = checks.decoder_calls(beam_search_one_at_a_time, model, src, n, 3, 6)
    assert len(one_by_one) > 6 and set(one_by_one) == {1}
    assert model.decoder.step.__func__ is type(model.decoder).step  # put back


def test_one_call_per_step_compares_the_calls_with_the_steps_run():
    """On a search that stops early (the walk-through table, k = 2, after 2 of 10 allowed
    steps), one call per hypothesis stays under max_len calls, yet no call steps the two live
    hypotheses together: the checker names it. The batched version passes."""
    table = TableModel(walkthrough_table())
    live = []
    checks.beam_search_reference(table, *table.inputs(), 2, 10, live_per_step=live)
    assert live == [1, 2]  # the reference stops after step 2, two hypotheses live at once
    calls = checks.decoder_calls(beam_search_one_at_a_time, table, *table.inputs(), 2, 10)
    assert len(calls) <= 10 and set(calls) == {1}  # the count alone would let it pass
    with pytest.raises(Mismatch, match="ONE call per step"):
        checks.one_call_per_step(beam_search_one_at_a_time, table, *table.inputs(), 2, 10,
                                 "the walk-through table")
    assert checks.one_call_per_step(beam_search_topk, table, *table.inputs(), 2, 10)


def test_beam_search_names_wrong_scores_and_wrong_beams():
    def probability(model, src, n, k, max_len):
        ids, score = beam_search_one_at_a_time(model, src, n, k, max_len)
        return ids, math.exp(score)

    assert_rejects(checks.check_beam_search(probability), "you return the probability",
                   "log P = -0.7985")

    def eos_not_scored(model, src, n, k, max_len):  # right tokens, log P(<eos>) left out
        ids, score = beam_search_one_at_a_time(model, src, n, k, max_len)
        if ids[-1] == EOS:
            score -= float(log_probs(model.decoder.step(
                torch.tensor([ids[-2] if len(ids) > 1 else SOS]),
                *_state_after(model, src, n, ids[:-1]))[0])[0, EOS])
        return ids, score

    assert_rejects(checks.check_beam_search(eos_not_scored), "you return log_p = -0.6931",
                   "but the log-probability of your tokens A <eos> is -0.7985")

    def one_token_per_hypothesis(model, src, n, k, max_len):  # k greedy runs, not a beam
        _, state, context = model.encode(src, n)
        prev, out, score = torch.tensor([SOS]), [], 0.0
        for _ in range(max_len):
            logits, state = model.decoder.step(prev, state, context)
            lp, tok = log_probs(logits)[0].max(0)
            out, score, prev = out + [int(tok)], score + float(lp), tok.view(1)
            if int(tok) == EOS:
                break
        return out, score

    assert_rejects(checks.check_beam_search(one_token_per_hypothesis), "the table where "
                   "greedy loses (k = 2", "less likely than the beam's answer")

    def last_finished(model, src, n, k, max_len):  # the last hypothesis found, not the best
        _, state, context = model.encode(src, n)
        live, finished = [([], 0.0, state)], []
        for _ in range(max_len):
            cands = []
            for tokens, score, st in live:
                logits, new = model.decoder.step(
                    torch.tensor([tokens[-1] if tokens else SOS]), st, context)
                cands += [(tokens + [t], score + lp, new)
                          for t, lp in enumerate(log_probs(logits)[0].tolist()) if lp > -1e30]
            cands.sort(key=lambda c: -c[1])
            live = [c for c in cands[:k] if c[0][-1] != EOS]
            finished += [(c[0], c[1]) for c in cands[:k] if c[0][-1] == EOS]
            if not live:
                break
        finished += [(tokens, score) for tokens, score, _ in live]
        return finished[-1]

    assert_rejects(checks.check_beam_search(last_finished), "expected")


def test_beam_search_names_a_dropped_eos_and_an_unfinished_answer():
    def drops_eos(model, src, n, k, max_len):
        ids, score = beam_search_one_at_a_time(model, src, n, k, max_len)
        return (ids[:-1] if ids[-1] == EOS else ids), score

    assert_rejects(checks.check_beam_search(drops_eos), "dropped the final <eos>")

    def live_prefix(model, src, n, k, max_len):  # a prefix of a longer answer
        ids, score = beam_search_one_at_a_time(model, src, n, k, max_len)
        return (ids[:1] if len(ids) > 2 else ids), score

    assert_rejects(checks.check_beam_search(live_prefix), "is unfinished",
                   "neither ends with <eos> nor has max_len tokens")


def test_beam_search_without_a_cap_is_stopped(monkeypatch):
    import lib.checks.harness

    monkeypatch.setattr(lib.checks.harness, "TIME_LIMIT", 1.0)

    def no_cap(model, src, n, k, max_len):
        while True:  # waits for an <eos> that the table's capped case never writes
            beam_search_one_at_a_time(model, src, n, k, max_len)

    assert_rejects(checks.check_beam_search(no_cap), "took longer than 1 second",
                   "decoding loop that never ends")
    assert not checks.check_beam_search(skeleton).done


# --- make greedy lose ----------------------------------------------------------------------


def trap_table():
    return {(): {"A": 0.5, "B": 0.45, "<eos>": 0.05},
            ("A",): {"C": 0.3, "D": 0.3, "<eos>": 0.4},
            ("B",): {"C": 0.95, "<eos>": 0.05}}


def test_greedy_trap_accepts_a_table_where_greedy_loses_by_half():
    result = checks.check_greedy_trap(trap_table)
    assert result.ok and result.done, result
    assert "47% as likely" in str(result)  # 0.5 * 0.4 = 0.2 against 0.45 * 0.95 = 0.4275


def test_greedy_trap_oracle_is_exhaustive_search():
    """The checker's best output is exhaustive search's, here also worked out by hand."""
    model = TableModel(trap_table(), max_len=4)
    best = exhaustive_search(model, *model.inputs(), 4).nbest[0][0]
    assert model.tgt_vocab.decode(best[0]) == ["B", "C"]
    assert abs(best[2] - math.log(0.45 * 0.95)) < 1e-6


@pytest.mark.parametrize("table, words", [
    (greedy_loses_table(), ["greedy loses, but its output is 56% as likely", "at most 50%"]),
    ({(): {"A": 0.6, "B": 0.4}, ("A",): {"C": 0.9, "<eos>": 0.1}},
     ["greedy already finds the best output"]),
    ({(): {"A": 0.36, "B": 0.34, "C": 0.30}, ("A",): {"D": 0.3, "E": 0.3, "<eos>": 0.4},
      ("B",): {"D": 0.3, "E": 0.3, "<eos>": 0.4}, ("C",): {"<eos>": 1.0}},
     ["a beam of two answers A <eos>", "is its first token C among the two most likely"]),
    ({(): {"A": 0.5, "B": 0.4}}, ["not a valid table", "sums to 0.9"]),
    ([("A", 1.0)], ["return the table, a dict"]),
])
def test_greedy_trap_names_the_usual_misses(table, words):
    assert_rejects(checks.check_greedy_trap(lambda: table), *words)


def test_greedy_trap_skeleton_is_not_done():
    assert not checks.check_greedy_trap(skeleton).done


# --- where greedy and the beam part ----------------------------------------------------------


def parting_ok(greedy_steps, beam_steps):
    t = next(i for i, (a, b) in enumerate(zip(greedy_steps, beam_steps)) if a[0] != b[0])
    lead = greedy_steps[t][1] - beam_steps[t][1]
    after = sum(lp for _, lp in beam_steps[t + 1:]) - sum(lp for _, lp in greedy_steps[t + 1:])
    return t + 1, lead, after


def test_parting_reference_matches_hand_values():
    # the first exercise's trap table (its solution): greedy A <eos> (0.5 * 0.4),
    # beam B C <eos> (0.45 * 0.95 * 1)
    ln = math.log
    t, lead, after = checks.parting_reference([("A", ln(0.5)), ("<eos>", ln(0.4))],
                                              [("B", ln(0.45)), ("C", ln(0.95)),
                                               ("<eos>", 0.0)])
    assert t == 1
    assert math.isclose(lead, ln(0.5 / 0.45))
    assert math.isclose(after, ln(0.95) - ln(0.4))
    assert after > lead  # the beam's output is the more likely one: 0.4275 > 0.2


def test_parting_accepts_the_reference_and_tensor_numbers():
    assert checks.check_parting(parting_ok).ok
    as_tensors = lambda g, b: tuple(torch.tensor(float(x)) for x in parting_ok(g, b))  # noqa: E731
    assert checks.check_parting(as_tensors).ok


@pytest.mark.parametrize("wrong, words", [
    (lambda g, b: (parting_ok(g, b)[0] - 1,) + parting_ok(g, b)[1:], "counted from 0"),
    (lambda g, b: (parting_ok(g, b)[0], -parting_ok(g, b)[1], parting_ok(g, b)[2]), "opposite"),
    (lambda g, b: parting_ok(g, b)[:2] + (parting_ok(g, b)[2] - parting_ok(g, b)[1],),
     "included step t itself"),
    (lambda g, b: parting_ok(g, b)[:2] + (-parting_ok(g, b)[2],), "BEAM's sum"),
])
def test_parting_names_typical_mistakes(wrong, words):
    result = checks.check_parting(wrong)
    assert result.done and not result.ok
    assert words in str(result), result


def test_parting_skeleton_is_not_done():
    assert not checks.check_parting(skeleton).done
