"""lib.checks.bridge: check_bridge accepts different good designs and names each design
mistake; each of its parts passes a good bridge and makes the decision it is there for."""

from __future__ import annotations

import re

import pytest
import torch
from conftest import assert_rejects, skeleton

from lib.checks import bridge as checks
from lib.checks.harness import Mismatch

pytestmark = pytest.mark.usefixtures("one_thread")  # tiny modules: see conftest


# --- check_bridge -------------------------------------------------------------------------------


class BridgeOk(torch.nn.Module):
    """Every decoder layer reads every encoder layer's final state, through a tanh."""

    def __init__(self, enc_layers, enc_hidden, dec_layers, dec_hidden):
        super().__init__()
        self.dec_layers, self.dec_hidden = dec_layers, dec_hidden
        self.proj = torch.nn.Linear(enc_layers * enc_hidden, dec_layers * dec_hidden)

    def forward(self, hidden):
        L, B, H = hidden.shape
        flat = hidden.transpose(0, 1).reshape(B, L * H)  # (B, L * H), one row per sentence
        out = torch.tanh(self.proj(flat)).view(B, self.dec_layers, self.dec_hidden)
        return out.transpose(0, 1).contiguous()  # (L_dec, B, H_dec)


class BridgePerLayer(torch.nn.Module):
    """Another good design: one map per decoder layer, from the mean of the encoder layers and
    the top layer side by side."""

    def __init__(self, enc_layers, enc_hidden, dec_layers, dec_hidden):
        super().__init__()
        self.maps = torch.nn.ModuleList(torch.nn.Linear(2 * enc_hidden, dec_hidden)
                                        for _ in range(dec_layers))

    def forward(self, hidden):
        both = torch.cat([hidden.mean(0), hidden[-1]], dim=-1)  # (B, 2H)
        return torch.stack([torch.tanh(m(both)) for m in self.maps])


class BridgeMixed(BridgeOk):
    def forward(self, hidden):
        L, B, H = hidden.shape
        out = torch.tanh(self.proj(hidden.reshape(B, L * H)))  # layers and batch mixed
        return out.view(self.dec_layers, B, self.dec_hidden)


class BridgeTopOnly(torch.nn.Module):
    def __init__(self, enc_layers, enc_hidden, dec_layers, dec_hidden):
        super().__init__()
        self.dec_layers = dec_layers
        self.proj = torch.nn.Linear(enc_hidden, dec_hidden)

    def forward(self, hidden):
        return torch.tanh(self.proj(hidden[-1])).expand(self.dec_layers, -1, -1)


class BridgeLinear(BridgeOk):
    def forward(self, hidden):
        L, B, H = hidden.shape
        out = self.proj(hidden.transpose(0, 1).reshape(B, L * H))  # no tanh
        return out.view(B, self.dec_layers, self.dec_hidden).transpose(0, 1)


class BridgeBatchFirst(BridgeOk):
    def forward(self, hidden):
        return super().forward(hidden).transpose(0, 1)  # (B, L_dec, H_dec)


class BridgeFrozen(BridgeOk):
    def forward(self, hidden):
        with torch.no_grad():
            return super().forward(hidden)


class BridgeLayerToLayer(torch.nn.Module):
    """Decoder layer j reads encoder layer min(j, L_enc - 1) only."""

    def __init__(self, enc_layers, enc_hidden, dec_layers, dec_hidden):
        super().__init__()
        self.enc_layers = enc_layers
        self.maps = torch.nn.ModuleList(torch.nn.Linear(enc_hidden, dec_hidden)
                                        for _ in range(dec_layers))

    def forward(self, hidden):
        return torch.stack([torch.tanh(m(hidden[min(j, self.enc_layers - 1)]))
                            for j, m in enumerate(self.maps)])


class BridgeCopied(torch.nn.Module):
    """One map of all the encoder layers, copied to every decoder layer."""

    def __init__(self, enc_layers, enc_hidden, dec_layers, dec_hidden):
        super().__init__()
        self.dec_layers = dec_layers
        self.proj = torch.nn.Linear(enc_layers * enc_hidden, dec_hidden)

    def forward(self, hidden):
        L, B, H = hidden.shape
        out = torch.tanh(self.proj(hidden.transpose(0, 1).reshape(B, L * H)))  # (B, H_dec)
        return out.unsqueeze(0).expand(self.dec_layers, -1, -1)


class BridgeNarrow(BridgeOk):
    """Squeezes all the encoder's states through two numbers before the decoder's layers."""

    def __init__(self, enc_layers, enc_hidden, dec_layers, dec_hidden):
        super().__init__(enc_layers, enc_hidden, dec_layers, dec_hidden)
        self.proj = torch.nn.Sequential(
            torch.nn.Linear(enc_layers * enc_hidden, 2),
            torch.nn.Linear(2, dec_layers * dec_hidden))


def test_bridge_accepts_two_different_good_designs():
    assert checks.check_bridge(BridgeOk).ok
    assert checks.check_bridge(BridgePerLayer).ok


@pytest.mark.parametrize("wrong, words", [
    (BridgeMixed, "the sentences got mixed"),
    (BridgeTopOnly, "reads only hidden[-1]"),
    (BridgeLinear, "end the bridge with a tanh"),
    (BridgeBatchFirst, "layers first, (L_dec, B, H_dec)"),
    (BridgeFrozen, "no gradient reaches the bridge's weights"),
    (BridgeLayerToLayer, "decoder layer 2 does not read encoder layer 1"),
    (BridgeCopied, "start from the same state"),
    (BridgeNarrow, "trained to copy a reference bridge"),
    (lambda *sizes: "a bridge", "should return an nn.Module"),
])
def test_bridge_names_the_typical_mistakes(wrong, words):
    assert_rejects(checks.check_bridge(wrong), words)


def test_bridge_stub_is_not_done():
    assert not checks.check_bridge(skeleton).done


class BridgeConstant(BridgeOk):
    """Ignores the encoder: every sentence starts from the same states."""

    def forward(self, hidden):
        return super().forward(torch.zeros_like(hidden))


@pytest.mark.parametrize("part", checks._BRIDGE_PARTS, ids=lambda part: part.__name__)
def test_every_part_passes_a_good_bridge(part):
    assert part(BridgeOk)
    assert part(BridgePerLayer)


@pytest.mark.parametrize("part, wrong, words", [
    (checks._bridge_shapes, BridgeBatchFirst, "layers first, (L_dec, B, H_dec)"),
    (checks._bridge_sentences_apart, BridgeMixed, "the sentences got mixed"),
    (checks._bridge_sentences_apart, BridgeConstant, "the bridge ignores its input"),
    (checks._bridge_every_layer, BridgeTopOnly, "reads only hidden[-1]"),
    (checks._bridge_every_pair, BridgeLayerToLayer, "decoder layer 2 does not read encoder "
                                                    "layer 1"),
    (checks._bridge_every_pair, BridgeCopied, "start from the same state"),
    (checks._bridge_like_a_gru, BridgeLinear, "end the bridge with a tanh"),
    (checks._bridge_trainable, BridgeFrozen, "no gradient reaches the bridge's weights"),
    (checks._bridge_fits_reference, BridgeNarrow, "trained to copy a reference bridge"),
], ids=lambda x: getattr(x, "__name__", "words"))
def test_each_part_names_its_mistake(part, wrong, words):
    with pytest.raises(Mismatch, match=re.escape(words)):
        part(wrong)


def test_reference_bridge_maps_every_layer_into_every_layer_inside_the_gru_range():
    ref = checks.reference_bridge(2, 6, 3, 4, torch.Generator().manual_seed(1))
    assert float(ref(50 * torch.randn(2, 5, 6)).abs().max()) <= 1
    hidden = torch.randn(2, 5, 6).tanh()
    out = ref(hidden)
    assert out.shape == (3, 5, 4)
    changed = hidden.clone()
    changed[0, 1] = -changed[0, 1]  # encoder layer 1 of sentence 1
    moved = (ref(changed) - out).abs().amax(dim=2)  # (L_dec, B)
    assert bool((moved[:, 1] > 0).all()) and float(moved[:, [0, 2, 3, 4]].max()) == 0
