"""The book: cold strict build (every model made first, as `make book`), warm rebuild, per chapter.

Why both: a maintainer's first `make book` on a fresh machine pays for training the reference
model (the cold build); every later build finds it cached (the warm build). Both run the strict
build `make book` runs (`jupyter-book build . --all -n -W --keep-going`). The cold build points
$SEQ2SEQ_CACHE (lib.course.download.cache_dir) at an empty temporary directory, so nothing
cached is reused, and $SEQ2SEQ_RELEASE_URL (lib.course.links) at a folder that does not exist,
so nothing published is downloaded: every model, the reference model and the attention
chapter's two, is trained here. It times `make book`'s steps separately: the reference model
(`python -m lib.course.reference --ensure`), the attention chapter's models (`python -m
lib.course.release --prepare-runs`), the Playground's export (forced, into _build/playground,
where the build's last step copies it from) and the build. Per-chapter execution times come
from myst-nb's "Executed notebook in N seconds" log lines of the warm build, whose cache
holds the reference model and nothing else (the small experiments the chapters cache with
lib.course.memo run again, as in a fresh Colab runtime); when the log has none, each notebook
is timed with nbclient instead.

A chapter whose models are slow to make (the attention chapter trains two models from
scratch) has its own target: it executes within a minute *with its models present*.
`with_models` times it so: one chapter, executed with nbclient in a fresh kernel against the
current cache (lib.course.download.cache_dir, where a build left the chapter's cached results),
with the cached results it had to compute anyway named, and its slowest cells.

    python -m bench.book [--skip-cold] [--skip-warm] [--json OUT] [--results]
    python -m bench.book --with-models book/attention --skip-cold --skip-warm
    python -m bench.book --splice     # BENCHMARKS.md's book section and rows, from RESULTS

With --results the run is also kept in RESULTS (bench/results/book-cpu.json, committed), and
--splice renders that file into BENCHMARKS.md's "The book" section and the Targets rows it
measures, so the cold build (about three quarters of an hour) can be measured without a full
`make bench`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from nbclient import NotebookClient

from bench import gpu_chapters, report
from bench.common import cpu_model
from lib.course import reference
from lib.course.download import cache_dir
from scripts import toc

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "book-cpu.json"
BUILD = [str(Path(sys.executable).parent / "jupyter-book"), "build", ".", "--all", "-n", "-W",
         "--keep-going"]
WARM_CACHE = ("the reference model only: the chapters' small experiments (lib.course.memo) ran "
              "again, as in a fresh runtime that has just downloaded the model")
COLD_MODELS = ("every model trained here: $SEQ2SEQ_RELEASE_URL pointed at a folder that does "
               "not exist, so nothing published was downloaded")
EXECUTED = re.compile(r"([\w./-]+?)(?:\.ipynb)?: Executed notebook in ([\d.]+) seconds")


def chapter_times(log: str) -> dict[str, float]:
    """myst-nb's log lines -> {chapter path relative to the repo, without suffix: seconds}."""
    out = {}
    for path, seconds in EXECUTED.findall(log):
        name = Path(path)
        try:
            name = name.resolve().relative_to(ROOT)
        except ValueError:
            pass
        out[str(name.with_suffix(""))] = float(seconds)
    return out


def timed(cmd: list[str], env: dict) -> tuple[float, str]:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    log = proc.stdout + proc.stderr
    if proc.returncode != 0:
        sys.stderr.write(log[-4000:])
        raise SystemExit(f"{' '.join(cmd[:3])} failed (exit {proc.returncode})")
    return seconds, log


def nbclient_times(env: dict) -> dict[str, float]:
    """Fallback: execute each chapter notebook with nbclient, as the build would."""
    os.environ.update(env)
    out = {}
    for page in toc.notebooks():  # chapter sources: MyST Markdown (or .ipynb) notebooks
        path = toc.source(page)
        nb = toc.read(path)
        t0 = time.perf_counter()
        NotebookClient(nb, timeout=600, resources={"metadata": {"path": str(path.parent)}}
                       ).execute()
        out[page] = time.perf_counter() - t0
    return out


def first_line(source: str) -> str:
    """A cell's first line that is neither blank nor a cell option (`:tags:`), for naming it."""
    lines = [ln.strip() for ln in source.splitlines()]
    return next((ln for ln in lines if ln and not ln.startswith(":")), "")


def with_models(page: str) -> dict:
    """Execute chapter `page` (book/x) in a fresh kernel against the current cache; its seconds.

    `computed` names the cached results (lib.course.memo files) that were missing and that the
    execution therefore computed: empty when the chapter's models were all present, which is
    the condition its target is stated for. `slowest_cells` says where the time went (code cell
    index, seconds, the cell's first line).
    """
    results = cache_dir() / "results"
    stamps = lambda: {f.name: f.stat().st_mtime_ns for f in results.glob("*.json")}  # noqa: E731
    before, load = stamps(), os.getloadavg()[0]
    gpu_chapters.kernel_environment()  # the kernel imports this checkout's lib
    run = gpu_chapters.run_chapter(page)
    code = [c.source for c in toc.read(toc.source(page, ROOT)).cells if c.cell_type == "code"]
    return {"page": page, "seconds": run["seconds"], "ok": run["ok"],
            "errors": [e["error"] for e in run["errors"]] + ([run["crash"]] if run["crash"]
                                                              else []),
            "computed": sorted(name for name, t in stamps().items() if before.get(name) != t),
            "slowest_cells": [dict(c, first_line=first_line(code[c["code_cell"]]))
                              for c in run["slowest_cells"]],
            "cache": str(cache_dir()), "load_start": load, "load_end": os.getloadavg()[0]}



def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--skip-cold", action="store_true", help="skip the cold build")
    p.add_argument("--skip-warm", action="store_true")
    p.add_argument("--with-models", action="append", default=[], metavar="PAGE",
                   help="also time chapter PAGE (book/x) with its cached models present")
    p.add_argument("--json", type=Path)
    p.add_argument("--results", action="store_true", help=f"also keep the run in {RESULTS}")
    p.add_argument("--splice", action="store_true",
                   help=f"only render {RESULTS.name} into BENCHMARKS.md (nothing is run)")
    args = p.parse_args()
    if args.splice:
        splice()
        return
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    result: dict = {"command": " ".join(["jupyter-book"] + BUILD[1:]),
                    "run": {"date": time.strftime("%Y-%m-%d %H:%M"),
                            "machine": f"{cpu_model()}, {os.cpu_count()} cores",
                            "reference_key": reference.reference_key()}}
    if not args.skip_cold:
        with tempfile.TemporaryDirectory(prefix="seq2seq-cold-cache-") as cache:
            # Nothing published can be fetched (lib.course.links.release_asset reads this
            # folder, which does not exist): the reference model and the chapters' models
            # (lib.course.chapter_models) are all trained here.
            releases = (Path(cache) / "no-releases").as_uri()
            cold = dict(env, SEQ2SEQ_CACHE=cache, SEQ2SEQ_RELEASE_URL=releases)
            # `make book`'s steps in its order: the reference model, the attention chapter's
            # copies (`make chapter-models`), the Playground's export, the strict build.
            py = sys.executable
            train_s, _ = timed([py, "-m", "lib.course.reference", "--ensure"], cold)
            models_s, _ = timed([py, "-m", "lib.course.release", "--prepare-runs"], cold)
            # --force: an export already in _build/playground must not stand in for one made
            # from the models just trained (the build copies it from there into the site)
            export_s, _ = timed([py, "-m", "lib.course.playground", "--force", "--out",
                                 str(ROOT / "_build" / "playground")], cold)
            build_s, log = timed(BUILD, cold)
        result["cold"] = {"train_s": train_s, "models_s": models_s, "playground_s": export_s,
                          "build_s": build_s, "total_s": train_s + models_s + export_s + build_s,
                          "chapters": chapter_times(log), "models": COLD_MODELS}
    if not args.skip_warm:
        model = reference.cache_path()
        if not model.is_file():
            result["warm_missing"] = f"no cached reference model at {model}"
        else:
            # The model, and nothing else: the chapters' small experiments (lib.course.memo) run as
            # in a fresh Colab runtime that has just downloaded the model.
            with tempfile.TemporaryDirectory(prefix="seq2seq-warm-cache-") as cache:
                (Path(cache) / model.name).symlink_to(model)
                warm = dict(env, SEQ2SEQ_CACHE=cache)
                build_s, log = timed(BUILD, warm)
                chapters = chapter_times(log)
                source = "myst-nb build log"
                if not chapters:
                    chapters, source = nbclient_times(warm), "nbclient, one notebook at a time"
            result["warm"] = {"build_s": build_s, "chapters": chapters,
                              "chapters_source": source, "cache": WARM_CACHE}
    for page in args.with_models:
        result.setdefault("with_models", {})[page] = with_models(page)
    if args.json:
        args.json.write_text(json.dumps(result))
    if args.results:
        RESULTS.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(result))


def section(book: dict) -> str:
    """BENCHMARKS.md's "The book" section for a bench.book result."""
    return "\n".join(report.section_book({"book": book}))


def splice(results: Path = RESULTS, out: Path = ROOT / "BENCHMARKS.md") -> None:
    """Render the committed run into `out`: its "The book" section and its Targets rows."""
    book = json.loads(results.read_text(encoding="utf-8"))
    text = report.splice(out.read_text(encoding="utf-8"), section(book))
    out.write_text(report.replace_rows(text, "## Targets", report.book_target_rows(book)),
                   encoding="utf-8")
    print(f"wrote the book section and its Targets rows of {out}")


if __name__ == "__main__":
    main()
