"""What the benchmark parts share: a description of the machine they ran on, BLEU by length."""

from __future__ import annotations

import platform

from lib.experiments import long_inputs


def cpu_model() -> str:
    """The CPU's model name (from /proc/cpuinfo on Linux), for the report's first line."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def buckets(hypotheses: list[str], groups) -> list[dict]:
    """lib.experiments.long_inputs.bleu_by_bucket as JSON; an empty bucket's BLEU is None, not
    NaN."""
    return [{"bucket": long_inputs.bucket_label(b), "sources": n, "bleu": s if n else None}
            for b, n, s in long_inputs.bleu_by_bucket(hypotheses, groups)]
