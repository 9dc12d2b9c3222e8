"""A reader's first run: from an empty cache to the first translation, as download + load.

The release that `make release` wrote (_build/release/) is served on 127.0.0.1 as GitHub serves
release assets, and a fresh Python process with an empty $SEQ2SEQ_CACHE pointed at it (the one
override, $SEQ2SEQ_RELEASE_URL) times: importing lib, `lib.pretrained()` split into the
download and the load, and the first `translate`. A loopback download is the floor: a reader's
download takes the checkpoint's size divided by their bandwidth on top of it.

    python -m bench.cold_start [--repeats 3] [--device cpu] [--json OUT]
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RELEASE = ROOT / "_build" / "release"

# Runs in the fresh process; prints one JSON line.
_READER = """
import json, sys, time
start = time.perf_counter()
import lib, lib.course.reference, lib.course.checkpoint
imported = time.perf_counter()
path = lib.course.reference.cache_path()
lib.course.reference.fetch_published(path, path.stem.split("-", 1)[1], progress=False)
downloaded = time.perf_counter()
model = lib.course.checkpoint.load(path, device=sys.argv[1])
loaded = time.perf_counter()
out = model.translate(["I am hungry."])
done = time.perf_counter()
print(json.dumps({"import": imported - start, "download": downloaded - imported,
                  "load": loaded - downloaded, "first_translation": done - loaded,
                  "total": done - start, "device": str(model.device), "output": out[0]}))
"""


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def serve(directory: Path):
    handler = functools.partial(_Quiet, directory=str(directory))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    manifest = json.loads((RELEASE / "manifest.json").read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as tmp:
        served = Path(tmp) / "served" / manifest["tag"]
        shutil.copytree(RELEASE, served)
        httpd = serve(served.parent)
        runs = []
        try:
            for i in range(args.repeats):
                env = {**os.environ, "SEQ2SEQ_CACHE": str(Path(tmp) / f"cache{i}"),
                       "SEQ2SEQ_RELEASE_URL": f"http://127.0.0.1:{httpd.server_address[1]}"}
                done = subprocess.run([sys.executable, "-c", _READER, args.device], env=env,
                                      cwd=ROOT, capture_output=True, text=True, check=True)
                runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
        finally:
            httpd.shutdown()
    parts = ("import", "download", "load", "first_translation", "total")
    result = {"checkpoint_bytes": manifest["bytes"], "dtype": manifest["dtype"],
              "device": runs[0]["device"], "output": runs[0]["output"],
              "median_seconds": {p: statistics.median(r[p] for r in runs) for p in parts},
              "runs": runs, "test_bleu": manifest["test_bleu"]}
    print(f"checkpoint {manifest['file']}: {manifest['bytes'] / 1e6:.1f} MB ({manifest['dtype']})")
    print(f"cold start on {result['device']}, median of {len(runs)} fresh processes "
          f"(download over 127.0.0.1):")
    for p in parts:
        print(f"  {p:>18}: {result['median_seconds'][p]:.2f} s")
    for dtype, scores in manifest["test_bleu"].items():
        print(f"  test BLEU, {dtype} weights: greedy {scores['greedy']:.2f}, "
              f"beam 5 {scores['beam5']:.2f}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1), encoding="utf-8")
    return result


if __name__ == "__main__":
    main()
