"""What the benchmark scripts share: a description of the machine they ran on, and the reader
of the course's table of contents and chapter sources (scripts/toc.py)."""

from __future__ import annotations

import importlib.util
import platform
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def toc():
    """scripts/toc.py: the table of contents and the one reader of chapter sources."""
    spec = importlib.util.spec_from_file_location("scripts_toc", ROOT / "scripts" / "toc.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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
