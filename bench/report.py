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

from bench import recipe_check, sweep

NOT_MEASURED = "not measured in this run"

# (what, target, how the measured value compares): the targets.
TARGETS = {
    "training": 1.5,  # ours / JoeyNMT target tokens/s
    "decoding": 1.0,  # ours / JoeyNMT beam-5 sentences/s
    "bleu": 1.0,  # sacrebleu seconds / lib.bleu seconds
    "utilisation": 0.30,  # share of the matmul peak
    "cold_minutes": 20.0,
    "chapter_minutes": 1.0,  # issue #20: every chapter <= 60 s on a 2-core CPU, model present
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
    book = fig(r, "book")
    if skipped(book, "cold"):
        lines.append(f"| Cold strict book build | <= {TARGETS['cold_minutes']:g} min | "
                     f"{NOT_MEASURED} | |")
    else:
        total = fig(book, "cold.total_s")
        lines.append(f"| Cold strict book build | <= {TARGETS['cold_minutes']:g} min | "
                     f"{minutes(total)} | {met(total <= TARGETS['cold_minutes'] * 60)} |")
    chapters = _chapters(book)
    if chapters is None:
        lines.append(f"| Every chapter executes in | <= {TARGETS['chapter_minutes']:g} min | "
                     f"{NOT_MEASURED} | |")
    else:
        name, worst = max(chapters.items(), key=lambda kv: kv[1])
        lines.append(f"| Every chapter executes in | <= {TARGETS['chapter_minutes']:g} min | "
                     f"slowest {minutes(worst)} (`{name}`) | "
                     f"{met(worst <= TARGETS['chapter_minutes'] * 60)} |")
    return lines + [""]


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


def _section_book(r: dict) -> list[str]:
    book = fig(r, "book")
    lines = ["## The book", "", f"Strict build: `{fig(book, 'command')}`.", ""]
    if skipped(book, "cold"):
        lines.append(f"- Cold build (empty cache, reference model trained first): "
                     f"{NOT_MEASURED} ({skipped(book, 'cold')}).")
    else:
        lines.append(f"- Cold build: {minutes(fig(book, 'cold.total_s'))} in all = training "
                     f"the reference model {minutes(fig(book, 'cold.train_s'))} + build "
                     f"{minutes(fig(book, 'cold.build_s'))} ($SEQ2SEQ_CACHE pointed at an empty "
                     "temporary directory).")
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


# The recipe's target (#29 §3): a change in the same budget is taken only if it reaches both.
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


def _section_sweep(r: dict) -> list[str]:
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
        recipe_check.table(fig(cpu, "runs")),
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


def render(results: dict) -> str:
    """The whole BENCHMARKS.md; raises MissingFigure if any figure is missing."""
    lines = (_section_header(results) + _section_targets(results)
             + _section_training(results) + _section_decoding(results)
             + _section_bleu(results) + _section_limit(results) + _section_book(results)
             + _section_sweep(results))
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
