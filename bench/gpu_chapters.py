"""Run every chapter on a GPU and time it: does the course work on CUDA, and how fast?

Why: the course is built and tested on CPU-only machines (CI has no GPU), yet readers open it
in Colab or on their own GPU, where `lib.pick_device()` puts the reference model on CUDA. A
tensor left on the CPU next to one on the GPU, or a `.numpy()` on a CUDA tensor, passes every
CPU test and breaks there. This script is the check for that, and it measures what a reader
with a GPU waits for:

1. torch, CUDA and GPU information;
2. the reference model: `python -m lib.course.reference --ensure --device cuda` (on a machine
without
   a fresh cached model this trains it, with its progress bar); its training minutes and
   held-out BLEU are read from the checkpoint;
3. every chapter notebook of `_toc.yml`, executed top to bottom with nbclient in a fresh
   kernel (working directory book/, 600 s per cell unless --cell-timeout says otherwise; a
   cell past it is interrupted, which records where it was), timed, every cell error recorded;
4. the tests that only run with CUDA (the files of tests/ that mention it);
5. one JSON file with all of it (written after each step, so a cut-off run keeps what it
   measured), and a Markdown table of it.

    python -m bench.gpu_chapters OUT.json                       # all of the above
    python -m bench.gpu_chapters OUT.json --chapters book/bleu  # some chapters only
    python -m bench.gpu_chapters --markdown OUT.json            # the table of a saved run

It needs nbclient and ipykernel besides the course's own requirements (jupytext among them
reads the MyST Markdown chapters). The chapters import `glue` from myst_nb (Jupyter Book's
notebook layer, which pulls in Sphinx); where myst_nb is not installed, the kernels get a
stand-in `myst_nb.glue` that only displays the value (the JSON says so), which does not change
what a chapter computes.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import logging
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

import torch
from nbclient import NotebookClient

from bench.common import cpu_model
from lib.course import checkpoint, reference
from scripts import toc

ROOT = Path(__file__).resolve().parent.parent

CELL_TIMEOUT = 600  # seconds, as the book build allows
MYST_NB_STANDIN = '''"""Stand-in for myst_nb.glue (bench.gpu_chapters): displays only."""


def glue(name, variable, display=True):
    if display:
        from IPython.display import display as show

        show(variable)
'''
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def _save(results: dict, out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".part")
    tmp.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, out)


def machine_info() -> dict:
    info = {"python": platform.python_version(), "torch": torch.__version__,
            "cuda_runtime": torch.version.cuda, "cuda_available": torch.cuda.is_available(),
            "cudnn": torch.backends.cudnn.version() if torch.cuda.is_available() else None}
    if torch.cuda.is_available():
        p = torch.cuda.get_device_properties(0)
        info.update(device=torch.cuda.get_device_name(0), capability=list(torch.cuda.
                    get_device_capability(0)), memory_gib=round(p.total_memory / 2**30, 1),
                    multiprocessors=p.multi_processor_count)
    else:
        info["device"] = f"CPU: {cpu_model()}"
    try:
        info["nvidia_smi"] = subprocess.run(["nvidia-smi", "-L"], capture_output=True,
                                            text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    return info


def ensure_reference(device: str | None) -> dict:
    """Run `python -m lib.course.reference --ensure` (training if needed); read what it recorded."""
    path = reference.cache_path()
    cached = path.is_file()
    cmd = [sys.executable, "-m", "lib.course.reference", "--ensure"] + (["--device", device]
                                                                  if device else [])
    print("$", " ".join(cmd[1:]), flush=True)
    t = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT)
    seconds = time.perf_counter() - t
    result = {"command": "python " + " ".join(cmd[1:]), "returncode": proc.returncode,
              "was_cached": cached, "wall_seconds": round(seconds, 1), "key": path.stem}
    if proc.returncode == 0:
        extra = checkpoint.read(path)["extra"]
        result.update({k: extra[k] for k in ("minutes", "tokens_per_second", "test_bleu_greedy",
                                            "early_minutes", "early_test_bleu_greedy")
                       if k in extra})
        result["trained_on"] = device if not cached else "unknown (was cached)"
    return result


def cuda_tests() -> dict:
    """pytest on the test files that mention CUDA (their CUDA tests skip without a GPU)."""
    files = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").glob("test_*.py")
                   if re.search(r"\bcuda\b", p.read_text(encoding="utf-8"), re.I))
    cmd = [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", *files]
    print("$", "python " + " ".join(cmd[1:]), flush=True)
    t = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    print(proc.stdout[-3000:], proc.stderr[-2000:], sep="\n", flush=True)
    lines = proc.stdout.splitlines()
    outcomes = {}
    for line in lines:
        m = re.match(r"(PASSED|FAILED|SKIPPED|ERROR|XFAIL|XPASS) (\S+)", line)
        if m and "cuda" in m.group(2).lower():
            outcomes[m.group(2)] = m.group(1)
    skipped = [ln[len("SKIPPED "):] for ln in lines if ln.startswith("SKIPPED [")]
    summary = next((ln.strip("= ") for ln in reversed(lines) if re.search(
        r"\d+ (passed|failed|error)", ln)), "")
    return {"files": files, "returncode": proc.returncode, "summary": summary,
            "cuda_tests": outcomes, "skipped": skipped,
            "seconds": round(time.perf_counter() - t, 1)}


def toc_notebooks() -> list[str]:
    """The pages of _toc.yml, in order, that are notebooks (book/x for book/x.md)."""
    return toc.notebooks()


def kernel_environment() -> str | None:
    """Let the kernels import `lib` from this checkout, and myst_nb (a stand-in if missing)."""
    paths = [str(ROOT)]
    standin = None
    if importlib.util.find_spec("myst_nb") is None:
        standin = Path(tempfile.mkdtemp(prefix="myst_nb_standin_"))
        (standin / "myst_nb.py").write_text(MYST_NB_STANDIN, encoding="utf-8")
        paths.insert(0, str(standin))
        print(f"myst_nb is not installed: the kernels use a stand-in glue() from {standin}")
    os.environ.setdefault("PYTHONFAULTHANDLER", "1")  # a kernel that crashes prints where
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(paths + ([old] if old else []))
    return "stand-in (displays the value, stores nothing)" if standin else "installed"


def _cell_seconds(cell) -> float | None:
    ex = cell.get("metadata", {}).get("execution", {})
    try:
        start = datetime.datetime.fromisoformat(ex["iopub.execute_input"].replace("Z", "+00:00"))
        end = datetime.datetime.fromisoformat(ex["shell.execute_reply"].replace("Z", "+00:00"))
    except (KeyError, ValueError):
        return None
    return (end - start).total_seconds()


def run_chapter(page: str, cell_timeout: int = CELL_TIMEOUT) -> dict:
    """Execute the chapter `page` (book/x: its MyST Markdown source, read as a notebook) in a
    fresh kernel; seconds, errors (all cells run).

    A cell that runs past `cell_timeout` is interrupted (KeyboardInterrupt in the kernel, so
    its traceback, recorded as the cell's error, shows where it was) and the next cells run.
    """
    nb = toc.read(toc.source(page, ROOT))
    client = NotebookClient(nb, timeout=cell_timeout, interrupt_on_timeout=True,
                            kernel_name="python3", allow_errors=True, record_timing=True,
                            resources={"metadata": {"path": str((ROOT / page).parent)}})
    if not client.log.handlers or all(isinstance(h, logging.NullHandler)
                                      for h in client.log.handlers):
        client.log.addHandler(logging.StreamHandler())  # "Kernel died ...", timeouts
    t = time.perf_counter()
    try:
        client.execute()
        crash = None
    except Exception as e:  # a cell timeout or a dead kernel: allow_errors does not cover them
        crash = f"{type(e).__name__}: {ANSI.sub('', str(e))[-2000:]}"
        print(traceback.format_exc(), flush=True)
    seconds = time.perf_counter() - t
    errors, code_index, cell_times, unfinished = [], -1, [], None
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        code_index += 1
        s = _cell_seconds(cell)
        if s is None and unfinished is None and cell.source.strip():
            unfinished = {"code_cell": code_index, "source": cell.source[:300]}
        if s is not None:
            cell_times.append((s, code_index))
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                errors.append({"code_cell": code_index, "execution_count": cell.get(
                    "execution_count"), "source": cell.source[:400],
                    "error": f"{out['ename']}: {out['evalue']}",
                    "traceback": ANSI.sub("", "\n".join(out.get("traceback", [])))[-4000:]})
    slowest = [{"code_cell": i, "seconds": round(s, 2)} for s, i in sorted(cell_times)[::-1][:3]]
    return {"page": page, "seconds": round(seconds, 1), "ok": not errors and crash is None,
            "code_cells": code_index + 1, "errors": errors, "crash": crash,
            "unfinished_cell": unfinished if crash else None,
            "slowest_cells": slowest}


def markdown(results: dict) -> str:
    m = results["machine"]
    lines = [f"Device: {m.get('device')} (torch {m.get('torch')}, CUDA {m.get('cuda_runtime')}, "
             f"Python {m.get('python')}); run on {results['date']} with "
             f"`{results['command']}`."]
    ref = results.get("reference")
    if ref and ref.get("returncode") == 0:
        how = ("trained in this run" if not ref["was_cached"] else "loaded from the cache")
        lines.append(f"Reference model ({how}, `{ref['command']}`): "
                     f"{ref['minutes']:.1f} min of training, "
                     f"{ref['tokens_per_second']:,.0f} target tokens/s, held-out BLEU "
                     f"{ref['test_bleu_greedy']:.2f} (greedy, sacrebleu, all references)"
                     + (f"; {ref['early_test_bleu_greedy']:.2f} after "
                        f"{ref['early_minutes']:.1f} min" if "early_minutes" in ref
                        and ref["early_minutes"] < ref["minutes"] - 0.05 else "")
                     + f"; {ref['wall_seconds'] / 60:.1f} min for the whole command.")
    elif ref:
        lines.append(f"Reference model: `{ref['command']}` failed ({ref['returncode']}).")
    lines += ["", "| Chapter | Seconds | Result |", "|---|---:|---|"]
    total = 0.0
    for ch in results.get("chapters", []):
        total += ch["seconds"]
        if ch["ok"]:
            status = "ok"
        elif ch["crash"]:
            where = ch.get("unfinished_cell")
            status = (f"stopped{' in code cell ' + str(where['code_cell']) if where else ''}:"
                      f" {ch['crash'][:80]}")
        else:
            first = ch["errors"][0]
            status = (f"{len(ch['errors'])} cell error(s); first: code cell "
                      f"{first['code_cell']}, {first['error'][:80]}")
        lines.append(f"| `{ch['page']}` | {ch['seconds']:.1f} | {status} |")
    done = {ch["page"] for ch in results.get("chapters", [])}
    for page in toc_notebooks():
        if page not in done and "chapters" in results:
            lines.append(f"| `{page}` | | not run (the run ended first) |")
    lines.append(f"| **chapters run** | **{total:.1f}** | |")
    tests = results.get("tests")
    if tests:
        cuda = ", ".join(f"`{t.split('::')[-1]}` {o.lower()}" for t, o in
                         tests["cuda_tests"].items()) or "none ran"
        lines += ["", f"Tests in {', '.join(tests['files'])}: {tests['summary']} "
                      f"(tests named for CUDA: {cuda}; skipped: "
                      f"{'; '.join(tests.get('skipped', [])) or 'none'})."]
    if results.get("myst_nb") and results["myst_nb"] != "installed":
        lines += ["", f"myst_nb: {results['myst_nb']}."]
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", type=Path, help="where to write the JSON results")
    parser.add_argument("--markdown", type=Path, metavar="JSON",
                        help="print the Markdown table of a saved results file and stop")
    parser.add_argument("--chapters", nargs="*", help="pages to run (default: all in _toc.yml)")
    parser.add_argument("--skip-reference", action="store_true")
    parser.add_argument("--skip-tests", action="store_true")
    parser.add_argument("--cell-timeout", type=int, default=CELL_TIMEOUT, metavar="SECONDS",
                        help=f"interrupt a cell after this long (default {CELL_TIMEOUT})")
    args = parser.parse_args(argv)
    if args.markdown:
        print(markdown(json.loads(args.markdown.read_text(encoding="utf-8"))))
        return
    if args.out is None:
        parser.error("give the JSON output path (or --markdown JSON)")

    cmd = " ".join(["python", "-m", "bench.gpu_chapters"] + list(sys.argv[1:] if argv is None
                                                               else argv))
    results = {"date": datetime.date.today().isoformat(), "command": cmd,
               "cell_timeout": args.cell_timeout, "machine": machine_info()}
    print(json.dumps(results["machine"], indent=2), flush=True)
    _save(results, args.out)
    device = "cuda" if torch.cuda.is_available() else None
    if not args.skip_reference:
        results["reference"] = ensure_reference(device)
        _save(results, args.out)
    if not args.skip_tests:
        results["tests"] = cuda_tests()
        _save(results, args.out)
    results["myst_nb"] = kernel_environment()
    results["chapters"] = []
    for page in args.chapters or toc_notebooks():
        print(f"running {page} ...", flush=True)
        ch = run_chapter(page, args.cell_timeout)
        results["chapters"].append(ch)
        _save(results, args.out)
        print(f"  {ch['seconds']:.1f} s, {'ok' if ch['ok'] else 'FAILED'}", flush=True)
        for e in ch["errors"]:
            print(f"  code cell {e['code_cell']}: {e['error']}\n{e['traceback']}", flush=True)
        if ch["crash"]:
            print(f"  {ch['crash']}", flush=True)
    print()
    print(markdown(results))


if __name__ == "__main__":
    main()
