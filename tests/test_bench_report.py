"""BENCHMARKS.md is rendered only from results: every figure filled, none invented."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from bench import book, chapter_models, recipe_check, report
from lib.course import reference
from lib.experiments import long_inputs


def _ttb(reached):
    return {"evals": [{"step": 100, "train_seconds": 61.0, "bleu": 12.5},
                      {"step": 200, "train_seconds": 122.0, "bleu": 21.25}],
            "cap_minutes": 12.0, "reached_seconds": reached, "best_bleu": 21.25}


def _decode(g, b):
    return {"sentences": 2000, "greedy": {"sentences_per_s": g, "bleu": 30.5},
            "beam5": {"sentences_per_s": b, "bleu": 31.5}}


def _model(label, single, bleus, steps, from_cache=True):
    return {"label": label, "key": f"attention-models-{label[:3]}", "config": {}, "steps": steps,
            "from_cache": from_cache, "minutes": steps / 40, "decode_seconds": 33.3,
            "single_bleu": single,
            "buckets": [{"bucket": b, "sources": n, "bleu": s} for b, n, s in
                        zip(("1–8", "9–16", "≥ 17"), (400, 300, 0), bleus)]}


CHAPTER = {"page": "book/attention", "seconds": 48.25, "ok": True, "errors": [], "computed": [],
           "slowest_cells": [{"code_cell": 7, "seconds": 20.5, "first_line": "runs = f()"},
                             {"code_cell": 3, "seconds": 9.0, "first_line": "x = 1"}],
           "cache": "/c", "load_start": 0.1, "load_end": 0.2}
PLAYGROUND_OUT = """machine: Test CPU 9000, 2 CPUs; browser: /usr/bin/chromium
  reference model export abc: 9.87 MB [ok]
  attention model export: 10.12 MB [ok]
  page load until the reference model is ready: 812 ms
  reference model, beam 5            median  123.4 ms   min  120.0   max  130.0   [ok]
  attention model, beam 5            median  321.0 ms   min  300.0   max  350.0   [OVER]
"""


RESULTS = {
    "machine": {"cpu": "Test CPU 9000", "cores": 2, "ram_gib": 23.4, "threads": 2,
                "os": "Linux-test", "python": "3.11.7", "torch": "2.13.0+cpu",
                "load_start": 0.5, "load_end": 0.75},
    "versions": {"joeynmt": "2.3.0", "torchmetrics": "1.9.0"},
    "install": "torch first, then joeynmt",
    "reference": {"key": "0123456789abcdef"},
    "commands": ["python -m bench.training --steps 60"],
    "run": {"date": "2030-01-02 03:04", "quick": False, "results_file": "r.json", "note": "n",
            "minutes": 64.6},
    "joeynmt_notes": "Luong attention.",
    "throughput": {"ours": [4321.0, 4400.0], "joeynmt": [1234.0, 1300.0], "ours_median": 4360.0,
                   "joeynmt_median": 1267.0, "ratio": 3.44, "peak_gflops": 98.7,
                   "gflops": 33.3, "utilisation": 0.3374, "ours_params": 12_728_257,
                   "joeynmt_params": 12_721_920, "steps": 60, "warmup": 5, "batch_size": 256,
                   "model": "emb_dim=256"},
    "time_to_bleu": {"ours": _ttb(122.0), "joeynmt": _ttb(None), "target": 20.0,
                     "sentences": 2000, "eval_every": 100},
    "decoding": {"ours": _decode(1622.0, 260.0), "joeynmt": _decode(660.0, 123.0),
                 "repeats": 3, "ratio_greedy": 2.46, "ratio_beam5": 2.11, "notes": "alpha"},
    "bleu": {"sentences": 10000, "repeats": 7, "source": "Tatoeba",
             "corpus": {"lib_s": 0.9, "sacrebleu_s": 1.7, "lib_score": 60.3449,
                        "sacrebleu_score": 60.3449, "equal": True},
             "sentence": {"lib_s": 1.0, "sacrebleu_s": 2.0, "max_difference": 5.7e-14},
             "torchmetrics_sacre": {"s": 5.07, "score": 60.3165, "difference": -0.0284},
             "torchmetrics_plain": {"lib_score": 57.7983, "sacrebleu_score": 57.7983,
                                    "torchmetrics_score": 57.7692, "torchmetrics_s": 3.38,
                                    "difference_tm_vs_sacrebleu": -0.0292},
             "speedup": 1.89, "sentence_speedup": 2.0},
    "book": {"command": "jupyter-book build . --all -n -W --keep-going",
             "cold": {"train_s": 1080.0, "build_s": 180.0, "total_s": 1260.0,
                      "chapters": {"book/tensors": 20.0}, "models": book.COLD_MODELS},
             "warm": {"build_s": 185.0, "chapters": {"book/tensors": 21.5, "book/bleu": 150.0},
                      "chapters_source": "myst-nb build log"}},
    "sweep": {
        "gpu": {"device": "Test GPU", "date": "2030-01-01", "test_sentences": 2000,
                "results": {"ls2": {"variant": {"name": "ls2", "train": {"label_smoothing": 0.2}},
                                    "tokens": 3_160_000, "greedy": 36.87, "beam5": 39.34,
                                    "curve": [[1_190_000, 30.1]]}}},
        "cpu": {"date": "2030-01-03", "machine": "Test CPU 9000, 2 torch threads",
                "runs": [{"name": "reference", "overrides": {}, "greedy": 35.89,
                          "reference_key": "0123456789abcdef",
                          "beam5": 38.92, "test_sentences": 2000},
                         {"name": "label_smoothing=0.2", "overrides": {"label_smoothing": 0.2},
                          "reference_key": "0123456789abcdef",
                          "greedy": 36.11, "beam5": 39.05, "test_sentences": 2000}]}},
    "chapter_models": {
        "date": "2030-01-04 05:06", "machine": "Test CPU 9000, 2 cores, 2 torch threads",
        "torch": "2.13.0+cpu", "test_sources": 700,
        "k_max": 6, "made_here_minutes": None, "chapter": CHAPTER,
        "longest": {"bucket": "≥ 17", "sources": 120, "difference": 2.25, "low": 0.5,
                    "high": 4.0},
        "models": [_model("fixed vector", 29.25, (31.0, 24.0, None), 200),
                   _model("attention", 30.5, (32.0, 31.5, None), 200, from_cache=False)]},
    "playground": {"command": "python -m bench.playground --repeats 11",
                   "output": PLAYGROUND_OUT},
}


def test_every_figure_is_rendered():
    md = report.render(RESULTS)
    for text in ("Test CPU 9000", "4,360", "1,267", "3.44x", "33.7%", "98.7 GFLOP/s",
                 "2.0 min", "not reached in 12 min (best 21.2)", "1,622", "2.11x",
                 "60.3449", "57.7692", "1.89x", "21.0 min", "3.1 min", "150.0",
                 "12,728,257", "Luong attention.", "python -m bench.training --steps 60",
                 "a run of 65 minutes", "Test GPU", "| label_smoothing=0.2 | label_smoothing=0.2 "
                 "(`0123456789abcdef`) | 36.11 | 39.05 |",
                 "| ls2 | label_smoothing=0.2 | 3.16 | 36.87 | 39.34 | 1.19 |",
                 "No run reached greedy >= 37 and beam 5 >= 40: the best greedy score was 36.11 "
                 "(label_smoothing=0.2), the best beam-5 score 39.05 (label_smoothing=0.2).",
                 report.KEY_LINE.format(key="0123456789abcdef"),
                 "| Cold strict book build, every model trained here (#26) | <= 35 min | 21.0 "
                 "min | met |",
                 "| The attention chapter executes with its models cached (#26) | <= 60 s | "
                 "48.2 s | met |",
                 "| model | single | 1–8 (400) | 9–16 (300) | ≥ 17 (0) | training steps | "
                 "training min | decoding s | made by | key |\n|---|---|---|---|---|---|---|"
                 "---|---|---|\n",
                 "| fixed vector | 29.2 | 31.0 | 24.0 | – | 200 | 5.0 | 33 | the cache | "
                 "`attention-models-fix` |",
                 "| attention | 30.5 | 32.0 | 31.5 | – | 200 | 5.0 | 33 | this run | "
                 "`attention-models-att` |",
                 "on its 700 joined test sources (1 to 6 test sentences joined",
                 "*single*: the 2,000 single test sentences",
                 "Both models are trained from scratch, the same size, seed, data and steps",
                 "from sources of 1–8 tokens to sources of 9–16 tokens, the fixed-vector model's "
                 "BLEU falls (31.0 to 24.0)",
                 "On the 120 sources of ≥ 17 tokens, attention minus fixed vector is +2.2 BLEU "
                 "(95 % interval +0.5 to +4.0, paired bootstrap). The attention model scores "
                 "higher than the fixed-vector model",
                 "`book/attention` executed in 48.2 s with its models cached: within the target "
                 "of 60 s, met.",
                 "## The Playground in Chromium", "`python -m bench.playground --repeats 11`",
                 "attention model, beam 5            median  321.0 ms",
                 "1 of 4 figures with a target miss it"):
        assert text in md, text
    assert "None" not in md and "nan" not in md
    assert "**missed**" in md  # the slowest chapter (150 s) misses the 1-minute target
    assert "Short run" not in md
    assert "reference model `" not in md.split(report.CHAPTER_MODELS_SECTION)[1].split("\n## ")[0]


def test_learning_per_step_is_compared_at_the_last_shared_check():
    results = copy.deepcopy(RESULTS)
    results["time_to_bleu"]["joeynmt"]["evals"] = [
        {"step": 100, "train_seconds": 150.0, "bleu": 2.5},
        {"step": 300, "train_seconds": 450.0, "bleu": 9.0}]
    md = report.render(results)  # step 100 is the only step both checked: 0.61 vs 1.50 s/step
    assert ("at step 100 (the last check both runs made): ours test BLEU 12.5 after 0.61 s "
            "per step, JoeyNMT 2.5 after 1.50 s per step (2.5x ours)") in md


def test_the_full_softmax_row_appears_with_a_shortlist():
    assert "full softmax" not in report.render(RESULTS)  # older results: no such row
    results = copy.deepcopy(RESULTS)
    results["throughput"].update(shortlist=1000, ours_full_softmax=[3300.0, 3100.0, 3250.0])
    md = report.render(results)
    assert "| ours with the full softmax (no shortlist) | 3,250 | 3,300, 3,100, 3,250 |" in md


@pytest.mark.parametrize("path", ["throughput.ratio", "machine.cpu", "decoding.ratio_beam5",
                                  "bleu.torchmetrics_plain.torchmetrics_score",
                                  "book.warm.build_s", "time_to_bleu.ours.best_bleu",
                                  "reference.key", "chapter_models.longest.low",
                                  "chapter_models.chapter.seconds", "playground.output"])
def test_a_missing_figure_is_refused(path):
    results = copy.deepcopy(RESULTS)
    node = results
    *parents, last = path.split(".")
    for key in parents:
        node = node[key]
    del node[last]
    with pytest.raises(report.MissingFigure, match=last):
        report.render(results)


def test_skipped_cold_build_is_not_measured_never_a_number():
    results = copy.deepcopy(RESULTS)
    results["book"]["cold"] = {"skipped": "BENCH_SKIP_COLD=1"}
    md = report.render(results)
    assert "not measured in this run (BENCH_SKIP_COLD=1)" in md
    assert "21.0 min" not in md and "18.0 min" not in md


def test_a_run_without_its_duration_names_none():
    """Results of an older run_all, which did not time itself: no duration, not a guess."""
    results = copy.deepcopy(RESULTS)
    del results["run"]["minutes"]
    assert "a run of" not in report.render(results)


def test_short_run_is_labelled():
    results = copy.deepcopy(RESULTS)
    results["run"]["quick"] = True
    assert "**Short run**" in report.render(results)


def test_chapter_log_lines_are_parsed():
    log = ("/x/book/tensors.ipynb: Executed notebook in 12.34 seconds [mystnb]\n"
           "book/bleu: Executed notebook in 5.00 seconds [mystnb]\n")
    assert book.chapter_times(log) == {"/x/book/tensors": 12.34, "book/bleu": 5.0}


def test_benchmarks_md_describes_the_current_reference_model():
    """A report of an older model (other data, settings or training code) fails the suite:
    regenerate it with `make bench`."""
    text = (Path(__file__).resolve().parents[1] / "BENCHMARKS.md").read_text(encoding="utf-8")
    pattern = re.escape(report.KEY_LINE).replace(re.escape("{key}"), "([0-9a-f]{16})")
    named = re.findall(pattern, text)
    assert named, "BENCHMARKS.md names no reference key: regenerate it with `make bench`"
    assert named == [reference.reference_key()], (
        f"BENCHMARKS.md describes reference model {named[0]}, the current one is "
        f"{reference.reference_key()}: regenerate it with `make bench`")


@pytest.mark.parametrize("greedy, beam, expected", [
    (37.0, 40.0, "Reached greedy >= 37 and beam 5 >= 40: b."),
    (37.5, 39.9, "No run reached greedy >= 37 and beam 5 >= 40: the best greedy score was 37.50 "
                 "(b), the best beam-5 score 39.90 (b)."),
    (36.9, 40.5, "No run reached greedy >= 37 and beam 5 >= 40: the best greedy score was 36.90 "
                 "(b), the best beam-5 score 40.50 (b)."),
    (30.0, 30.0, "No run reached greedy >= 37 and beam 5 >= 40: the best greedy score was 35.00 "
                 "(a), the best beam-5 score 39.00 (a)."),
])
def test_the_sweep_verdict_follows_both_scores(greedy, beam, expected):
    runs = [{"name": "a", "greedy": 35.0, "beam5": 39.0}, {"name": "b", "greedy": greedy,
                                                           "beam5": beam}]
    assert report.sweep_verdict(runs) == expected
    with pytest.raises(report.MissingFigure):
        report.sweep_verdict([])


def test_the_sweep_section_is_spliced_in_place_or_appended():
    SECTION, splice = recipe_check.SECTION, recipe_check.splice
    section = SECTION + "\n\nnew table\n"
    assert splice("# B\n\n## Book\n\nx\n", section) == f"# B\n\n## Book\n\nx\n\n{section}"
    old = f"# B\n\n{SECTION}\n\nold table\n\n## After\n\ny\n"
    assert splice(old, section) == f"# B\n\n{SECTION}\n\nnew table\n\n## After\n\ny\n"
    assert splice(f"# B\n\n{SECTION}\n\nold\n", section) == f"# B\n\n{section}"


def test_benchmarks_md_reports_the_committed_sweeps():
    text = (Path(__file__).resolve().parents[1] / "BENCHMARKS.md").read_text()
    section = "\n".join(report.section_sweep({"sweep": recipe_check.committed_results()}))
    assert section.strip() in text, "run `python -m bench.recipe_check splice` (or make bench)"


def test_the_committed_cpu_sweep_scores_the_current_reference_model():
    runs = recipe_check.committed_results()["cpu"]["runs"]
    assert [r["reference_key"] for r in runs if r["name"] == "reference"] == [
        reference.reference_key()], "score it again: python -m bench.recipe_check run reference"


# The attention chapter's models (bench/chapter_models.py) and the Playground.

@pytest.mark.parametrize("fixed, attention, expected", [
    ((30.0, 25.0, 20.0), (30.0, 29.5, 29.2), "BLEU falls (30.0 to 20.0) and the attention "
     "model's holds (30.0 to 29.2): the direction the bottleneck predicts; the chapter tests "
     "whether it is beyond the noise."),
    ((30.0, 20.0), (30.0, 33.0), "BLEU falls (30.0 to 20.0) and the attention model's rises "
     "(30.0 to 33.0): the direction the bottleneck predicts; the chapter tests whether it is "
     "beyond the noise."),
    ((30.0, 20.0), (30.0, 25.0), "attention falls too, by less than the fixed-vector model, so "
     "at this budget it does not remove the fall."),
    ((30.0, 25.0), (30.0, 20.0), "attention falls too, by more than the fixed-vector model, so "
     "at this budget it does not remove the fall."),
    ((30.0, 20.0), (30.5, 20.0), "BLEU falls (30.0 to 20.0) and the attention model's falls "
     "(30.5 to 20.0): attention falls too, by about as much as the fixed-vector model, so at "
     "this budget it does not remove the fall."),
    ((30.0, 29.5), (30.0, 20.0), "BLEU holds (30.0 to 29.5) and the attention model's falls "
     "(30.0 to 20.0): the fixed-vector model does not fall, so no bottleneck shows at this "
     "budget."),
    ((20.0, 25.0), (20.0, 26.0), "BLEU rises (20.0 to 25.0) and the attention model's rises "
     "(20.0 to 26.0): the fixed-vector model does not fall, so no bottleneck shows at this "
     "budget."),
])
def test_the_long_input_verdict_follows_both_curves(fixed, attention, expected):
    text = report.long_input_verdict(list(fixed), list(attention), "1–8", "≥ 33")
    assert text.startswith("Counting a change within 1 BLEU as holding: from sources of 1–8 "
                           "tokens to sources of ≥ 33 tokens, the fixed-vector model's ")
    assert text.endswith(expected), text


def test_the_chapter_time_verdict_says_met_missed_or_why_it_is_not_the_time():
    verdict = report.chapter_time_verdict
    assert verdict(CHAPTER, 60.0) == ("`book/attention` executed in 48.2 s with its models "
                                      "cached: within the target of 60 s, met.")
    assert report.chapter_time_measured(CHAPTER)
    slow = dict(CHAPTER, seconds=74.5)
    assert verdict(slow, 60.0) == (
        "`book/attention` executed in 74.5 s with its models cached: **missed** by 14.5 s "
        "(target 60 s). Where the time went, the slowest cells: code cell 7 (`runs = f()`) "
        "20.5 s; code cell 3 (`x = 1`) 9.0 s.")
    computed = dict(CHAPTER, computed=["attention-models-1.json"])
    assert verdict(computed, 60.0) == (
        "`book/attention` executed in 48.2 s, but it computed cached results that were missing "
        "(`attention-models-1.json`), so that is not its time with its models present.")
    failed = dict(CHAPTER, ok=False, errors=["NameError: x"])
    assert verdict(failed, 60.0) == ("`book/attention` executed in 48.2 s, but it failed "
                                     "(NameError: x), so that is not its execution time.")
    assert verdict({"skipped": "--skip-chapter"}, 60.0) == (
        "Its execution time: not measured in this run (--skip-chapter).")
    for chapter in (computed, failed, {"skipped": "--skip-chapter"}):
        assert not report.chapter_time_measured(chapter)
        results = copy.deepcopy(RESULTS)
        results["chapter_models"]["chapter"] = chapter
        assert ("| The attention chapter executes with its models cached (#26) | <= 60 s | "
                "not measured in this run (see its section) | |") in report.render(results)


def test_a_missed_chapter_target_is_rendered_with_its_gap():
    results = copy.deepcopy(RESULTS)
    results["chapter_models"]["chapter"]["seconds"] = 74.5
    md = report.render(results)
    assert ("| The attention chapter executes with its models cached (#26) | <= 60 s | 74.5 s "
            "| **missed** |") in md
    assert "**missed** by 14.5 s (target 60 s)" in md


def test_the_models_must_share_their_buckets():
    results = copy.deepcopy(RESULTS)
    results["chapter_models"]["models"][1]["buckets"][0]["bucket"] = "1–9"
    with pytest.raises(report.MissingFigure, match="different buckets"):
        report.render(results)


def test_a_model_without_single_sentence_bleu_shows_a_dash_not_a_number():
    """Results recorded before single-sentence BLEU was: its column says nothing was measured."""
    results = copy.deepcopy(RESULTS)
    del results["chapter_models"]["models"][0]["single_bleu"]
    md = report.render(results)
    assert "| fixed vector | – | 31.0 | 24.0 | – | 200 |" in md
    assert "| attention | 30.5 | 32.0 |" in md


def test_the_playground_verdict_names_each_miss():
    assert report.playground_verdict(PLAYGROUND_OUT) == (
        "1 of 4 figures with a target miss it: `attention model, beam 5            median  "
        "321.0 ms   min  300.0   max  350.0   [OVER]`.")
    fine = PLAYGROUND_OUT.replace("[OVER]", "[ok]")
    assert report.playground_verdict(fine) == "All 4 figures with a target are within it."
    alone = "\n".join(ln for ln in fine.splitlines() if "attention" not in ln) + (
        "\n  attention model: not in the export (run the attention chapter)\n")
    assert report.playground_verdict(alone) == (
        "All 2 figures with a target are within it. The attention model was not in the "
        "export, so its figures were not measured.")
    with pytest.raises(report.MissingFigure, match="playground"):
        report.playground_verdict("machine: x\n")


def test_a_skipped_playground_is_not_measured():
    results = copy.deepcopy(RESULTS)
    results["playground"] = {"skipped": "no Chromium"}
    md = report.render(results)
    assert "## The Playground in Chromium\n\nnot measured in this run (no Chromium)." in md
    assert "[OVER]" not in md


def test_a_section_is_spliced_in_place_before_a_heading_or_appended():
    splice = report.splice
    new = "## New\n\nnew table\n"
    assert splice("# B\n\n## Old\n\nold\n\n## After\n", "## Old\n\nfresh\n") == (
        "# B\n\n## Old\n\nfresh\n\n## After\n")
    assert splice("# B\n\n## Old\n\nold\n", "## Old\n\nfresh\n") == "# B\n\n## Old\n\nfresh\n"
    assert splice("# B\n\n## Sweep\n\ns\n", new, before="## Sweep") == (
        "# B\n\n## New\n\nnew table\n\n## Sweep\n\ns\n")
    assert splice("# B\n\n## Book\n\nx\n", new, before="## Sweep") == (
        "# B\n\n## Book\n\nx\n\n## New\n\nnew table\n")
    assert splice("# B\n\n## New heading\n\nx\n", new) == (  # a longer heading is another
        "# B\n\n## New heading\n\nx\n\n## New\n\nnew table\n")


def test_the_chapter_models_section_is_spliced_from_a_results_file(tmp_path):
    results = tmp_path / "chapter-models.json"
    results.write_text(json.dumps(RESULTS["chapter_models"]), encoding="utf-8")
    md = tmp_path / "BENCHMARKS.md"
    md.write_text(f"# Benchmarks\n\n## The book\n\nx\n\n{recipe_check.SECTION}\n\ns\n",
                  encoding="utf-8")
    chapter_models.main(["splice", "--results", str(results), "--report", str(md)])
    section = chapter_models.section(RESULTS["chapter_models"])
    assert md.read_text(encoding="utf-8") == (f"# Benchmarks\n\n## The book\n\nx\n\n"
                                              f"{section.strip()}\n\n{recipe_check.SECTION}"
                                              "\n\ns\n")
    chapter_models.main(["splice", "--results", str(results), "--report", str(md)])  # again
    assert md.read_text(encoding="utf-8").count(report.CHAPTER_MODELS_SECTION) == 1


def test_the_bench_scores_the_chapters_own_models():
    """bench.chapter_models.CONFIGS is long_inputs.MODELS, which book/attention.md runs: it
    calls long_inputs.cached_runs() with no configs of its own."""
    assert chapter_models.CONFIGS is long_inputs.MODELS
    assert list(chapter_models.CONFIGS) == [chapter_models.FIXED, chapter_models.ATTENTION]
    text = (Path(__file__).resolve().parents[1] / "book" / "attention.md").read_text(
        encoding="utf-8")
    calls = re.findall(r"long_inputs\.cached_runs\((.*?)\)", text)
    assert calls and all(args == "" for args in calls), (
        f"book/attention.md calls long_inputs.cached_runs({calls}), not with its default "
        "long_inputs.MODELS")


def test_benchmarks_md_reports_the_committed_chapter_models():
    text = (Path(__file__).resolve().parents[1] / "BENCHMARKS.md").read_text(encoding="utf-8")
    section = chapter_models.section(chapter_models.committed_results())
    assert section.strip() in text, "run `python -m bench.chapter_models splice`"


def test_the_committed_chapter_models_are_the_current_ones():
    """Their keys name the current settings, data and training: else score them again."""
    data = chapter_models.committed_results()
    assert all("single_bleu" in m for m in data["models"]), (
        "run `python -m bench.chapter_models run` (the results have no single-sentence BLEU)")
    assert {m["label"]: m["key"] for m in data["models"]} == {
        label: chapter_models.model_key(c) for label, c in chapter_models.CONFIGS.items()}, (
        "run `python -m bench.chapter_models run` (a model's settings or code changed)")


def test_a_cell_is_named_by_its_first_line_of_code():
    assert book.first_line("\n  # load\nx = 1\n") == "# load"
    assert book.first_line(":tags: [hide-input]\n\nfig = 1") == "fig = 1"
    assert book.first_line("") == ""


def test_an_older_cold_build_does_not_count_as_every_model_trained_here():
    results = copy.deepcopy(RESULTS)
    assert "nothing published was downloaded" in report.render(results)
    del results["book"]["cold"]["models"]  # a cold build that could download published models
    md = report.render(results)
    assert ("| Cold strict book build, every model trained here (#26) | <= 35 min | not "
            "measured in this run (that cold build could download published models) | |") in md
    assert "| Cold strict book build | <= 20 min | 21.0 min | **missed** |" in md


def test_table_rows_are_replaced_by_their_first_cell_or_added():
    text = ("# B\n\n## Targets\n\n| Target | Wanted |\n|---|---|\n| A | 1 |\n| B | 2 |\n\n"
            "## Next\n\n| A | 9 |\n")
    out = report.replace_rows(text, "## Targets", ["| B | 3 |", "| C | 4 |"])
    assert out == ("# B\n\n## Targets\n\n| Target | Wanted |\n|---|---|\n| A | 1 |\n| B | 3 |\n"
                   "| C | 4 |\n\n## Next\n\n| A | 9 |\n")  # the other section's | A | untouched
    with pytest.raises(ValueError, match="no section '## Gone'"):
        report.replace_rows(text, "## Gone", ["| A | 0 |"])
    with pytest.raises(ValueError, match="2 rows start with '| A |'"):
        report.replace_rows(text.replace("| B | 2 |", "| A | 2 |"), "## Targets", ["| A | 0 |"])


def test_the_book_section_and_its_target_rows_are_spliced_from_a_results_file(tmp_path):
    measured = dict(copy.deepcopy(RESULTS["book"]),
                    run={"date": "2030-01-05 06:07", "machine": "Test CPU 9000, 2 cores",
                         "reference_key": "0123456789abcdef"})
    results = tmp_path / "book.json"
    results.write_text(json.dumps(measured), encoding="utf-8")
    md = tmp_path / "BENCHMARKS.md"
    md.write_text("# B\n\n## Targets\n\n| Target | Wanted | Measured | |\n|---|---|---|---|\n"
                  "| Cold strict book build | <= 20 min | not measured in this run | |\n\n"
                  "## The book\n\nstale words\n\n## Attention\n\na\n", encoding="utf-8")
    book.splice(results, md)
    text = md.read_text(encoding="utf-8")
    assert "| Cold strict book build | <= 20 min | 21.0 min | **missed** |" in text
    assert ("| Cold strict book build, every model trained here (#26) | <= 35 min | 21.0 min "
            "| met |") in text
    assert "| Every chapter executes in | <= 1 min | slowest 2.5 min (`book/bleu`) |" in text
    assert book.section(measured).strip() in text and "stale words" not in text
    assert "on 2030-01-05 06:07 (Test CPU 9000, 2 cores)" in text
    assert text.endswith("## Attention\n\na\n")
    book.splice(results, md)  # again: nothing doubles
    assert md.read_text(encoding="utf-8") == text


def test_the_cold_build_names_each_step_of_make_book_it_timed():
    results = copy.deepcopy(RESULTS)
    results["book"]["cold"].update(train_s=900.0, models_s=780.0, playground_s=60.0,
                                   build_s=480.0, total_s=2220.0)
    md = report.render(results)
    assert ("- Cold build: 37.0 min in all = training the reference model 15.0 min + the "
            "attention chapter's models 13.0 min + the Playground's export 1.0 min + build "
            "8.0 min ($SEQ2SEQ_CACHE") in md
    assert ("| Cold strict book build, every model trained here (#26) | <= 35 min | 37.0 min "
            "| **missed** |") in md
