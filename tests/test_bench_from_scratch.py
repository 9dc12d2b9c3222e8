"""bench.from_scratch: the attention chapter's pair at two sizes, as BENCHMARKS.md renders it."""

from __future__ import annotations

import copy

import pytest

from bench import from_scratch, report
from lib.course import reference
from lib.experiments import long_inputs


def test_the_two_sizes_differ_from_the_chapter_only_in_size_and_steps():
    small, big = from_scratch.SIZES["1 x 128"], from_scratch.SIZES["2 x 512"]
    assert small == long_inputs.MODELS
    for label in ("fixed vector", "attention"):
        b = big[label]
        assert (b.emb_dim, b.hidden_size, b.num_layers) == (
            reference.MODEL["emb_dim"], reference.MODEL["hidden_size"],
            reference.MODEL["num_layers"])
        assert b.steps == from_scratch.REFERENCE_STEPS
        assert b.attention == small[label].attention and b.seed == small[label].seed
    assert sorted(from_scratch.RUNS) == ["1x128-attention", "1x128-fixed-vector",
                                         "2x512-attention", "2x512-fixed-vector"]


def test_the_committed_run_renders_every_model_and_both_verdicts():
    d = from_scratch.committed_results()
    assert d["missing"] == [] and len(d["runs"]) == 4
    text = "\n".join(report.section_from_scratch(d))
    for r in d["runs"]:
        assert f"| {r['size']} | {r['label']} | {r['single_bleu']:.1f} |" in text
    # the two findings the attention chapter cites, from the committed numbers
    small, big = d["comparisons"]["1 x 128"]["joined"], d["comparisons"]["2 x 512"]["joined"]
    assert small["low"] > 0 and big["low"] <= 0 <= big["high"]
    assert "1 x 128: attention minus fixed vector is +20.0 BLEU" in text
    assert "attention scores higher than the fixed vector" in text
    assert "attention and the fixed vector are not told apart" in text


def test_the_report_places_it_after_the_chapter_models_and_a_missing_figure_raises():
    d = copy.deepcopy(from_scratch.committed_results())
    assert report._section_from_scratch({}) == []  # results from before the run existed
    assert report._section_from_scratch({"from_scratch": d})[0] == report.FROM_SCRATCH_SECTION
    del d["runs"][0]["single_bleu"]
    with pytest.raises(report.MissingFigure):
        report.section_from_scratch(d)
