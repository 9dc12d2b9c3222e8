"""A refactor of training needs no retrain; a change of what it computes cannot ship unnoticed.

See tests/training_golden.py and docs/decisions.md ("What a model's key is").
"""

import json
import re
from pathlib import Path

import pytest
import training_golden as golden

from lib import train
from lib.course import reference

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def recorded():
    return json.loads(golden.GOLDEN.read_text(encoding="utf-8"))


def test_the_record_is_for_this_training_version(recorded):
    assert recorded["training_version"] == train.TRAINING_VERSION, (
        f"lib.train.TRAINING_VERSION is {train.TRAINING_VERSION} but tests/golden/training.json "
        f"was recorded for {recorded['training_version']}: after bumping the version (and "
        f"retraining: make train), record the new behaviour with "
        f"`python -m tests.training_golden --record`")
    assert recorded["training_torch"] == train.TRAINING_TORCH


def test_training_computes_what_was_recorded(recorded):
    found = golden.run()
    diffs = golden.differences(found, {k: recorded[k] for k in ("data", "training")})
    assert not diffs, (
        "lib's data pipeline or training computes something else than the recorded run "
        f"(TRAINING_VERSION {train.TRAINING_VERSION}); {len(diffs)} differences, first: "
        + "; ".join(diffs[:5]) + ". Bump the training version (lib.train.TRAINING_VERSION) and "
        "retrain (make train), or explain why behaviour is unchanged (in the commit message); "
        "then re-record: python -m tests.training_golden --record")


def test_the_comparison_sees_a_small_change_and_ignores_rounding(recorded):
    """The oracle itself: a statistic moved by 1e-6 is seen, by 1e-13 it is not."""
    part = {k: recorded[k] for k in ("data", "training")}
    weights = part["training"]["teacher_forcing=1.0"]["weights"]
    name = "decoder.rnn.weight_hh_l1"
    assert name in weights
    for factor, seen in ((1 + 1e-6, True), (1 + 1e-13, False)):
        moved = json.loads(json.dumps(part))
        moved["training"]["teacher_forcing=1.0"]["weights"][name][1] *= factor
        assert bool(golden.differences(moved, part)) is seen
    moved = json.loads(json.dumps(part))
    moved["data"]["tokens"][0] = ["I", "'m", "hungry", "."]
    assert golden.differences(moved, part)


def test_requirements_pin_the_torch_the_key_names():
    pinned = re.search(r"^torch==([\w.]+)", (ROOT / "requirements.txt").read_text(), re.M)
    assert pinned and pinned.group(1) == train.TRAINING_TORCH


def test_a_change_of_settings_gives_a_new_key_by_itself(monkeypatch):
    sha = "0" * 64
    base = reference.training_key(reference.DATA, reference.MODEL, reference.TRAIN, sha)
    assert base == reference.reference_key(sha)
    assert reference.training_key(reference.DATA, {**reference.MODEL, "hidden_size": 256},
                                  reference.TRAIN, sha) != base
    assert reference.training_key(reference.DATA, {**reference.MODEL, "attention": True},
                                  reference.TRAIN, sha) != base
    assert reference.training_key(reference.DATA, reference.MODEL,
                                  reference.TRAIN.__class__(**{**reference.TRAIN.to_dict(),
                                                               "lr": 1e-3}), sha) != base
    assert reference.training_key(reference.DATA.__class__(min_freq=2), reference.MODEL,
                                  reference.TRAIN, sha) != base
    assert reference.training_key(reference.DATA, reference.MODEL, reference.TRAIN,
                                  "1" * 64) != base
    monkeypatch.setattr(train, "TRAINING_VERSION", train.TRAINING_VERSION + 1)
    assert reference.reference_key(sha) != base
    monkeypatch.undo()
    monkeypatch.setattr(train, "TRAINING_TORCH", "9.9.9")
    assert reference.reference_key(sha) != base
    monkeypatch.undo()
    assert reference.reference_key(sha) == base
    with pytest.raises(ValueError, match="hiden_size"):
        reference.training_key(reference.DATA, {"hiden_size": 3}, reference.TRAIN, sha)
