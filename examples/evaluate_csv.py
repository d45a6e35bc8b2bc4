"""Measure retrieval with questions in chunking_evaluation's CSV, and let the explorer
decide between two columns.

    PYTHONPATH=. .venv/bin/python examples/evaluate_csv.py [MANIFEST] [--questions CSV]

The CSV is chunking_evaluation's `questions_df.csv` shape: `question`, `references` (a JSON
list of `{"content", "start_index", "end_index"}`) and `corpus_id` (the document's
`source_id` in MANIFEST); pandas' unnamed index column is ignored. The default,
examples/questions.csv, holds 12 questions about fixtures/markdown-docs. Each column's
whole index is searched by BM25 for every question (top 5); the script prints recall and
hit rate with their 95 % intervals, then the decision and why.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from explorer import (
    DirectoryReader,
    evaluate,
    load_documents,
    make_config,
    parse_manifest,
    parse_questions,
)

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "manifest", nargs="?", type=Path, default=ROOT / "fixtures/markdown-docs/manifest.json"
    )
    parser.add_argument("--questions", type=Path, default=ROOT / "examples/questions.csv")
    args = parser.parse_args()

    manifest = parse_manifest(args.manifest.read_bytes())
    load = load_documents(manifest, DirectoryReader(args.manifest.parent))
    questions = parse_questions(args.questions.read_bytes())  # not JSON, so read as CSV
    columns = [
        ("heading-aware@800", make_config("heading-aware", 800, grammar="markdown")),
        ("fixed-char@800", make_config("fixed-char", 800)),
    ]
    result = evaluate(load, questions, columns)

    print(
        f"{len(questions.questions)} questions from {args.questions.name}, BM25, top {result['k']}"
    )
    for policy in result["policies"]:
        summary = policy["summary"]
        intervals = summary["ci"]
        assert intervals is not None  # there with the default 2,000 resamples
        recall, hit = intervals["recall"], intervals["hit"]
        print(
            f"{policy['name']:<19} recall {summary['recall']:.3f} "
            f"[{recall[0]:.3f}, {recall[1]:.3f}]"
            f"  hit {summary['hit']:.3f} [{hit[0]:.3f}, {hit[1]:.3f}]"
            f"  {summary['retrieved_tokens']:.0f} tokens retrieved"
        )
    decision = result["decision"]
    if decision is not None:
        print(f"choice: {decision['choice']}")
        print(decision["why"])


if __name__ == "__main__":
    main()
