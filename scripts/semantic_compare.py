"""Semantic against heading-aware and fixed-char at equal token budgets, on the fixture
corpus's questions, with 95% bootstrap intervals over the questions (issue #36).

PYTHONPATH=. .venv/bin/python scripts/semantic_compare.py [RETRIEVER] [SIZES]
(defaults: bm25, 128,256,512; prints one line per column and size)
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "fixtures" / "markdown-docs"
POLICIES = ("semantic", "heading-aware", "fixed-char")
METRICS = ("recall", "iou", "hit")
RESAMPLES = 10_000


def interval(values: list[float], seed: int = 36) -> tuple[float, float, float]:
    """The mean and its 95% percentile-bootstrap interval."""
    data = np.asarray(values, dtype=np.float64)
    draws = np.random.default_rng(seed).integers(0, len(data), (RESAMPLES, len(data)))
    means = data[draws].mean(axis=1)
    return float(data.mean()), float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def evaluate(retriever: str, columns: list[str]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "evaluation.json"
        subprocess.run(
            [sys.executable, "-m", "explorer", "evaluate", str(FIXTURE / "manifest.json"),
             "--questions", str(FIXTURE / "questions.json"), "--retriever", retriever,
             "--vector-cache", "none", "--out", str(out), *columns],
            check=True, capture_output=True, cwd=ROOT,
        )  # fmt: skip
        found: dict[str, Any] = json.loads(out.read_text("utf-8"))
    return found


def main(argv: list[str]) -> int:
    retriever = argv[0] if argv else "bm25"
    sizes = [int(n) for n in (argv[1] if len(argv) > 1 else "128,256,512").split(",")]
    print(f"retriever {retriever}; mean [95% CI over the questions]")
    print(f"{'column':<22}{'chunks':>7}" + "".join(f"{m:>24}" for m in METRICS))
    for size in sizes:  # one evaluation per budget: a page holds at most 8 columns
        columns: list[str] = []
        for policy in POLICIES:
            columns += ["--policy", policy, "--max-tokens", str(size), "--grammar", "markdown"]
        for policy in evaluate(retriever, columns)["policies"]:
            per = policy["questions"]
            cells = []
            for metric in METRICS:
                mean, low, high = interval([q[metric] for q in per])
                cells.append(f"{mean:.3f} [{low:.3f}, {high:.3f}]".rjust(24))
            name = f"{policy['config']['strategy']} {size}t"
            print(f"{name:<22}{policy['summary']['chunk_count']:>7}" + "".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
