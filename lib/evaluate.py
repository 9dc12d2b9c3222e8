"""Score a model on held-out sentences with BLEU against all their references."""

from __future__ import annotations

import sacrebleu


def translate_all(model, sources: list[str], beam_size: int = 1, batch_size: int = 256,
                  **kwargs) -> list[str]:
    """Translate many sentences in length-sorted batches (little padding), in input order."""
    order = sorted(range(len(sources)), key=lambda i: len(sources[i]))
    out: list[str] = [""] * len(sources)
    for k in range(0, len(order), batch_size):
        idx = order[k:k + batch_size]
        hyps = model.translate([sources[i] for i in idx], beam_size=beam_size, **kwargs)
        for i, h in zip(idx, hyps):
            out[i] = h
    return out


def reference_streams(references: list[list[str]]) -> list[list[str | None]]:
    """Per-sentence reference lists -> sacrebleu's streams, padding ragged counts with None."""
    n = max(len(r) for r in references)
    return [[r[j] if j < len(r) else None for r in references] for j in range(n)]


def sacrebleu_score(hypotheses: list[str], references: list[list[str]]):
    """sacrebleu's corpus BLEU (default 13a tokenisation, exp smoothing), all references."""
    return sacrebleu.corpus_bleu(hypotheses, reference_streams(references))


def evaluate_bleu(model, pairs: list[tuple[str, list[str]]], beam_size: int = 1,
                  **kwargs) -> float:
    """Corpus BLEU (0-100) of `model` on (English, [French references]) pairs."""
    hyps = translate_all(model, [en for en, _ in pairs], beam_size=beam_size, **kwargs)
    return sacrebleu_score(hyps, [refs for _, refs in pairs]).score
