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
from explorer.retrieval.evaluate import Judging, Measured, PolicyEvaluation, evaluate, judged
from explorer.retrieval.questions import parse_questions
from explorer.retrieval.retrievers import ChunkIndex
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


FIVE_COLUMNS = {
    "columns": "fixed-char:500;paragraph;heading-aware:220;heading-aware:1000",
    "semchunk": "300",
}


def app_figures() -> None:
    """Server time (the app's own log) and wall time (AppTest's) of each step on 1 MiB
    with five columns: questions added one at a time, Explore steps with and without
    questions, retriever switches."""
    from bench_app import one_mebibyte_document, timed_run
    from streamlit.testing.v1 import AppTest

    from tests.conftest import open_tab

    text = one_mebibyte_document()
    lines = [line.strip() for line in text.splitlines()]
    quotes = [
        line
        for line in lines
        if 60 <= len(line) <= 200 and text.count(line) == 1 and "`" not in line
    ]
    quotes = quotes[:: max(1, len(quotes) // 6)][:6]
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
    for key, value in FIVE_COLUMNS.items():
        at.query_params[key] = value
    at.run()
    at.radio(key="source").set_value("Paste text").run()
    at.text_area(key="paste").set_value(text)
    wall, own = timed_run(at)
    print("\n## The app on 1 MiB with five columns (server s / AppTest wall s)")
    print(f"{'first load':<44}{own:>8.3f}{wall:>8.3f}")

    def steps(name: str, targets: list[int]) -> None:
        for target in targets:
            at.slider(key="heading-aware").set_value(target)
            wall, own = timed_run(at)
            print(f"{name + f' to {target}':<44}{own:>8.3f}{wall:>8.3f}")

    for _ in range(3):
        wall, own = timed_run(at)
        print(f"{'rerun, nothing changed (no question)':<44}{own:>8.3f}{wall:>8.3f}")
    steps("Explore step, no question: heading-aware", [240, 260, 280])
    wall, own = timed_run(open_tab(at, "Retrieval"))
    print(f"{'Retrieval tab opened (no question)':<44}{own:>8.3f}{wall:>8.3f}")
    for number, quote in enumerate(quotes, 1):
        at.text_input(key="new_question_text").input(f"What does passage {number} say?")
        at.text_area(key="new_question_quote").input(quote)
        button = next(b for b in at.button if b.label == "Add question")
        button.click()
        wall, own = timed_run(at)
        print(f"{f'add question {number} (rank it in 5 columns)':<44}{own:>8.3f}{wall:>8.3f}")
    for _ in range(3):
        wall, own = timed_run(at)
        print(f"{f'rerun, nothing changed ({len(quotes)} questions)':<44}{own:>8.3f}{wall:>8.3f}")
    open_tab(at, "Explore boundaries")  # the Retrieval tab is closed, its questions kept
    steps(f"Explore step, {len(quotes)} questions: heading-aware", [300, 320, 340])
    wall, own = timed_run(open_tab(at, "Retrieval"))
    print(f"{f'Retrieval tab opened ({len(quotes)} questions)':<44}{own:>8.3f}{wall:>8.3f}")
    for name in ("embedding", "hybrid", "bm25"):
        at.radio(key="retriever").set_value(name)
        wall, own = timed_run(at)
        print(f"{'retriever to ' + name:<44}{own:>8.3f}{wall:>8.3f}")


def kept_index(index: ChunkIndex) -> Callable[[], ChunkIndex]:
    return lambda: index


def per_question_core() -> None:
    """What adding a question computes, without the page around it: on 1 MiB with five
    columns whose BM25 indexes are kept, the new question ranked and measured in each
    column, then every column's intervals, verdicts and decision."""
    from bench_app import one_mebibyte_document

    from explorer.digests import sha_bytes
    from explorer.pipeline import Settings, explore
    from explorer.retrieval.evaluate import (
        ColumnFigures,
        evaluation_of,
        measure_column,
        policy_evaluation,
    )
    from explorer.retrieval.questions import QuestionSet, new_question, place_questions
    from explorer.retrieval.retrievers import BM25
    from explorer.sources.loading import MappingReader

    text = one_mebibyte_document()
    data = text.encode()
    manifest = parse_manifest(
        (
            '{"manifest_version": 1, "documents": [{"source_id": "pasted", "version": "1", '
            f'"path": "p.md", "sha256": "{sha_bytes(data)}"}}]}}'
        ).encode()
    )
    load = load_documents(manifest, MappingReader({"p.md": data}))
    normalized = load.documents[0]["text"]
    settings, _ = Settings.from_query(dict(FIVE_COLUMNS), high=100_000)
    columns = explore(load, [], settings).columns
    indexes = [BM25().index([c["text"] for c in column.index["chunks"]]) for column in columns]
    figures = [ColumnFigures(column.index["chunks"]) for column in columns]
    measured: list[Measured] = [{} for _ in columns]
    lines = [line.strip() for line in normalized.splitlines()]
    quotes = [q for q in lines if 60 <= len(q) <= 200 and normalized.count(q) == 1][::40][:7]
    asked = []
    print("\n## Adding a question, the core's work alone (1 MiB, five columns, BM25 kept)")
    for number, quote in enumerate(quotes, 1):
        made = new_question(f"What does passage {number} say?", "pasted", [quote], normalized, [])
        asked.append(made.model_dump(mode="json", exclude_none=True))
        questions = QuestionSet.model_validate({"questions_version": 1, "questions": asked})
        began = time.perf_counter()
        placed = place_questions(questions, {"pasted": normalized})
        policies = []
        for column, index, kept, memo in zip(columns, indexes, figures, measured, strict=True):
            chunks = column.index["chunks"]
            results = measure_column(chunks, placed, kept_index(index), kept, 5, None, memo)
            chars = sum(c["end"] - c["start"] for c in chunks)
            index_id = column.result["index_id"]
            config = column.index["config"]
            policies.append(
                policy_evaluation(column.name, config, index_id, results, len(chunks), chars)
            )
        evaluation_of("bm25", 5, policies, Judging())
        seconds = time.perf_counter() - began
        print(f"question {number}: ranked in 5 columns and judged             {seconds:8.3f} s")


def main(argv: list[str]) -> int:
    bootstrap_figures()
    per_question_core()
    if "--app" in argv:
        app_figures()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
