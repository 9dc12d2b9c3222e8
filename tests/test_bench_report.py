"""BENCHMARKS.md is rendered only from results: every figure filled, none invented."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from bench import book, recipe_check, report


def _ttb(reached):
    return {"evals": [{"step": 100, "train_seconds": 61.0, "bleu": 12.5},
                      {"step": 200, "train_seconds": 122.0, "bleu": 21.25}],
            "cap_minutes": 12.0, "reached_seconds": reached, "best_bleu": 21.25}


def _decode(g, b):
    return {"sentences": 2000, "greedy": {"sentences_per_s": g, "bleu": 30.5},
            "beam5": {"sentences_per_s": b, "bleu": 31.5}}


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
                      "chapters": {"book/tensors": 20.0}},
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
                 report.KEY_LINE.format(key="0123456789abcdef")):
        assert text in md, text
    assert "None" not in md and "nan" not in md
    assert "**missed**" in md  # the slowest chapter (150 s) misses the 1-minute target
    assert "Short run" not in md


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
                                  "reference.key"])
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
    import re

    from lib.course import reference

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
    section = "\n".join(report._section_sweep({"sweep": recipe_check.committed_results()}))
    assert section.strip() in text, "run `python -m bench.recipe_check splice` (or make bench)"


def test_the_committed_cpu_sweep_scores_the_current_reference_model():
    from lib.course import reference

    runs = recipe_check.committed_results()["cpu"]["runs"]
    assert [r["reference_key"] for r in runs if r["name"] == "reference"] == [
        reference.reference_key()], "score it again: python -m bench.recipe_check run reference"
