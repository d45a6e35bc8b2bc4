"""`explorer diff`: two columns, their boundaries, and the questions that flip."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from explorer.errors import ErrorCode, ExplorerError
from explorer.retrieval.flips import Measured, diff_columns
from explorer.retrieval.questions import parse_questions
from tests.conftest import MANIFEST, ROOT, run_cli
from tests.test_diff_app import fixture_exploration

DOCS = ROOT / "fixtures" / "markdown-docs"
DOCS_MANIFEST = DOCS / "manifest.json"
QUESTIONS = DOCS / "questions.json"
HEADING_220 = ("--policy", "heading-aware", "--max-chars", "220", "--grammar", "markdown")
RECURSIVE_800 = ("--policy", "langchain-recursive", "--max-chars", "800")
DOCUMENT_KEYS = {
    "source_id", "only_a", "only_a_count", "only_b", "only_b_count", "shared",
    "boundary_precision", "boundary_recall", "boundary_f1", "pk", "windowdiff",
}  # fmt: skip


def test_the_first_declared_column_is_a() -> None:
    forward = run_cli(
        "diff", MANIFEST, "--policy", "fixed-char", "--policy", "heading-aware", "--json"
    )
    backward = run_cli(
        "diff", MANIFEST, "--policy", "heading-aware", "--policy", "fixed-char", "--json"
    )
    assert forward.code == backward.code == 0, forward.err
    one, other = forward.json(), backward.json()
    assert (one["a"]["name"], one["b"]["name"]) == ("fixed-char", "heading-aware")
    assert (other["a"]["name"], other["b"]["name"]) == ("heading-aware", "fixed-char")
    for mine, theirs in zip(one["documents"], other["documents"], strict=True):
        assert set(mine) >= DOCUMENT_KEYS
        assert mine["only_a"] == theirs["only_b"] and mine["only_b"] == theirs["only_a"]
        assert mine["shared"] == theirs["shared"]
        assert mine["boundary_precision"] == theirs["boundary_recall"]
    assert set(one["summary"]) >= DOCUMENT_KEYS - {"source_id", "only_a", "only_b"}


def test_boundaries_are_the_chunks_starts_and_ends() -> None:
    index = run_cli("index", MANIFEST, "--policy", "heading-aware").json()
    other = run_cli("index", MANIFEST, "--policy", "fixed-char").json()
    diff = run_cli(
        "diff", MANIFEST, "--policy", "heading-aware", "--policy", "fixed-char", "--json"
    ).json()
    assert [d["source_id"] for d in diff["documents"]] == [
        d["source_id"] for d in index["documents"]
    ]
    for document, source in zip(diff["documents"], index["documents"], strict=True):
        length, source_id = len(source["text"]), source["source_id"]

        def cuts(
            chunks: list[dict[str, object]], length: int = length, at: str = source_id
        ) -> set[int]:
            return {
                int(str(c[key])) for c in chunks if c["source_id"] == at for key in ("start", "end")
            } - {0, length}

        a, b = cuts(index["chunks"]), cuts(other["chunks"])
        assert document["only_a"] == sorted(a - b) and document["only_b"] == sorted(b - a)
        assert document["shared"] == len(a & b)


def test_a_tolerance_matches_near_boundaries() -> None:
    args = ("diff", MANIFEST, "--policy", "heading-aware", "--policy", "fixed-char", "--json")
    exact = run_cli(*args).json()["summary"]
    near = run_cli(*args, "--tolerance", "40").json()
    assert near["tolerance"] == 40
    assert near["summary"]["shared"] >= exact["shared"]
    assert near["summary"]["boundary_f1"] >= exact["boundary_f1"]
    assert near["summary"]["only_a_count"] <= exact["only_a_count"]


def test_refusals_are_one_line_with_a_stable_code(tmp_path: Path) -> None:
    one = run_cli("diff", MANIFEST, "--policy", "heading-aware")
    three = run_cli(
        "diff",
        MANIFEST,
        "--policy",
        "heading-aware",
        "--policy",
        "fixed-char",
        "--policy",
        "paragraph",
    )
    negative = run_cli(
        "diff", MANIFEST, "--policy", "heading-aware", "--policy", "fixed-char", "--tolerance", "-1"
    )
    for result in (one, three, negative):
        assert result.code == 2
        assert result.err.startswith("error: usage: ") and result.err.count("\n") == 1
    assert "exactly two columns" in one.err and "not 1" in one.err
    assert "not 3" in three.err
    assert "below 0" in negative.err


Results = dict[str, dict[str, Any]]


def diff_and_evaluation(*measuring: str) -> tuple[dict[str, Any], Results, Results]:
    """`diff --json` and `evaluate` of heading-aware 220 (A) against langchain-recursive
    800 (B) measured alike (`measuring`), and evaluate's questions of A and of B by id."""
    columns = (DOCS_MANIFEST, *HEADING_220, *RECURSIVE_800, "--questions", QUESTIONS)
    diff = run_cli("diff", *columns, *measuring, "--json")
    assert diff.code == 0, diff.err
    evaluation = run_cli("evaluate", *columns, *measuring, "--bootstrap", "0").json()
    a, b = ({q["id"]: q for q in p["questions"]} for p in evaluation["policies"])
    return diff.json(), a, b


def assert_hits_are_evaluates(found: dict[str, Any], a: Results, b: Results) -> None:
    """The counts and the flipped questions are evaluate's per-question `hit`."""
    assert found["hits"] == {
        "a_only": sum(a[i]["hit"] and not b[i]["hit"] for i in a),
        "b_only": sum(b[i]["hit"] and not a[i]["hit"] for i in a),
        "both": sum(a[i]["hit"] and b[i]["hit"] for i in a),
        "neither": sum(not (a[i]["hit"] or b[i]["hit"]) for i in a),
    }
    assert {(q["id"], q["winner"]) for q in found["questions"]} == {
        (i, "a" if a[i]["hit"] else "b") for i in a if a[i]["hit"] != b[i]["hit"]
    }


def test_questions_that_flip_are_evaluates_hits() -> None:
    found, a, b = diff_and_evaluation()
    assert_hits_are_evaluates(found, a, b)
    assert (found["k"], found["budget"]) == (5, None)
    hits = found["hits"]
    assert hits["a_only"] + hits["b_only"] > 0
    flipped = found["questions"]
    assert len(flipped) == hits["a_only"] + hits["b_only"]
    documents = {d["source_id"]: d for d in found["documents"]}
    for question in flipped:
        assert set(question) >= {"id", "winner", "references", "cut_by"}
        winner = a if question["winner"] == "a" else b
        loser = b if question["winner"] == "a" else a
        assert winner[question["id"]]["hit"] and not loser[question["id"]]["hit"]
        assert question["references"] == a[question["id"]]["references"]
        document = documents[question["source_id"]]
        loser_only = document["only_b"] if question["winner"] == "a" else document["only_a"]
        for offset in question["cut_by"]:
            assert any(r["start"] < offset < r["end"] for r in question["references"])
            # Neither column overlaps: the winner's chunk holds the whole reference, so
            # a boundary inside it is the loser's alone.
            assert offset in loser_only
    cut = [q for q in flipped if q["cut_by"]]
    assert cut, "some flipped answer is cut by the losing column"


def test_under_a_budget_hits_are_evaluates_under_the_same_budget() -> None:
    """`--budget` keeps each question's best chunks (of the top 100, as evaluate does)
    that fit: a question can flip under it and not at k=5, or flip the other way."""
    top5, _, _ = diff_and_evaluation()
    for budget, unit in (("1000", "chars"), ("250t", "tokens")):
        found, a, b = diff_and_evaluation("--budget", budget)
        assert_hits_are_evaluates(found, a, b)
        size = int(budget.removesuffix("t"))
        assert (found["k"], found["budget"]) == (100, {"size": size, "unit": unit})
        assert all(len(a[i]["retrieved"]) < 100 for i in a)  # the budget kept fewer
        at_5 = {q["id"]: q["winner"] for q in top5["questions"]}
        changed = [q for q in found["questions"] if at_5.get(q["id"]) != q["winner"]]
        assert changed, "some question flips under the budget and not so at k=5"
    with_k, a, b = diff_and_evaluation("--budget", "1000", "--k", "5")
    assert_hits_are_evaluates(with_k, a, b)
    assert with_k["k"] == 5
    summary = run_cli(
        "diff", DOCS_MANIFEST, *HEADING_220, *RECURSIVE_800, "--questions", QUESTIONS,
        "--budget", "1000",
    ).out.splitlines()  # fmt: skip
    assert summary[3].startswith("questions (bm25, k=100, budget 1,000 chars): A only")


def test_a_bad_budget_is_invalid_budget() -> None:
    for budget in ("0", "-5", "lots"):
        result = run_cli(
            "diff", MANIFEST, "--policy", "heading-aware", "--policy", "fixed-char",
            "--questions", QUESTIONS, "--budget", budget,
        )  # fmt: skip
        assert result.code == 2
        assert result.err.startswith("error: invalid_budget: ") and result.err.count("\n") == 1


def test_the_api_refuses_a_budget_below_1() -> None:
    exploration = fixture_exploration()
    a, b = exploration.columns[:2]
    questions = parse_questions(QUESTIONS.read_bytes())
    with pytest.raises(ExplorerError) as refused:
        diff_columns(exploration, a, b, 0, Measured(questions, budget={"size": 0, "unit": "chars"}))
    assert refused.value.code == ErrorCode.INVALID_BUDGET


def test_without_json_a_short_summary() -> None:
    result = run_cli("diff", DOCS_MANIFEST, *HEADING_220, *RECURSIVE_800, "--questions", QUESTIONS)
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert lines[0].startswith("A heading-aware  vs  B langchain-recursive")
    assert "F1" in lines[2] and "Pk" in lines[2] and "WindowDiff" in lines[2]
    assert lines[3].startswith("questions (bm25, k=5): A only")


def test_out_writes_the_json(tmp_path: Path) -> None:
    out = tmp_path / "diff.json"
    result = run_cli(
        "diff", MANIFEST, "--policy", "heading-aware", "--policy", "paragraph", "--out", out
    )
    assert result.code == 0, result.err
    assert out.read_text().startswith("{") and result.out.startswith("A heading-aware")


def test_the_aster_diff_is_its_golden_file(tmp_path: Path) -> None:
    """Every figure of one small exact case, kept: heading-aware 220 against fixed-char
    80 on the seed's fixture, within 2 characters."""
    out = tmp_path / "diff.json"
    result = run_cli(
        "diff", MANIFEST, "--policy", "heading-aware", "--policy", "fixed-char",
        "--tolerance", "2", "--out", out,
    )  # fmt: skip
    assert result.code == 0, result.err
    golden = ROOT / "tests" / "golden" / "aster_diff_heading-aware_fixed-char_2.json"
    assert json.loads(out.read_text("utf-8")) == json.loads(golden.read_text("utf-8"))
