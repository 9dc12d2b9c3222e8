"""The whole encoder-decoder: encoder + decoder (with its prediction head) + vocabularies.

`Seq2Seq.translate(["I'm hungry."])` is the public entry point the chapters use.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
from torch import nn

from lib import search
from lib.data import UNK, Vocab, detokenize, tokenize
from lib.decoder import Decoder
from lib.encoder import Encoder


@dataclass(frozen=True)
class ModelConfig:
    """Sizes of the model; stored in checkpoints so a model is rebuilt exactly."""

    src_vocab_size: int
    tgt_vocab_size: int
    emb_dim: int = 256
    hidden_size: int = 512
    num_layers: int = 2
    dropout: float = 0.2
    feed_context: bool = True  # Cho et al. 2014 wiring; False gives Sutskever et al. 2014
    attention: bool = False  # additive attention (Bahdanau et al. 2015): a context per step
    max_src_len: int = 40  # longest source (in tokens) translate() accepts
    max_tgt_len: int = 40  # default length cap when decoding

    def to_dict(self) -> dict:
        return asdict(self)


class Seq2Seq(nn.Module):
    def __init__(self, config: ModelConfig, src_vocab: Vocab, tgt_vocab: Vocab):
        super().__init__()
        if len(src_vocab) != config.src_vocab_size or len(tgt_vocab) != config.tgt_vocab_size:
            raise ValueError(f"vocabulary sizes {len(src_vocab)}/{len(tgt_vocab)} do not match "
                             f"the config's {config.src_vocab_size}/{config.tgt_vocab_size}")
        self.config = config
        self.src_vocab = src_vocab
        self.tgt_vocab = tgt_vocab
        c = config
        self.encoder = Encoder(c.src_vocab_size, c.emb_dim, c.hidden_size, c.num_layers, c.dropout)
        self.decoder = Decoder(c.tgt_vocab_size, c.emb_dim, c.hidden_size, c.num_layers,
                               c.dropout, c.feed_context, c.attention)

    @property
    def device(self) -> torch.device:
        return next(self.parameters()).device

    @property
    def attends(self) -> bool:
        """Whether the decoder attends over the source (ModelConfig.attention) or reads the
        one context vector: the question search, the widgets and the experiments ask."""
        return self.decoder.attention is not None

    def encode(self, src: torch.Tensor, src_lengths: torch.Tensor):
        """src (B, S) -> output states (B, S, H), hidden states (L, B, H), context (B, H).

        The hidden states initialise the decoder (eq. 3); the context, the last layer's
        final state, is what `feed_context` concatenates to every decoder input.
        With `config.attention` the third value is instead the `lib.attention.Memory` the
        decoder attends over (the output states, their projections W_h h_j and the source
        mask), which `decoder.step` takes where it would take the context.
        """
        outputs, hidden = self.encoder(src, src_lengths)
        if not self.attends:
            return outputs, hidden, hidden[-1]
        return outputs, hidden, self.decoder.attention.memory(outputs, src_lengths)

    def forward(self, src: torch.Tensor, src_lengths: torch.Tensor, tgt_in: torch.Tensor
                ) -> torch.Tensor:
        """Teacher-forced logits (B, T, V) for decoder inputs tgt_in (B, T)."""
        _, hidden, context = self.encode(src, src_lengths)
        logits, _ = self.decoder(tgt_in, hidden, context)
        return logits

    # ------------------------------------------------------------------ text in, text out

    def prepare(self, sentences: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
        """Check and number English sentences -> src (B, S) on the model's device, lengths (B,).

        A sentence made only of unknown words is accepted (it becomes <unk> tokens, and the
        translation is a guess); an empty one, a non-string or one longer than
        `config.max_src_len` tokens is refused with an error naming it.
        """
        if isinstance(sentences, str):
            raise TypeError("translate() takes a list of sentences; wrap a single one in [...]")
        if not isinstance(sentences, (list, tuple)):
            raise TypeError(f"translate() takes a list of sentences, got "
                            f"{type(sentences).__name__}: {sentences!r}")
        ids = []
        for i, s in enumerate(sentences):
            if not isinstance(s, str):
                raise TypeError(f"sentence {i} is {type(s).__name__}, not str: {s!r}")
            toks = tokenize(s)
            if not toks:
                raise ValueError(f"sentence {i} is empty: {s!r}")
            if len(toks) > self.config.max_src_len:
                raise ValueError(f"sentence {i} has {len(toks)} tokens, more than the model's "
                                 f"max_src_len={self.config.max_src_len}")
            ids.append(self.src_vocab.encode(toks))
        if not ids:
            raise ValueError("no sentences to translate")
        lengths = torch.tensor([len(x) for x in ids])
        src = torch.zeros(len(ids), int(lengths.max()), dtype=torch.long)
        for i, x in enumerate(ids):
            src[i, :len(x)] = torch.tensor(x)
        return src.to(self.device), lengths

    def unknown_fraction(self, sentence: str) -> float:
        """Share of a sentence's tokens that the source vocabulary does not know."""
        ids = self.src_vocab.encode(tokenize(sentence))
        return sum(i == UNK for i in ids) / max(len(ids), 1)

    @torch.no_grad()
    def translate(self, sentences: list[str], beam_size: int = 1, max_len: int | None = None,
                  alpha: float | None = None) -> list[str]:
        """Translate English sentences to French: greedy for beam_size=1, else beam search.

        Each output stops at <eos> or at its length cap: max_len (default config.max_tgt_len)
        and at most 2 * S + 6 tokens for a source of S tokens (`lib.search.SOURCE_CAP`).
        """
        search.check_beam(self, beam_size)  # before `== 1`: True and 1.0 are refused
        src, lengths = self.prepare(sentences)
        was_training = self.training
        self.eval()
        try:
            if beam_size == 1 and alpha is None:
                ids = search.greedy(self, src, lengths, max_len=max_len, source_cap=True)
            else:
                ids = search.beam_search(self, src, lengths, beam_size=beam_size,
                                         max_len=max_len, alpha=alpha, source_cap=True).tokens
        finally:
            self.train(was_training)
        return [detokenize(self.tgt_vocab.decode(row)) for row in ids]
