"""bench.chapter_models: what it records for each of the attention chapter's models.

The models themselves take minutes to train: here `cached_runs` and the chapter's timing are
stand-ins, so that what the bench computes from them (single-sentence BLEU, buckets, keys, where
each model came from, the paired bootstrap on the longest bucket) is checked on the real test
sentences and groups.
"""

from __future__ import annotations

import dataclasses
import json

import pytest
import torch

from bench import chapter_models, run_all
from lib.course.memo import load_corpus
from lib.experiments import long_inputs


@pytest.fixture
def stand_ins(tmp_path, monkeypatch):
    """Runs whose hypotheses, joined and single, are the first references (the fixed vector's:
    the last word of each dropped), a cache in tmp_path holding all but the attention model's
    result, and a chapter timing stub. Returns the labels `cached_runs` was asked for."""
    split = load_corpus().split
    refs = [r[0] for _, r, _ in long_inputs.test_groups(long_inputs.ScratchConfig(), split)]
    singles = [r[0] for _, r in split.test]
    paths = {c: tmp_path / f"attention-models-{label.replace(' ', '-')}.pt"
             for label, c in chapter_models.CONFIGS.items()}
    monkeypatch.setattr(long_inputs, "weights_path", lambda config: paths[config])
    for label, config in chapter_models.CONFIGS.items():
        if label != "attention":
            paths[config].with_suffix(".json").write_text("{}")
    asked = []

    def cached_runs(configs):
        asked.extend(configs)
        paths[configs["attention"]].with_suffix(".json").write_text("{}")  # made now
        cut = lambda texts: [" ".join(t.split()[:-1]) for t in texts]  # noqa: E731
        return {label: {"steps": c.steps, "seconds": 60.0 * c.steps / 100,
                        "decode_seconds": 12.5,
                        "hypotheses": refs if label == "attention" else cut(refs),
                        "single_hypotheses": singles if label == "attention" else cut(singles)}
                for label, c in configs.items()}

    monkeypatch.setattr(long_inputs, "cached_runs", cached_runs)
    monkeypatch.setattr(chapter_models.book, "with_models",
                        lambda page: {"page": page, "seconds": 1.0})
    return asked


def test_each_model_is_recorded_with_its_bleu_buckets_key_and_origin(stand_ins):
    record = chapter_models.run()
    assert stand_ins == list(chapter_models.CONFIGS) == ["fixed vector", "attention"]
    assert record["chapter"] == {"page": "book/attention", "seconds": 1.0}
    assert record["test_sources"] == 573 and record["k_max"] == 6
    assert record["torch"] == torch.__version__ and "reference_key" not in record
    models = {m["label"]: m for m in record["models"]}
    assert list(models) == ["fixed vector", "attention"]
    assert models["fixed vector"]["key"] == "attention-models-fixed-vector"
    assert [m["from_cache"] for m in models.values()] == [True, False]
    assert record["made_here_minutes"] is not None
    steps = chapter_models.CONFIGS["fixed vector"].steps
    assert models["fixed vector"]["steps"] == steps
    assert models["fixed vector"]["minutes"] == pytest.approx(steps / 100)
    assert models["attention"]["config"] == dataclasses.asdict(chapter_models.CONFIGS[
        "attention"])
    # single: the 2,000 single test sentences, every reference
    assert models["attention"]["single_bleu"] == pytest.approx(100.0)
    assert 0 < models["fixed vector"]["single_bleu"] < 100.0
    buckets = models["attention"]["buckets"]
    assert [b["bucket"] for b in buckets] == ["1–8", "9–16", "17–24", "25–32", "≥ 33"]
    assert sum(b["sources"] for b in buckets) == 573
    assert all(b["bleu"] == pytest.approx(100.0) for b in buckets)
    assert all(b["bleu"] < 100.0 for b in models["fixed vector"]["buckets"])
    longest = record["longest"]
    assert longest["bucket"] == "≥ 33" and longest["sources"] == buckets[-1]["sources"]
    assert 0 < longest["low"] <= longest["difference"] <= longest["high"]
    json.dumps(record, allow_nan=False)  # no NaN: the committed file is strict JSON


def test_without_the_chapter_its_time_is_not_measured(stand_ins, monkeypatch):
    monkeypatch.setattr(chapter_models, "buckets", lambda hyps, groups: [
        {"bucket": "1–8", "sources": 1, "bleu": 1.0}, {"bucket": "9–16", "sources": 1,
                                                       "bleu": 1.0}])
    monkeypatch.setattr(chapter_models, "longest_bucket", lambda runs, groups: {
        "bucket": "9–16", "sources": 1, "difference": 0.0, "low": -1.0, "high": 1.0})
    record = chapter_models.run(time_chapter=False)
    assert record["chapter"] == {"skipped": "bench.chapter_models run --skip-chapter"}
    section = chapter_models.section(record)
    assert "Its execution time: not measured in this run" in section


def test_an_empty_bucket_has_no_bleu():
    groups = [("a b", ["v w x y z ."], 1)]
    rows = chapter_models.buckets(["v w x y z ."], groups)
    assert rows[0] == {"bucket": "1–8", "sources": 1, "bleu": pytest.approx(100.0)}
    assert rows[1] == {"bucket": "9–16", "sources": 0, "bleu": None}


def test_make_bench_runs_the_chapter_models_then_the_playground(monkeypatch, tmp_path):
    """run_all's part: the models (rewriting the committed file), the export, the browser."""
    ran = []

    def run_output(cmd, extra=()):
        ran.append([str(c) for c in cmd[1:]])
        return "  reference model, beam 5   median 95.5 ms   [ok]\n"

    results = tmp_path / "chapter-models.json"
    results.write_text(json.dumps({"models": []}))
    monkeypatch.setattr(run_all, "run_output", run_output)
    monkeypatch.setattr(run_all.chapter_models, "RESULTS", results)
    part = run_all.attention_parts("python", quick=False)
    assert ran == [["-m", "bench.chapter_models", "run"],
                   ["-m", "lib.course.playground", "--out", "_build/playground"],
                   ["-m", "bench.playground", "--repeats", "11"]]
    assert part == {"chapter_models": {"models": []},
                    "playground": {"command": "python -m bench.playground --repeats 11",
                                   "output": run_output(["x"])}}


def test_rekey_renames_the_same_runs_and_refuses_other_ones(stand_ins):
    """A change of the key's formula alone: the figures stay, their keys follow, and the
    report says so; another config, or the older results of other models, are refused."""
    record = chapter_models.run(time_chapter=False)
    data = dict(record, models=[dict(m, key=f"attention-models-{i:016x}")
                                for i, m in enumerate(record["models"])])
    old = {m["label"]: m["key"] for m in data["models"]}
    again = chapter_models.rekey(data, "the formula changed", "2030-01-01")
    assert {m["label"]: m["key"] for m in again["models"]} == {
        label: chapter_models.model_key(c) for label, c in chapter_models.CONFIGS.items()}
    assert [dict(m, key=None) for m in again["models"]] == [dict(m, key=None)
                                                             for m in data["models"]]
    assert again["rekeyed"] == {"date": "2030-01-01", "why": "the formula changed", "old": old}
    assert "Re-keyed on 2030-01-01 from " in chapter_models.section(again)
    assert "Re-keyed" not in chapter_models.section(dict(data, rekeyed=None))
    models = [dict(m, config=dict(m["config"], steps=1)) for m in data["models"]]
    with pytest.raises(SystemExit, match="configs are not the current ones"):
        chapter_models.rekey(dict(data, models=models), "x", "2030-01-01")
    # the fine-tuned copies these models replaced: other labels and configs
    copies = [dict(m, label=label, config={"attention": m["config"]["attention"], "steps": 200})
              for m, label in zip(data["models"], ["fixed vector", "attention"])]
    with pytest.raises(SystemExit, match="configs are not the current ones"):
        chapter_models.rekey(dict(data, models=[dict(copies[0], label="reference as it is"),
                                                *copies]), "x", "2030-01-01")
