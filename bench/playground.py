"""Benchmark: the Playground in headless Chromium, both models.

Targets: beam 5 on a 7-word sentence <= 300 ms (median, after one warm-up run) for the
reference model and for the attention model; each exported model <= 15 MB. Also timed: the
page's load until the reference model can translate, and the switch to the attention model
(its download and session start; the first only needs the reference model).

The chapters' live views (web/playground/live.js): the hidden-state view, the stepper, the beam
view and the attention view on one page assembled like tests/test_live_views.py's
(`scripts.playground_site.live_site`), each redrawn for a 10-word sentence the reader types.
Targets: the first redraw <= 1 s once the view's model is loaded, later redraws <= 300 ms
(median, each for a new sentence); and no model file fetched before the reader uses a form.

The page is the one tests/test_playground.py serves before the website is built:
web/playground/ and the current export (`make playground`, lib/course/playground.py) assembled
into a small site by `scripts.playground_site.mini_site`, on 127.0.0.1. The browser is
$CHROMIUM, else Debian's chromium.

    python -m bench.playground [--repeats 11]
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import os
import shutil
import statistics
import tempfile
import threading
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

from bench.common import cpu_model
from lib.course import checkpoint, playground, reference
from lib.experiments import long_inputs
from lib.widgets import attention_explorer, beam_explorer, decoder_stepper, hidden_state_explorer
from scripts import playground_site

SENTENCE = "Tom wants to go to the park."  # 7 words, as in tests/test_playground.py
TARGET_MS, TARGET_MB = 300.0, 15.0
FIRST_REDRAW_MS = 1000.0
# 10-word sentences, one per redraw (a view redraws for a new sentence each time)
TYPED = [f"Tom is reading a book in the {place} with Mary." for place in (
    "garden", "kitchen", "park", "car", "train", "house", "office", "library", "bus", "school",
    "room", "street")]
MODEL_FILES = "performance.getEntriesByType('resource').map(e => e.name)" \
    ".filter(n => /\\.(onnx|wasm)|playground\\.js|vocab\\.json/.test(n)).length"
REDRAW = """async ([i, text]) => {
  const v = window.S2SLive.views[i];
  v.form.sentence.value = text;
  const t0 = performance.now();
  await window.S2SLive.redraw(v);
  return [performance.now() - t0, v.form.dataset.state]; }"""

TIME_BEAM = """async ([s, n]) => {
  const P = window.S2SPlayground, M = P.model, out = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await P.translate(s, {search: "beam", k: M.vocab.default_beam, alpha: M.vocab.default_alpha,
                          margin: M.vocab.default_margin});
    out.push(performance.now() - t0);
  }
  return out; }"""


def model_mb(directory: Path) -> float:
    return sum((directory / f).stat().st_size for f in playground.FILES) / 1e6


def row(name: str, times: list[float], target: float = TARGET_MS) -> str:
    med = statistics.median(times)
    ok = "ok" if med <= target else "OVER"
    return (f"  {name:<34} median {med:6.1f} ms   min {min(times):6.1f}   max {max(times):6.1f}"
            f"   [{ok}]")


def live_views(export: Path, attention: Path | None) -> dict[str, list[str]]:
    """One page with the chapters' live views, rendered by Python as the chapters render them
    (the reference model's; the attention model's when it is exported)."""
    model = reference.pretrained(progress=False)
    views = [hidden_state_explorer(model, "I am cold."), decoder_stepper(model, "I am cold.",
                                                                         top_k=6),
             beam_explorer(model, "I am cold.", beam_size=3)]
    if attention:
        name = json.loads((attention / "manifest.json").read_text(encoding="utf-8"))["checkpoint"]
        path = long_inputs.weights_path(playground.ATTENTION).parent / name
        if path.is_file():
            views.append(attention_explorer(checkpoint.load(path, device="cpu"), "I am cold."))
    return {"views": [v.to_html() for v in views]}


def time_live_views(browser, url: str, repeats: int) -> None:
    """The live views' redraws: the first once the model is loaded, then `repeats` more."""
    page = browser.new_page()
    start = time.perf_counter()
    page.goto(url)
    page.wait_for_function("window.S2SLive !== undefined")
    print(f"  live views: page ready in {1000 * (time.perf_counter() - start):.0f} ms, model "
          f"files fetched before the reader types: {page.evaluate(MODEL_FILES)}")
    kinds = page.evaluate("window.S2SLive.views.map(v => v.kind)")
    for i, kind in enumerate(kinds):
        model = "attention" if kind == "attention" else "reference"
        start = time.perf_counter()
        page.evaluate("(m) => window.S2SLive.engine().then(P => P.preload(m)).then(() => 1)",
                      model)
        print(f"  {kind} view: its model loaded in {1000 * (time.perf_counter() - start):.0f} ms")
        runs = [page.evaluate(REDRAW, [i, TYPED[j % len(TYPED)]]) for j in range(repeats + 1)]
        if any(state != "done" for _, state in runs):
            raise SystemExit(f"the {kind} view did not redraw: {runs}")
        times = [ms for ms, _ in runs]
        print(row(f"{kind} view, first redraw", times[:1], FIRST_REDRAW_MS))
        print(row(f"{kind} view, later redraws", times[1:]))
    page.close()


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - signature of the base class
        pass


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=11, help="timed runs after the warm-up")
    args = parser.parse_args(argv)
    browser_path = os.environ.get("CHROMIUM") or shutil.which("chromium")
    if not browser_path:
        raise SystemExit("no Chromium: set CHROMIUM or install Debian's chromium")
    export = playground_site.model_dir()
    attention = playground.attention_export(export)
    print(f"machine: {cpu_model()}, {os.cpu_count()} CPUs; browser: {browser_path}")
    print(f"sentence: {SENTENCE!r}, beam 5 (lib.search's defaults); {args.repeats} runs after "
          f"one warm-up; target <= {TARGET_MS:.0f} ms")
    print(f"  reference model export {export.name}: {model_mb(export):.2f} MB "
          f"[{'ok' if model_mb(export) <= TARGET_MB else 'OVER'}]")
    if attention:
        print(f"  attention model export: {model_mb(attention):.2f} MB "
              f"[{'ok' if model_mb(attention) <= TARGET_MB else 'OVER'}]")
    with tempfile.TemporaryDirectory() as tmp:
        handler = functools.partial(Quiet, directory=playground_site.mini_site(Path(tmp), export))
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        url = f"http://127.0.0.1:{server.server_address[1]}/book/playground.html"
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=browser_path, headless=True)
                page = browser.new_page()
                start = time.perf_counter()
                page.goto(url)
                page.wait_for_function("document.getElementById('s2s-playground')"
                                       ".dataset.state === 'ready'", timeout=120_000)
                load_ms = 1000 * (time.perf_counter() - start)
                print(f"  page load until the reference model is ready: {load_ms:.0f} ms")
                times = page.evaluate(TIME_BEAM, [SENTENCE, args.repeats + 1])[1:]
                print(row("reference model, beam 5", times))
                if attention:
                    start = time.perf_counter()
                    page.evaluate("() => window.S2SPlayground.use('attention')")
                    print(f"  switch to the attention model (download, sessions): "
                          f"{1000 * (time.perf_counter() - start):.0f} ms")
                    times = page.evaluate(TIME_BEAM, [SENTENCE, args.repeats + 1])[1:]
                    print(row("attention model, beam 5", times))
                else:
                    print("  attention model: not in the export (run the attention chapter)")
                page.close()
                live = playground_site.live_site(Path(tmp) / "live",
                                                 live_views(export, attention), export)
                rel = (live / "book" / "views.html").relative_to(Path(tmp)).as_posix()
                time_live_views(browser, f"http://127.0.0.1:{server.server_address[1]}/{rel}",
                                args.repeats)
                browser.close()
        finally:
            server.shutdown()
            server.server_close()


if __name__ == "__main__":
    main()
