"""Checker for the decoder chapter's bridge exercise: any good design passes, not one answer.

    check_bridge(make_bridge)   a trainable map from the encoder's final states (L_enc, B,
                                H_enc) to the decoder's initial states (L_dec, B, H_dec)

Each part of the check (`_bridge_shapes`, `_bridge_sentences_apart`, ...) builds the learner's
bridge afresh and tests one thing every good bridge does; a bridge that fails names the design
mistake behind it (sentences mixed by a reshape, only the top layer read, layers paired one to
one, no tanh, no trainable weights). `lib.checks.decoder` imports `check_bridge`, so the
chapter reaches it with its other checkers.
"""

from __future__ import annotations

import torch

from lib.checks.harness import CheckResult, Mismatch, call, expect_shape, run_checks
from lib.device import one_thread

# ---------------------------------------------------------------------------------------------
# make_bridge(enc_layers, enc_hidden, dec_layers, dec_hidden) -> nn.Module:
# hidden (L_enc, B, H_enc) -> initial decoder states (L_dec, B, H_dec)
# ---------------------------------------------------------------------------------------------

BRIDGE_NAMES = ("enc_layers", "enc_hidden", "dec_layers", "dec_hidden")
# (L_enc, H_enc, L_dec, H_dec): decoders deeper and shallower than their encoders
BRIDGE_SIZES = [(2, 16, 3, 8), (3, 10, 1, 12), (1, 6, 2, 6)]


def _build_bridge(make_bridge, le: int, he: int, ld: int, hd: int) -> torch.nn.Module:
    torch.manual_seed(0)
    bridge = call(make_bridge, le, he, ld, hd, names=BRIDGE_NAMES)
    if not isinstance(bridge, torch.nn.Module):
        raise Mismatch(f"make_bridge should return an nn.Module (a class with a forward), "
                       f"got {type(bridge).__name__}")
    return bridge


def _bridge_forward(bridge, hidden: torch.Tensor, where: str) -> torch.Tensor:
    out = call(bridge, hidden, names=("hidden",), where=where)
    if not torch.is_tensor(out):
        raise Mismatch(f"the bridge should return a tensor, got {type(out).__name__}")
    return out


def _bridge_shapes(make_bridge) -> str:
    """(L_dec, B, H_dec) for every pair of sizes; (B, L_dec, H_dec) is named as batch first."""
    for le, he, ld, hd in BRIDGE_SIZES:
        bridge = _build_bridge(make_bridge, le, he, ld, hd)
        B = 4
        hidden = torch.randn(le, B, he).tanh()  # (L_enc, B, H_enc)
        out = _bridge_forward(bridge, hidden, f"{le} x {he} -> {ld} x {hd}")
        if tuple(out.shape) == (B, ld, hd) and B != ld:
            raise Mismatch(f"the output has shape (B, L_dec, H_dec) = {tuple(out.shape)}: "
                           f"the decoder's nn.GRU wants its initial state layers first, "
                           f"(L_dec, B, H_dec)")
        expect_shape(f"the initial states for {le} x {he} -> {ld} x {hd}", out, (ld, B, hd))
    return "(L_dec, B, H_dec) for three pairs of sizes"


def _bridge_sentences_apart(make_bridge) -> str:
    """Changing one sentence's encoder states moves that sentence's decoder states only: a
    reshape without the transpose mixes sentences, a bridge that moves none ignores its input."""
    le, he, ld, hd = BRIDGE_SIZES[0]
    bridge = _build_bridge(make_bridge, le, he, ld, hd)
    hidden = torch.randn(le, 5, he).tanh()
    changed = hidden.clone()
    changed[:, 0] = -changed[:, 0]  # only sentence 0 changes
    with torch.no_grad():
        a = _bridge_forward(bridge, hidden, "5 sentences")
        b = _bridge_forward(bridge, changed, "5 sentences")
    moved = (a - b).abs().amax(dim=(0, 2))  # (B,) how much each sentence's states moved
    if moved[1:].max() > 1e-6:
        raise Mismatch("changing sentence 0's encoder states changed other sentences' "
                       "decoder states: the sentences got mixed. A reshape of (L, B, H) "
                       "to (B, L * H) needs the layers and the batch swapped first "
                       "(hidden.transpose(0, 1)), or a view mixes layers of one sentence "
                       "with those of the next")
    if moved[0] <= 1e-6:
        raise Mismatch("sentence 0's decoder states did not change when its encoder states "
                       "did: the bridge ignores its input")
    return "each sentence's states depend on that sentence only"


def _bridge_every_layer(make_bridge) -> str:
    """Each encoder layer's state reaches the decoder: a bridge of hidden[-1] alone is named."""
    le, he, ld, hd = BRIDGE_SIZES[0]
    bridge = _build_bridge(make_bridge, le, he, ld, hd)
    hidden = torch.randn(le, 3, he).tanh()
    for layer in range(le):
        changed = hidden.clone()
        changed[layer] = -changed[layer]
        with torch.no_grad():
            diff = (_bridge_forward(bridge, hidden, "")
                    - _bridge_forward(bridge, changed, "")).abs().max()
        if diff <= 1e-6:
            which = "top" if layer == le - 1 else f"layer {layer + 1}"
            raise Mismatch(f"the decoder's states do not depend on the encoder's {which} "
                           f"state: a bridge that reads only hidden[-1] throws away what "
                           f"the lower layers summarised; let every decoder layer read "
                           f"every encoder layer's final state")
    return "every encoder layer reaches the decoder"


def _bridge_every_pair(make_bridge) -> str:
    """Every decoder layer reads every encoder layer (layer-to-layer pairing is named), and the
    decoder layers differ (one map copied to every layer is named)."""
    le, he, ld, hd = BRIDGE_SIZES[0]
    bridge = _build_bridge(make_bridge, le, he, ld, hd)
    hidden = torch.randn(le, 3, he).tanh()
    with torch.no_grad():
        base = _bridge_forward(bridge, hidden, "")
        for layer in range(le):
            changed = hidden.clone()
            changed[layer] = -changed[layer]
            moved = (_bridge_forward(bridge, changed, "") - base).abs().amax(dim=(1, 2))
            deaf = [j for j in range(ld) if moved[j] <= 1e-6]  # moved: (L_dec,)
            if deaf:
                raise Mismatch(f"decoder layer {deaf[0] + 1} does not read encoder layer "
                               f"{layer + 1}: pairing layers one to one (or by position) "
                               f"stops working when the depths differ; let every decoder "
                               f"layer read every encoder layer's final state")
        if ld > 1 and all(torch.allclose(base[j], base[0], atol=1e-6) for j in range(ld)):
            raise Mismatch(f"all {ld} decoder layers start from the same state: one map "
                           f"copied to every layer gives the layers nothing to tell them "
                           f"apart; map to L_dec * H_dec numbers, one block per layer")
    return "every decoder layer reads every encoder layer, and the layers differ"


def _bridge_like_a_gru(make_bridge) -> str:
    """States inside [-1, 1] even for large inputs, as a GRU's are: a bridge without tanh fails."""
    le, he, ld, hd = BRIDGE_SIZES[0]
    bridge = _build_bridge(make_bridge, le, he, ld, hd)
    hidden = 50 * torch.randn(le, 6, he)  # far outside a GRU's range: the map must bound it
    with torch.no_grad():
        out = _bridge_forward(bridge, hidden, "large inputs")
    if out.abs().max() > 1 + 1e-6:
        raise Mismatch("some initial states lie outside [-1, 1], where a GRU's states never "
                       "are: end the bridge with a tanh, as the GRU's own candidate state "
                       "does")
    return "states inside [-1, 1]"


def _bridge_trainable(make_bridge) -> str:
    """Registered weights that a backward pass reaches (not detached, not under no_grad)."""
    le, he, ld, hd = BRIDGE_SIZES[1]
    bridge = _build_bridge(make_bridge, le, he, ld, hd)
    params = [p for p in bridge.parameters() if p.requires_grad]
    if not params:
        raise Mismatch("the bridge has no trainable parameters: register its layers as "
                       "attributes (self.proj = nn.Linear(...)) in __init__")
    out = _bridge_forward(bridge, torch.randn(le, 2, he).tanh(), "")
    unreached = ("no gradient reaches the bridge's weights: do not detach or wrap the forward "
                 "in torch.no_grad()")
    if not out.requires_grad:
        raise Mismatch(unreached)
    out.sum().backward()
    if all(p.grad is None or not p.grad.abs().sum() for p in params):
        raise Mismatch(unreached)
    return f"{sum(p.numel() for p in params):,} trainable weights that get a gradient"


def reference_bridge(le: int, he: int, ld: int, hd: int, gen: torch.Generator):
    """A bridge of one linear map of all the encoder's final states, then tanh, with random
    weights drawn from `gen`: hidden (L_enc, B, H_enc) -> (L_dec, B, H_dec)."""
    weight = torch.randn(ld * hd, le * he, generator=gen) / (le * he) ** 0.5
    bias = 0.3 * torch.randn(ld * hd, generator=gen)

    def bridge(hidden: torch.Tensor) -> torch.Tensor:
        B = hidden.size(1)
        flat = hidden.transpose(0, 1).reshape(B, le * he)  # (B, L_enc * H_enc)
        return torch.tanh(flat @ weight.T + bias).view(B, ld, hd).transpose(0, 1)
    return bridge


def _bridge_fits_reference(make_bridge) -> str:
    """Trained for a moment, the bridge gives `reference_bridge`'s states on new inputs: a good
    design can; one that cannot mix every encoder layer into every decoder layer cannot."""
    le, he, ld, hd = 2, 6, 3, 4
    gen = torch.Generator().manual_seed(1)
    reference = reference_bridge(le, he, ld, hd, gen)
    bridge = _build_bridge(make_bridge, le, he, ld, hd)
    train_x = torch.randn(le, 256, he, generator=gen).tanh()
    test_x = torch.randn(le, 64, he, generator=gen).tanh()
    params = [p for p in bridge.parameters() if p.requires_grad]
    optimizer = torch.optim.Adam(params, lr=0.02)
    target = reference(train_x)
    # The loop runs unguarded: `call`'s time limit traces every line, which would make 400
    # optimiser steps take seconds; the forward already ran under `call` in every check
    # before this one, so it is known to return in time.
    try:
        with torch.enable_grad(), one_thread():  # tiny matrices: threads only wait
            for _ in range(400):
                loss = (bridge(train_x) - target).pow(2).mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
    except Exception as e:  # noqa: BLE001 - the learner's module, reported in words
        raise Mismatch(f"while training the bridge for a moment, it raised "
                       f"{type(e).__name__}: {e}") from None
    with torch.no_grad():
        error = (_bridge_forward(bridge, test_x, "after fitting") - reference(test_x)).abs().mean()
    if error > 0.02:
        raise Mismatch(f"trained to copy a reference bridge (one linear map of all the "
                       f"encoder's final states, then tanh), yours stays {error:.3f} away "
                       f"on average on new inputs: it cannot give every decoder layer its "
                       f"own mix of all the encoder layers")
    return f"trained to copy a reference bridge: mean error {error:.4f} on new inputs"


_BRIDGE_PARTS = (_bridge_shapes, _bridge_sentences_apart, _bridge_every_layer,
                 _bridge_every_pair, _bridge_like_a_gru, _bridge_trainable,
                 _bridge_fits_reference)


def check_bridge(make_bridge) -> CheckResult:
    """`make_bridge(enc_layers, enc_hidden, dec_layers, dec_hidden)` returns a module whose
    forward maps the encoder's hidden states (L_enc, B, H_enc) to the decoder's initial states
    (L_dec, B, H_dec). Checked by what any good bridge must do, not against one answer: the
    shape, one sentence never leaking into another, every encoder layer used by every decoder
    layer, states inside [-1, 1] as a GRU's are, weights that training can reach, and the
    values: trained for a moment, the bridge must give the initial states of
    `reference_bridge`."""
    return run_checks("a bridge between encoder and decoder",
                      *[lambda part=part: part(make_bridge) for part in _BRIDGE_PARTS])
