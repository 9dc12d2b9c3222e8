"""Render BENCHMARKS.md from the collected JSON results; nothing in it is typed by hand.

Why a separate, pure module: the renderer is the part that can silently go wrong (a stale or
invented number), so it is small and unit-tested. Every figure is read with `fig`, which raises
`MissingFigure` when the results lack it. A part that was deliberately not run carries an
explicit `{"skipped": reason}` and is rendered as "not measured in this run", never with a
number from an earlier run.

    python -m bench.report RESULTS.json [BENCHMARKS.md]
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

from bench import sweep
from lib.course.verdicts import wording

NOT_MEASURED = "not measured in this run"

# (what, target, how the measured value compares): the targets.
TARGETS = {
    "training": 1.5,  # ours / JoeyNMT target tokens/s
    "decoding": 1.0,  # ours / JoeyNMT beam-5 sentences/s
    "bleu": 1.0,  # sacrebleu seconds / lib.bleu seconds
    "utilisation": 0.30,  # share of the matmul peak
    "cold_minutes": 20.0,
    "cold_all_models_minutes": 35.0,  # cold make book, every model trained here
    "chapter_minutes": 1.0,  # every chapter <= 60 s on a 2-core CPU, model present
}

# Where the report names the reference model's cache key (tests/test_bench_report.py reads it).
KEY_LINE = "Reference model: `lib.course.reference` cache key `{key}`"
KEY_MEANING = (" (a hash of the settings, the corpus, the torch release and the training version "
               "`lib.train.TRAINING_VERSION`: `python -m lib.course.reference --key`). The test "
               "suite fails when this is not the current key, so a report of an older model "
               "cannot stay.")


class MissingFigure(KeyError):
    """A figure the report needs is not in the results: refuse to write the report."""


def fig(results: dict, path: str):
    """results["a"]["b"] for path "a.b", or MissingFigure naming the path."""
    node = results
    for key in path.split("."):
        if not isinstance(node, dict) or key not in node or node[key] is None:
            raise MissingFigure(f"benchmark results lack {path!r}")
        node = node[key]
    return node


def skipped(results: dict, part: str) -> str | None:
    """The reason a part was not run, if it was skipped on purpose."""
    node = results.get(part)
    return node.get("skipped") if isinstance(node, dict) else None


def met(ok: bool) -> str:
    return "met" if ok else "**missed**"


def minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f} min"


def _bleu_time(run: dict, target: float) -> str:
    if run.get("reached_seconds") is not None:
        return minutes(run["reached_seconds"])
    cap = fig(run, "cap_minutes")
    return f"not reached in {cap:g} min (best {fig(run, 'best_bleu'):.1f})"


def _section_header(r: dict) -> list[str]:
    m, run = fig(r, "machine"), fig(r, "run")
    lines = [
        "# Benchmarks",
        "",
        f"Written by `make bench` (`python -m bench.run_all`) on {fig(run, 'date')}"
        + (f", a run of {run['minutes']:.0f} minutes" if "minutes" in run else "")
        + f"; every figure below comes from that run's JSON (`{fig(run, 'results_file')}`).",
        "",
        KEY_LINE.format(key=fig(r, "reference.key")) + KEY_MEANING,
        "",
    ]
    if fig(run, "quick"):
        lines += ["> **Short run**: capped training and few repeats "
                  f"({fig(run, 'note')}). Its figures are noisy; a full `make bench` on a quiet "
                  "machine replaces them.", ""]
    lines += [
        "## Machine and software",
        "",
        f"- CPU: {fig(m, 'cpu')}, {fig(m, 'cores')} logical cores, {fig(m, 'ram_gib'):.1f} GiB "
        f"RAM; torch threads {fig(m, 'threads')}; load average {fig(m, 'load_start'):.2f} at "
        f"the start, {fig(m, 'load_end'):.2f} at the end",
        f"- {fig(m, 'os')}; Python {fig(m, 'python')}, torch {fig(m, 'torch')}",
        "- Bench environment (`_build/bench/joeynmt-venv`): "
        + ", ".join(f"{k} {v}" for k, v in fig(r, "versions").items()),
        f"- How it was installed: {fig(r, 'install')}",
        "",
        "Commands, in the order they ran:",
        "",
        "```text",
        *fig(r, "commands"),
        "```",
        "",
    ]
    return lines


def _section_targets(r: dict) -> list[str]:
    t = fig(r, "throughput")
    rows = [
        ("Training throughput vs JoeyNMT (target tokens/s, matched size)",
         f">= {TARGETS['training']}x", f"{fig(t, 'ratio'):.2f}x",
         fig(t, "ratio") >= TARGETS["training"]),
        ("Beam-5 decoding vs JoeyNMT (sentences/s)", f">= {TARGETS['decoding']}x",
         f"{fig(r, 'decoding.ratio_beam5'):.2f}x",
         fig(r, "decoding.ratio_beam5") >= TARGETS["decoding"]),
        ("lib.bleu vs sacrebleu speed (corpus BLEU, 10,000 sentences)", f">= {TARGETS['bleu']}x",
         f"{fig(r, 'bleu.speedup'):.2f}x", fig(r, "bleu.speedup") >= TARGETS["bleu"]),
        ("Training matmul utilisation", f">= {TARGETS['utilisation']:.0%}",
         f"{fig(t, 'utilisation'):.1%}", fig(t, "utilisation") >= TARGETS["utilisation"]),
    ]
    lines = ["## Targets", "", "| Target | Wanted | Measured | |", "|---|---|---|---|"]
    lines += [f"| {a} | {b} | {c} | {met(ok)} |" for a, b, c, ok in rows]
    lines += book_target_rows(fig(r, "book"))
    chapter = fig(r, "chapter_models.chapter")
    wanted = f"<= {TARGETS['chapter_minutes'] * 60:g} s"
    what = "The attention chapter executes with its models cached (#26)"
    if not chapter_time_measured(chapter):
        lines.append(f"| {what} | {wanted} | {NOT_MEASURED} (see its section) | |")
    else:
        seconds = fig(chapter, "seconds")
        lines.append(f"| {what} | {wanted} | {seconds:.1f} s | "
                     f"{met(seconds <= TARGETS['chapter_minutes'] * 60)} |")
    return lines + [""]


def book_target_rows(book: dict) -> list[str]:
    """The Targets table's rows that the book's builds measure: the cold builds' totals and the
    slowest chapter (`python -m bench.book --splice` replaces just these rows)."""
    lines = []
    for what, target in (("Cold strict book build", "cold_minutes"),
                         ("Cold strict book build, every model trained here (#26)",
                          "cold_all_models_minutes")):
        if skipped(book, "cold"):
            lines.append(f"| {what} | <= {TARGETS[target]:g} min | {NOT_MEASURED} | |")
        elif target == "cold_all_models_minutes" and "models" not in book["cold"]:
            lines.append(f"| {what} | <= {TARGETS[target]:g} min | {NOT_MEASURED} (that cold "
                         "build could download published models) | |")
        else:
            total = fig(book, "cold.total_s")
            lines.append(f"| {what} | <= {TARGETS[target]:g} min | {minutes(total)} | "
                         f"{met(total <= TARGETS[target] * 60)} |")
    chapters = _chapters(book)
    if chapters is None:
        lines.append(f"| Every chapter executes in | <= {TARGETS['chapter_minutes']:g} min | "
                     f"{NOT_MEASURED} | |")
    else:
        name, worst = max(chapters.items(), key=lambda kv: kv[1])
        lines.append(f"| Every chapter executes in | <= {TARGETS['chapter_minutes']:g} min | "
                     f"slowest {minutes(worst)} (`{name}`) | "
                     f"{met(worst <= TARGETS['chapter_minutes'] * 60)} |")
    return lines


def _chapters(book: dict) -> dict | None:
    for part in ("warm", "cold"):
        if not skipped(book, part) and isinstance(book.get(part), dict):
            return fig(book, f"{part}.chapters")
    return None


def _section_training(r: dict) -> list[str]:
    t, ttb = fig(r, "throughput"), fig(r, "time_to_bleu")
    target = fig(ttb, "target")
    lines = [
        "## Training",
        "",
        f"The course's reference configuration (lib.course.reference: {fig(t, 'model')}, batch "
        f"{fig(t, 'batch_size')} sentences) against JoeyNMT 2.3.0 training a GRU "
        f"encoder-decoder of the same size on the same exported split and vocabularies "
        f"({fig(t, 'ours_params'):,} vs {fig(t, 'joeynmt_params'):,} parameters). "
        f"{fig(r, 'joeynmt_notes')}",
        "",
        f"Throughput: {fig(t, 'steps')} timed steps after {fig(t, 'warmup')} untimed ones, "
        f"{len(fig(t, 'ours'))} repeats alternating ours and JoeyNMT; medians.",
        "",
        "| | target tokens/s (median) | all repeats |",
        "|---|---|---|",
        f"| ours (lib.train's step) | {fig(t, 'ours_median'):,.0f} | "
        + ", ".join(f"{x:,.0f}" for x in fig(t, "ours")) + " |",
    ]
    if t.get("ours_full_softmax") and t.get("shortlist"):
        lines.append("| ours with the full softmax (no shortlist) | "
                     f"{statistics.median(t['ours_full_softmax']):,.0f} | "
                     + ", ".join(f"{x:,.0f}" for x in t["ours_full_softmax"]) + " |")
    lines += [
        f"| JoeyNMT 2.3.0 | {fig(t, 'joeynmt_median'):,.0f} | "
        + ", ".join(f"{x:,.0f}" for x in fig(t, "joeynmt")) + " |",
        f"| ratio ours / JoeyNMT | {fig(t, 'ratio'):.2f}x | |",
        "",
        f"Time to BLEU {target:g} on the held-out test set ({fig(ttb, 'sentences')} sentences, "
        "greedy, detokenised by lib.data.detokenize, sacrebleu against all references), "
        "training time only (test evaluations excluded), checked every "
        f"{fig(ttb, 'eval_every')} steps, each run capped at {fig(ttb, 'ours.cap_minutes'):g} "
        "min:",
        "",
        f"| | time to BLEU {target:g} | best test BLEU | checks (step: minutes, BLEU) |",
        "|---|---|---|---|",
    ]
    for name, key in (("ours", "ours"), ("JoeyNMT 2.3.0", "joeynmt")):
        run = fig(ttb, key)
        if run.get("recipe"):  # joeynmt_compare.py --recipe: its authors' settings or ours
            name += f" ({run['recipe']} recipe)"
        checks = "; ".join(f"{e['step']}: {e['train_seconds'] / 60:.1f}, {e['bleu']:.1f}"
                           for e in fig(run, "evals"))
        lines.append(f"| {name} | {_bleu_time(run, target)} | {fig(run, 'best_bleu'):.1f} | "
                     f"{checks} |")
    return lines + [""] + _per_step(fig(ttb, "ours"), fig(ttb, "joeynmt"))


def _per_step(ours: dict, joey: dict) -> list[str]:
    """Where the time goes: learning per step and seconds per step, at the last step both
    runs checked (the two runs differ in both, and the table above mixes them)."""
    by_step = {e["step"]: e for e in fig(joey, "evals")}
    shared = [e for e in fig(ours, "evals") if e["step"] in by_step]
    if not shared:
        return []
    a = shared[-1]
    b = by_step[a["step"]]
    rate = lambda e: e["train_seconds"] / e["step"]  # noqa: E731
    return [f"Per step and per second, at step {a['step']} (the last check both runs made): "
            f"ours test BLEU {a['bleu']:.1f} after {rate(a):.2f} s per step, JoeyNMT "
            f"{b['bleu']:.1f} after {rate(b):.2f} s per step ({rate(b) / rate(a):.1f}x ours).",
            ""]


def _section_decoding(r: dict) -> list[str]:
    d = fig(r, "decoding")
    lines = [
        "## Decoding",
        "",
        f"The {fig(d, 'ours.sentences')} test sentences, end to end (tokenise, batches of 256, "
        "search, detokenise), with the models trained above; "
        f"median of {fig(d, 'repeats')} repeats. {fig(d, 'notes')}",
        "",
        "| | greedy sentences/s | beam-5 sentences/s | greedy BLEU | beam-5 BLEU |",
        "|---|---|---|---|---|",
    ]
    for name, key in (("ours (lib.evaluate.translate_all)", "ours"),
                      ("JoeyNMT 2.3.0 (prediction.predict)", "joeynmt")):
        lines.append(
            f"| {name} | {fig(d, f'{key}.greedy.sentences_per_s'):,.0f} | "
            f"{fig(d, f'{key}.beam5.sentences_per_s'):,.0f} | "
            f"{fig(d, f'{key}.greedy.bleu'):.1f} | {fig(d, f'{key}.beam5.bleu'):.1f} |")
    lines.append(f"| ratio ours / JoeyNMT | {fig(d, 'ratio_greedy'):.2f}x | "
                 f"{fig(d, 'ratio_beam5'):.2f}x | | |")
    return lines + [""]


def _section_bleu(r: dict) -> list[str]:
    b = fig(r, "bleu")
    n = fig(b, "sentences")
    rate = lambda s: f"{n / s:,.0f}"  # noqa: E731
    plain = fig(b, "torchmetrics_plain")
    return [
        "## BLEU implementations",
        "",
        f"{n:,} hypotheses ({fig(b, 'source')}); median of {fig(b, 'repeats')} alternating "
        "runs.",
        "",
        "| corpus BLEU | seconds | sentences/s | score |",
        "|---|---|---|---|",
        f"| lib.bleu.corpus_bleu (13a, exp smoothing) | {fig(b, 'corpus.lib_s'):.3f} | "
        f"{rate(fig(b, 'corpus.lib_s'))} | {fig(b, 'corpus.lib_score'):.4f} |",
        f"| sacrebleu.corpus_bleu (13a, exp smoothing) | {fig(b, 'corpus.sacrebleu_s'):.3f} | "
        f"{rate(fig(b, 'corpus.sacrebleu_s'))} | {fig(b, 'corpus.sacrebleu_score'):.4f} |",
        f"| torchmetrics sacre_bleu_score (13a) | {fig(b, 'torchmetrics_sacre.s'):.3f} | "
        f"{rate(fig(b, 'torchmetrics_sacre.s'))} | {fig(b, 'torchmetrics_sacre.score'):.4f} |",
        f"| torchmetrics bleu_score (BLEUScore: spaces, no smoothing) | "
        f"{fig(plain, 'torchmetrics_s'):.3f} | {rate(fig(plain, 'torchmetrics_s'))} | "
        f"{fig(plain, 'torchmetrics_score'):.4f} |",
        "",
        f"- lib.bleu and sacrebleu (same definition): "
        f"{'identical counts, totals and lengths' if fig(b, 'corpus.equal') else 'DIFFER'}; "
        f"sentence BLEU on all {n:,} sentences differs by at most "
        f"{fig(b, 'sentence.max_difference'):.1e}. lib.bleu is {fig(b, 'speedup'):.2f}x "
        f"sacrebleu's speed (corpus), {fig(b, 'sentence_speedup'):.2f}x (sentence BLEU, one "
        "call per sentence).",
        f"- Under torchmetrics' own definition (split on spaces, no smoothing) lib.bleu gives "
        f"{fig(plain, 'lib_score'):.4f}, sacrebleu {fig(plain, 'sacrebleu_score'):.4f}, "
        f"torchmetrics {fig(plain, 'torchmetrics_score'):.4f}.",
        f"- torchmetrics differs from sacrebleu by {fig(b, 'torchmetrics_sacre.difference'):+.4f}"
        f" (13a) and {fig(plain, 'difference_tm_vs_sacrebleu'):+.4f} (plain) BLEU: it breaks "
        "ties between equally close reference lengths by taking the first reference, where "
        "sacrebleu and mteval take the shorter, and it computes in float32.",
        "",
    ]


def _section_limit(r: dict) -> list[str]:
    t = fig(r, "throughput")
    return [
        "## The limit: matmul peak and utilisation",
        "",
        f"- Measured peak: {fig(t, 'peak_gflops'):.1f} GFLOP/s (2048 x 2048 fp32 matmul, best "
        "of 10, median over the repeats).",
        f"- Training does {fig(t, 'gflops'):.1f} GFLOP/s of matmul work (GRU gates and "
        f"prediction head, forward + backward): {fig(t, 'utilisation'):.1%} of the peak.",
        "",
    ]


def section_book(r: dict) -> list[str]:
    book = fig(r, "book")
    lines = ["## The book", "", f"Strict build: `{fig(book, 'command')}`."
             + (f" Measured by `python -m bench.book` on {fig(book, 'run.date')} "
                f"({fig(book, 'run.machine')}), reference model key "
                f"`{fig(book, 'run.reference_key')}` (`bench/results/book-cpu.json`)."
                if "run" in book else ""), ""]
    if skipped(book, "cold"):
        lines.append(f"- Cold build (empty cache, reference model trained first): "
                     f"{NOT_MEASURED} ({skipped(book, 'cold')}).")
    else:
        steps = [("training the reference model", "train_s"),
                 ("the attention chapter's models", "models_s"),
                 ("the Playground's export", "playground_s"), ("build", "build_s")]
        parts = " + ".join(f"{what} {minutes(fig(book, 'cold.' + key))}" for what, key in steps
                           if key in book["cold"])
        lines.append(f"- Cold build: {minutes(fig(book, 'cold.total_s'))} in all = {parts} "
                     "($SEQ2SEQ_CACHE pointed at an empty "
                     "temporary directory"
                     + (f"; {book['cold']['models']}" if "models" in book["cold"] else "")
                     + ").")
    if skipped(book, "warm"):
        lines.append(f"- Warm rebuild (reference model cached): {NOT_MEASURED} "
                     f"({skipped(book, 'warm')}).")
    else:
        cache = book["warm"].get("cache", "reference model cached")
        lines.append(f"- Warm rebuild ({cache}): {minutes(fig(book, 'warm.build_s'))}.")
    chapters = _chapters(book)
    if chapters is not None:
        source = book.get("warm", {}).get("chapters_source", "myst-nb build log")
        lines += ["", f"Execution time per chapter ({source}):", "",
                  "| chapter | seconds |", "|---|---|"]
        lines += [f"| `{k}` | {v:.1f} |" for k, v in sorted(chapters.items())]
        lines.append(f"| total | {sum(chapters.values()):.1f} |")
    return lines + [""]


# The recipe's target: a change in the same budget is taken only if it reaches both.
SWEEP_TARGETS = {"greedy": 37.0, "beam5": 40.0}


def sweep_verdict(runs: list[dict], targets: dict = SWEEP_TARGETS) -> str:
    """One sentence on whether any run reached every target; names the best run per score."""
    if not runs:
        raise MissingFigure("sweep runs")
    wanted = " and ".join(f"{'greedy' if k == 'greedy' else 'beam 5'} >= {v:g}"
                          for k, v in targets.items())
    winners = [r["name"] for r in runs if all(r[k] >= v for k, v in targets.items())]
    if winners:
        return f"Reached {wanted}: {', '.join(winners)}."
    best = {k: max(runs, key=lambda r: r[k]) for k in targets}
    return (f"No run reached {wanted}: the best greedy score was {best['greedy']['greedy']:.2f} "
            f"({best['greedy']['name']}), the best beam-5 score {best['beam5']['beam5']:.2f} "
            f"({best['beam5']['name']}).")


def recipe_table(records: list[dict]) -> str:
    """The CPU runs of bench.recipe_check, one row each."""
    lines = ["| run | changes from the reference recipe (key) | greedy | beam 5 |",
             "|---|---|---|---|"]
    for r in records:
        changes = ", ".join(f"{k}={v}" for k, v in r["overrides"].items()) or "none"
        lines.append(f"| {r['name']} | {changes} (`{r['reference_key']}`) | {r['greedy']:.2f} | "
                     f"{r['beam5']:.2f} |")
    return "\n".join(lines)


def section_sweep(r: dict) -> list[str]:
    both = fig(r, "sweep")
    gpu, cpu = fig(both, "gpu"), fig(both, "cpu")
    gpu_runs = [dict(v, name=k) for k, v in fig(gpu, "results").items()]
    return [
        "## Training settings: the sweep behind the reference recipe",
        "",
        "Target (issue #29): a change of the training settings, in the same size class and the "
        "same 15-minute budget on this 2-core machine, is taken when it reaches greedy >= "
        f"{SWEEP_TARGETS['greedy']:g} and beam 5 >= {SWEEP_TARGETS['beam5']:g} test BLEU.",
        "",
        f"**On today's recipe, this CPU** (`python -m bench.recipe_check`, {fig(cpu, 'date')}, "
        f"{fig(cpu, 'machine')}): each variant trains as the reference model does (same size, "
        "same epochs and so the same steps, the same seed) and is scored on the "
        f"{fig(cpu, 'runs')[0]['test_sentences']:,} test sentences. "
        + sweep_verdict(fig(cpu, "runs")),
        "",
        recipe_table(fig(cpu, "runs")),
        "",
        f"**The earlier GPU sweep** (`python -m bench.sweep`, {fig(gpu, 'device')}, "
        f"{fig(gpu, 'date')}): {len(gpu_runs)} variants of a base recipe without the shortlist "
        "softmax, sampled rare words and weight averaging, judged by BLEU after a number of "
        "target tokens (tokens, not minutes, so that a GPU can rank settings for a CPU); seeds "
        "0, 1 and 2 of one setting show how far a seed alone moves BLEU. "
        + sweep_verdict(gpu_runs),
        "",
        sweep.table(fig(gpu, "results")),
        "",
    ]


# The attention chapter's models (bench/chapter_models.py).
CHAPTER_MODELS_SECTION = "## Attention chapter: models on long inputs"
LONG_INPUT_TOLERANCE = 1.0  # BLEU: a curve within this of its start "holds" (as the chapter)


def long_input_verdict(fixed: list[float], attention: list[float], first: str, last: str,
                       tolerance: float = LONG_INPUT_TOLERANCE) -> str:
    """Whether the fixed-vector model's BLEU falls with source length and attention's holds:
    one sentence from the BLEU of each bucket, shortest first (`first`, `last`: their labels)."""
    f = wording.trend(fixed, tolerance)
    a = wording.trend(attention, tolerance)
    head = (f"Counting a change within {tolerance:g} BLEU as holding: from sources of {first} "
            f"tokens to sources of {last} tokens, the fixed-vector model's BLEU {f} "
            f"({fixed[0]:.1f} to {fixed[-1]:.1f}) and the attention model's {a} "
            f"({attention[0]:.1f} to {attention[-1]:.1f})")
    if f == "falls" and a != "falls":
        return (head + ": the direction the bottleneck predicts; the chapter tests whether it is "
                "beyond the noise.")
    if f == "falls":
        drop_f, drop_a = fixed[0] - fixed[-1], attention[0] - attention[-1]
        less = wording.comparison(drop_f, drop_a, tolerance,
                                  more="less than the fixed-vector model",
                                  less="more than the fixed-vector model",
                                  same="about as much as the fixed-vector model")
        return (head + f": attention falls too, by {less}, so at this budget it does not remove "
                "the fall.")
    return head + ": the fixed-vector model does not fall, so no bottleneck shows at this budget."


def chapter_time_measured(chapter: dict) -> bool:
    """Whether a chapter timing is the time its target is stated for: it ran (not skipped),
    without errors, and computed no missing cached result (its models were present)."""
    return not chapter.get("skipped") and fig(chapter, "ok") and not fig(chapter, "computed")


def chapter_time_verdict(chapter: dict, target_s: float) -> str:
    """One sentence on a chapter's execution with its models cached (bench.book.with_models):
    met, or missed with the gap and where the time went; or why the time is not that."""
    if chapter.get("skipped"):
        return f"Its execution time: {NOT_MEASURED} ({chapter['skipped']})."
    head = f"`{fig(chapter, 'page')}` executed in {fig(chapter, 'seconds'):.1f} s"
    if not fig(chapter, "ok"):
        return (f"{head}, but it failed ({fig(chapter, 'errors')[0]}), so that is not its "
                "execution time.")
    if fig(chapter, "computed"):
        names = ", ".join(f"`{n}`" for n in chapter["computed"])
        return (f"{head}, but it computed cached results that were missing ({names}), so "
                "that is not its time with its models present.")
    gap = chapter["seconds"] - target_s
    if gap <= 0:
        return f"{head} with its models cached: within the target of {target_s:g} s, met."
    where = "; ".join(f"code cell {c['code_cell']} (`{c['first_line']}`) {c['seconds']:.1f} s"
                      for c in fig(chapter, "slowest_cells"))
    return (f"{head} with its models cached: **missed** by {gap:.1f} s (target "
            f"{target_s:g} s). Where the time went, the slowest cells: {where}.")


def rekeyed_note(d: dict) -> str:
    """One sentence when bench.chapter_models rekey renamed the models after the key's formula
    changed (the figures were not measured again), else nothing."""
    if not d.get("rekeyed"):
        return ""
    r = d["rekeyed"]
    old = ", ".join(f"`{k}`" for k in fig(r, "old").values())
    return (f" Re-keyed on {fig(r, 'date')} from {old}: {fig(r, 'why')}; the figures were "
            "measured under the old keys with the same settings and were not measured again.")


def _bleu_cell(x) -> str:
    """A BLEU table cell; an empty bucket's BLEU is None."""
    return "–" if x is None else f"{x:.1f}"


def _bucket_columns(buckets: list[dict]) -> str:
    """The length buckets' column headings: '1–8 (98) | 9–16 (115) | ...'."""
    return " | ".join(f"{b['bucket']} ({b['sources']:,})" for b in buckets)


def section_chapter_models(r: dict) -> list[str]:
    d = fig(r, "chapter_models")
    models = fig(d, "models")
    labels = [b["bucket"] for b in fig(models[0], "buckets")]
    if any([b["bucket"] for b in fig(m, "buckets")] != labels for m in models):
        raise MissingFigure("chapter_models: the models were scored on different buckets")
    score = _bleu_cell
    lines = [
        CHAPTER_MODELS_SECTION,
        "",
        f"`python -m bench.chapter_models run` ({fig(d, 'date')}, {fig(d, 'machine')}, torch "
        f"{fig(d, 'torch')}; `bench/results/chapter-models-cpu.json`): the models of "
        f"`book/attention.md`, greedy, on its {fig(d, 'test_sources'):,} joined test sources "
        f"(1 to {fig(d, 'k_max')} test sentences joined; `lib.experiments.long_inputs`). "
        "Corpus BLEU "
        "(sacrebleu, all references) by English source length in tokens, the number of "
        "sources in parentheses; *single*: the 2,000 single test sentences. Both models are "
        "trained from scratch, the same size, seed, data and steps, side by side, one thread "
        "each. Training minutes and decoding seconds are those of the machine that made the "
        "model; *made by* says whether this run read it from the cache or made it. A model's "
        "key names its result and weights in the cache "
        "(`lib.experiments.long_inputs.weights_path`: a hash "
        "of its settings, the corpus and torch)." + rekeyed_note(d),
        "",
        "| model | single | " + _bucket_columns(fig(models[0], "buckets"))
        + " | training steps | training min | decoding s | made by | key |",
        "|---|" + "---|" * (len(labels) + 6),
    ]
    for m in models:
        lines.append(
            f"| {fig(m, 'label')} | {score(m.get('single_bleu'))} | "
            + " | ".join(score(b["bleu"]) for b in m["buckets"])
            + f" | {fig(m, 'steps'):,} | {fig(m, 'minutes'):.1f} | "
            f"{fig(m, 'decode_seconds'):.0f} | "
            f"{'the cache' if fig(m, 'from_cache') else 'this run'} | `{fig(m, 'key')}` |")
    by_label = {m["label"]: m for m in models}
    pairs = [(f["bleu"], a["bleu"], f["bucket"]) for f, a in
             zip(fig(by_label, "fixed vector.buckets"), fig(by_label, "attention.buckets"))
             if f["bleu"] is not None and a["bleu"] is not None]
    long = fig(d, "longest")
    lines += [
        "",
        long_input_verdict([p[0] for p in pairs], [p[1] for p in pairs], pairs[0][2],
                           pairs[-1][2]),
        f"On the {fig(long, 'sources'):,} sources of {fig(long, 'bucket')} tokens, attention "
        f"minus fixed vector is {fig(long, 'difference'):+.1f} BLEU (95 % interval "
        f"{fig(long, 'low'):+.1f} to {fig(long, 'high'):+.1f}, paired bootstrap). "
        + wording.paired_difference(long["low"], long["high"], "The attention model",
                                    "the fixed-vector model") + ".",
        "",
        "Target (issue #26): the chapter executes in at most "
        f"{TARGETS['chapter_minutes'] * 60:g} s on 2 CPU cores with its models present "
        "(`bench.book.with_models`: nbclient, a fresh kernel, the cache the models are in). "
        + chapter_time_verdict(fig(d, "chapter"), TARGETS["chapter_minutes"] * 60),
        "",
    ]
    return lines


def playground_verdict(output: str) -> str:
    """One sentence from bench/playground.py's output: which figures with a target ([ok] or
    [OVER] at the end of their line) miss it, and whether the attention model was measured."""
    lines = [ln.strip() for ln in output.splitlines()]
    ok = [ln for ln in lines if ln.endswith("[ok]")]
    over = [ln for ln in lines if ln.endswith("[OVER]")]
    if not ok and not over:
        raise MissingFigure("playground: its output has no figure marked [ok] or [OVER]")
    if over:
        text = (f"{len(over)} of {len(ok) + len(over)} figures with a target miss it: "
                + "; ".join(f"`{ln}`" for ln in over) + ".")
    else:
        text = f"All {len(ok)} figures with a target are within it."
    if any("not in the export" in ln for ln in lines):
        text += (" The attention model was not in the export, so its figures were not "
                 "measured.")
    return text


def _section_playground(r: dict) -> list[str]:
    lines = ["## The Playground in Chromium", ""]
    part = fig(r, "playground")
    if skipped(r, "playground"):
        return lines + [f"{NOT_MEASURED} ({part['skipped']}).", ""]
    return lines + [
        f"`{fig(part, 'command')}` (bench/playground.py: the page alone, in headless Chromium, "
        "on 127.0.0.1; targets from issue #26): beam 5 on a 7-word sentence within its time "
        "target for each model, each exported model within its size target. Its output:",
        "",
        "```text",
        *fig(part, "output").rstrip().splitlines(),
        "```",
        "",
        playground_verdict(part["output"]),
        "",
    ]


def splice(text: str, section: str, before: str | None = None) -> str:
    """`text` with the section headed by `section`'s first line replaced by `section`; when
    `text` has none, it goes before the heading `before` (when there), else at the end."""
    heading = section.strip().splitlines()[0]
    start = text.find(heading + "\n")
    if start < 0:
        at = text.find(before + "\n") if before else -1
        if at < 0:
            return text.rstrip() + "\n\n" + section.strip() + "\n"
        return text[:at] + section.strip() + "\n\n" + text[at:]
    end = text.find("\n## ", start + len(heading))
    rest = "" if end < 0 else text[end:]
    return text[:start] + section.strip() + "\n" + rest


def replace_rows(text: str, heading: str, rows: list[str]) -> str:
    """`text` with each Markdown table row of `rows` put in place of the row with the same first
    cell in the table under `heading`; a row that table lacks goes after its last row."""
    start = text.find(heading + "\n")
    if start < 0:
        raise ValueError(f"no section {heading!r} to replace rows in")
    end = text.find("\n## ", start + len(heading))
    end = len(text) if end < 0 else end
    lines = text[start:end].split("\n")
    for row in rows:
        first = row.split(" | ")[0] + " |"
        at = [i for i, line in enumerate(lines) if line.startswith(first)]
        if len(at) > 1:
            raise ValueError(f"{len(at)} rows start with {first!r} under {heading!r}")
        if at:
            lines[at[0]] = row
        else:
            table = [i for i, line in enumerate(lines) if line.startswith("|")]
            if not table:
                raise ValueError(f"no table under {heading!r}")
            lines.insert(table[-1] + 1, row)
    return text[:start] + "\n".join(lines) + text[end:]

FROM_SCRATCH_SECTION = ("## The attention chapter's comparison from scratch on a GPU, at two "
                        "state sizes")


def section_from_scratch(d: dict) -> list[str]:
    """BENCHMARKS.md's section for bench.from_scratch's record (a GPU run, committed)."""
    runs = fig(d, "runs")
    labels = [b["bucket"] for b in fig(runs[0], "buckets")]
    score = _bleu_cell
    lines = [
        FROM_SCRATCH_SECTION, "",
        f"`python -m bench.from_scratch run` ({fig(d, 'date')}, {fig(d, 'machine')} (lent GPU "
        f"machine), torch {fig(d, 'torch')}; `bench/results/from-scratch-gpu.json`): the "
        "chapter's two models (`lib.experiments.long_inputs.MODELS`, one GRU layer of 128) and "
        "the same pair at the reference model's size (embeddings 256, two layers of 512), each "
        "pair trained from scratch with the same seed, data and steps; the four trainings "
        "shared the GPU at once (their seconds are under that load). Greedy corpus BLEU on the "
        "2,000 single test sentences and on the "
        f"{fig(d, 'test_sources'):,} joined test sources (1 to {fig(d, 'k_max')} test sentences) "
        "by English source length in tokens; loss: the mean training loss of the last 200 steps.",
        "",
        "| size | model | single | " + _bucket_columns(fig(runs[0], "buckets"))
        + " | steps | loss | training s |",
        "|---|---|" + "---|" * (len(labels) + 4),
    ]
    for r in runs:
        lines.append(f"| {fig(r, 'size')} | {fig(r, 'label')} | {score(fig(r, 'single_bleu'))} | "
                     + " | ".join(score(b["bleu"]) for b in fig(r, "buckets"))
                     + f" | {fig(r, 'steps'):,} | {fig(r, 'final_loss'):.2f} | "
                     f"{fig(r, 'seconds'):.0f} |")
    lines.append("")
    for size, c in fig(d, "comparisons").items():
        joined, longest = fig(c, "joined"), fig(c, "longest")
        lines.append(
            f"{size}: attention minus fixed vector is {joined['difference']:+.1f} BLEU on all "
            f"{joined['sources']:,} joined sources (95 % interval {joined['low']:+.1f} to "
            f"{joined['high']:+.1f}, paired bootstrap) and {longest['difference']:+.1f} on the "
            f"{longest['sources']:,} of {longest['bucket']} tokens ({longest['low']:+.1f} to "
            f"{longest['high']:+.1f}). "
            + wording.paired_difference(joined["low"], joined["high"], "On all joined sources, "
                                        "attention", "the fixed vector") + ".")
    if d.get("missing"):
        lines.append(f"Not finished within the run's deadline: {', '.join(d['missing'])}.")
    return lines + [""]


def _section_from_scratch(results: dict) -> list[str]:
    """The GPU run of bench.from_scratch (committed; `make bench` does not train it)."""
    if "from_scratch" not in results:  # results from before that run existed
        return []
    return section_from_scratch(results["from_scratch"])


def render(results: dict) -> str:
    """The whole BENCHMARKS.md; raises MissingFigure if any figure is missing."""
    lines = (_section_header(results) + _section_targets(results)
             + _section_training(results) + _section_decoding(results)
             + _section_bleu(results) + _section_limit(results) + section_book(results)
             + section_chapter_models(results) + _section_from_scratch(results)
             + _section_playground(results) + section_sweep(results))
    return "\n".join(lines).rstrip() + "\n"


def median(values) -> float:
    return statistics.median(values)


def main() -> None:
    results = json.loads(Path(sys.argv[1]).read_text())
    out = Path(sys.argv[2]) if len(sys.argv) > 2 else Path("BENCHMARKS.md")
    out.write_text(render(results))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
