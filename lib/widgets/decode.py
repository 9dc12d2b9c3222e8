"""Step the decoder on one sentence and keep what the widgets show at every step.

`lib.search` decodes for the answer; a widget also needs each step's decoder state, the top-k
next tokens and the rank of the written one, and the step-through lets the reader force a
prefix of their own before greedy continues. Greedy's choice and its log-probabilities are
`lib.search.log_probs` (<pad> and <sos> forbidden), so with no forced prefix the tokens are
`lib.search.greedy`'s (tests/test_widgets.py checks both against it).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from lib.data import EOS, SOS
from lib.search import check_max_len, log_probs


@dataclass
class Run:
    """One decoding of one sentence, step by step."""

    tokens: list[int] = field(default_factory=list)  # written, <eos> included if written
    logps: list[float] = field(default_factory=list)  # log P of each written token
    states: list[torch.Tensor] = field(default_factory=list)  # (L, H) state after each step
    tops: list[tuple[list[int], list[float]]] = field(default_factory=list)  # top-k ids, log P
    ranks: list[int] = field(default_factory=list)  # rank of the written token (1 = the best)


def decode(model, src: torch.Tensor, lengths: torch.Tensor, forced: list[int] | None = None,
           max_len: int | None = None, top_k: int = 0) -> Run:
    """Step `model.decoder.step` on one sentence: the `forced` tokens first, then greedy.

    src (1, S), lengths (1,). `top_k` > 0 keeps each step's k most likely tokens.
    """
    forced = list(forced or [])
    max_len = check_max_len(model, max_len)
    if len(forced) >= max_len:
        raise ValueError(f"the forced prefix has {len(forced)} tokens; the length cap "
                         f"max_len={max_len} leaves no step to continue")
    _, state, context = model.encode(src, lengths)  # (L, 1, H), (1, H)
    prev = torch.full((1,), SOS, dtype=torch.long, device=src.device)  # (1,)
    run = Run()
    for t in range(max_len):
        logits, state = model.decoder.step(prev, state, context)  # (1, V), (L, 1, H)
        logp = log_probs(logits)[0]  # (V,)
        tok = forced[t] if t < len(forced) else int(logp.argmax())
        lp = logp[tok]
        run.tokens.append(tok)
        run.logps.append(float(lp))
        run.states.append(state[:, 0].float().cpu())  # (L, H)
        run.ranks.append(int((logp > lp).sum()) + 1)
        if top_k:
            top_lp, top_id = logp.topk(min(top_k, logp.numel()))  # (k,)
            run.tops.append((top_id.tolist(), top_lp.tolist()))
        if tok == EOS:
            break
        prev = torch.full((1,), tok, dtype=torch.long, device=src.device)
    return run
