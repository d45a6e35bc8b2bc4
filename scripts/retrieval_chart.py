"""The retrieval curve of docs/retrieval.md: heading-aware at 100 to 1,000 characters (step 100),
BM25 and top 5, over the real questions of fixtures/markdown-docs, drawn with Altair
and written as a PNG by vl-convert (no browser, nothing fetched).

    PYTHONPATH=. .venv/bin/python scripts/retrieval_chart.py [OUT.png]

The figures are those `python -m explorer evaluate fixtures/markdown-docs/manifest.json
--questions fixtures/markdown-docs/questions.json --sweep heading-aware:100:1000:100`
prints.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import altair as alt

from explorer.retrieval.evaluate import curve, evaluate, sweep_columns
from explorer.retrieval.questions import parse_questions
from explorer.sources.loading import DirectoryReader, load_documents
from explorer.sources.manifest import parse_manifest

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "fixtures" / "markdown-docs"
SWEEP = "heading-aware:100:1000:100"
FIGURES = {"recall": "recall", "precision": "precision", "iou": "IoU", "hit": "hit rate"}


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else ROOT / "docs" / "retrieval-sweep.png"
    manifest = parse_manifest((FIXTURE / "manifest.json").read_bytes())
    load = load_documents(manifest, DirectoryReader(FIXTURE))
    questions = parse_questions((FIXTURE / "questions.json").read_bytes())
    evaluation = evaluate(load, questions, sweep_columns(SWEEP), "bm25", 5)
    print(curve(evaluation), end="")
    rows = [
        {
            "max_chars": policy["config"]["max_chars"],
            "figure": label,
            "value": policy["summary"][key],  # type: ignore[literal-required]
        }
        for policy in evaluation["policies"]
        for key, label in FIGURES.items()
    ]
    chart = (
        alt.Chart(alt.Data(values=rows))  # type: ignore[no-untyped-call]
        .mark_line(point=True)
        .encode(
            x=alt.X("max_chars:Q", title="heading-aware max_chars (characters)"),
            y=alt.Y("value:Q", title="mean over the questions", scale=alt.Scale(domain=[0, 1])),
            color=alt.Color("figure:N", title=None, sort=list(FIGURES.values())),
        )
        .properties(
            width=560,
            height=300,
            title=f"BM25, top 5: {len(questions.questions)} questions on FastAPI, Rust book docs",
        )
    )
    vl_convert = importlib.import_module("vl_convert")
    out.write_bytes(vl_convert.vegalite_to_png(chart.to_dict(), scale=2))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
