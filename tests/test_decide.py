"""Deciding between columns (issue 33): Precision_Ω, MRR, nDCG and retrieved tokens per
question, the budget's walk, bootstrap intervals, verdicts, the decision, the report."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.errors import ErrorCode, ExplorerError
from explorer.retrieval.decide import Verdict, bootstrap, decide
from explorer.retrieval.evaluate import (
    Budget,
    Hit,
    parse_budget,
    question_result,
    within_budget,
)
from explorer.retrieval.metrics import Coverage, DocumentChunks, ndcg, reciprocal_rank
from explorer.retrieval.questions import PlacedQuestion
from tests.conftest import ROOT, run_cli

LIBRARY = ROOT / "fixtures" / "library"
MARKDOWN_DOCS = ROOT / "fixtures" / "markdown-docs"
CHUNK_FILE = ROOT / "fixtures" / "chunk-files" / "llamaindex-library.json"

# --- the oracle: chunking_evaluation's `_full_precision_score`, transcribed ------------------
# A faithful transcription of BaseEvaluation._full_precision_score and its range helpers
# (chunking_evaluation/evaluation_framework/base_evaluation.py, utils.py), kept here only as
# the oracle Precision_Ω is tested against, quirks included: ranges that only touch
# "intersect" (an empty intersection), and union merges touching ranges.


def oracle_intersect(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int] | None:
    start, end = max(a[0], b[0]), min(a[1], b[1])
    return (start, end) if start <= end else None


def oracle_union(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    ordered = sorted(ranges, key=lambda r: r[0])
    merged = [ordered[0]]
    for start, end in ordered[1:]:
        last_start, last_end = merged[-1]
        if start <= last_end:
            merged[-1] = (last_start, max(last_end, end))
        else:
            merged.append((start, end))
    return merged


def oracle_difference(
    ranges: list[tuple[int, int]], target: tuple[int, int]
) -> list[tuple[int, int]]:
    result = []
    target_start, target_end = target
    for start, end in ranges:
        if end < target_start or start > target_end:
            result.append((start, end))
        elif start < target_start and end > target_end:
            result.append((start, target_start))
            result.append((target_end, end))
        elif start < target_start:
            result.append((start, target_start))
        elif end > target_end:
            result.append((target_end, end))
    return result


def oracle_sum(ranges: list[tuple[int, int]]) -> int:
    return sum(end - start for start, end in ranges)


def oracle_precision_omega(
    references: Sequence[tuple[int, int]], chunks: Sequence[tuple[int, int]]
) -> float:
    """One question's score: `chunks` are the column's chunks of its document, in order."""
    score = 0.0
    numerator: list[tuple[int, int]] = []
    denominator_chunks: list[tuple[int, int]] = []
    unused = list(references)
    for chunk in chunks:
        for reference in references:
            intersection = oracle_intersect(chunk, reference)
            if intersection is not None:
                unused = oracle_difference(unused, intersection)
                numerator = oracle_union([intersection, *numerator])
                denominator_chunks = oracle_union([chunk, *denominator_chunks])
    if numerator:
        score = oracle_sum(numerator) / oracle_sum(oracle_union(denominator_chunks + unused))
    return score


def ours(references: Sequence[tuple[int, int]], chunks: Sequence[tuple[int, int]]) -> Coverage:
    return DocumentChunks("d", chunks).coverage([("d", s, e) for s, e in references])


# --- Precision_Ω ------------------------------------------------------------------------------


def test_precision_omega_on_hand_made_cases() -> None:
    # One chunk holds the reference and as much again: 10 / 20.
    assert ours([(10, 20)], [(0, 5), (5, 25), (25, 40)]).precision_omega == 10 / 20
    # A chunk that ends where the reference starts touches it: the whole chunk joins the
    # denominator, though it shares no character (chunking_evaluation's quirk).
    touching = ours([(10, 20)], [(0, 10), (10, 20), (20, 30)])
    assert (
        touching.precision_omega
        == 10 / 30
        == oracle_precision_omega([(10, 20)], [(0, 10), (10, 20), (20, 30)])
    )
    assert touching.relevant == 1  # nDCG's R counts only chunks sharing a character
    # No chunk touches the reference: 0.
    assert ours([(10, 20)], [(0, 5), (25, 30)]) == Coverage(0.0, 0)
    # Two references, one chunk over both and the gap between: 10 / 30.
    assert ours([(0, 5), (25, 30)], [(0, 30)]).precision_omega == 10 / 30
    # A part no chunk holds stays in the denominator: 5 / (10 + 5).
    assert ours([(5, 15)], [(0, 10), (20, 30)]).precision_omega == 5 / 15


ranges = st.tuples(st.integers(0, 60), st.integers(0, 30)).map(lambda p: (p[0], p[0] + p[1]))


@settings(max_examples=400, deadline=None)
@given(
    st.lists(ranges.filter(lambda r: r[1] > r[0]), min_size=1, max_size=4),
    st.lists(ranges, max_size=12),
)
def test_precision_omega_equals_the_oracle(
    references: list[tuple[int, int]], chunks: list[tuple[int, int]]
) -> None:
    assert ours(references, chunks).precision_omega == oracle_precision_omega(references, chunks)


def _per_question_against_the_oracle(
    evaluation: dict[str, Any], name: str, chunks_by_doc: dict[str, list[tuple[int, int]]]
) -> int:
    policy = next(p for p in evaluation["policies"] if p["name"] == name)
    for result in policy["questions"]:
        references = [(r["start"], r["end"]) for r in result["references"]]
        expected = oracle_precision_omega(references, chunks_by_doc.get(result["source_id"], []))
        assert result["precision_omega"] == round(expected, 6), result["id"]
    return len(policy["questions"])


def test_precision_omega_of_llamaindex_chunks_equals_chunking_evaluation(tmp_path: Path) -> None:
    """The library fixture's questions, and the chunks LlamaIndex cut (imported)."""
    out = tmp_path / "out.json"
    result = run_cli(
        "evaluate", LIBRARY / "manifest.json", "--questions", LIBRARY / "questions.json",
        "--policy", "paragraph", "--chunks", f"llamaindex={CHUNK_FILE}", "--out", out,
    )  # fmt: skip
    assert result.code == 0, result.err
    nodes = json.loads(CHUNK_FILE.read_text("utf-8"))
    manifest = json.loads((LIBRARY / "manifest.json").read_text("utf-8"))
    by_path = {d["path"]: d["source_id"] for d in manifest["documents"]}
    chunks: dict[str, list[tuple[int, int]]] = {}
    for node in nodes:
        source = by_path[node["metadata"]["file_path"]]
        chunks.setdefault(source, []).append((node["start_char_idx"], node["end_char_idx"]))
    evaluation = json.loads(out.read_text("utf-8"))
    assert _per_question_against_the_oracle(evaluation, "llamaindex", chunks) > 0


def test_precision_omega_of_langchain_chunks_on_real_docs_equals_chunking_evaluation(
    tmp_path: Path,
) -> None:
    """fixtures/markdown-docs with its real questions, and chunks LangChain's recursive
    splitter cut (with their start index), imported from a chunk file."""
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    from explorer.sources.loading import DirectoryReader, load_documents
    from explorer.sources.manifest import parse_manifest

    manifest = MARKDOWN_DOCS / "manifest.json"
    load = load_documents(parse_manifest(manifest.read_bytes()), DirectoryReader(MARKDOWN_DOCS))
    splitter = RecursiveCharacterTextSplitter(
        chunk_size=400, chunk_overlap=60, add_start_index=True
    )
    lines, chunks = [], {}
    for document in load.documents:
        cut = splitter.create_documents(
            [document["text"]], metadatas=[{"source_id": document["source_id"]}]
        )
        lines += [json.dumps(c.model_dump()) for c in cut]
        chunks[document["source_id"]] = [
            (c.metadata["start_index"], c.metadata["start_index"] + len(c.page_content))
            for c in cut
        ]
    chunk_file = tmp_path / "langchain.jsonl"
    chunk_file.write_text("\n".join(lines), "utf-8")
    out = tmp_path / "out.json"
    result = run_cli(
        "evaluate", manifest, "--questions", MARKDOWN_DOCS / "questions.json",
        "--policy", "heading-aware", "--chunks", f"langchain={chunk_file}", "--out", out,
    )  # fmt: skip
    assert result.code == 0, result.err
    evaluation = json.loads(out.read_text("utf-8"))
    assert _per_question_against_the_oracle(evaluation, "langchain", chunks) == 31


# --- MRR and nDCG -----------------------------------------------------------------------------


def test_mrr_is_one_over_the_rank_of_the_first_chunk_sharing_a_character() -> None:
    reference = [("d", 10, 20)]
    assert reciprocal_rank(reference, [("d", 0, 10), ("d", 30, 40), ("d", 15, 25)]) == 1 / 3
    assert reciprocal_rank(reference, [("d", 12, 13)]) == 1.0
    assert reciprocal_rank(reference, [("e", 10, 20), ("d", 20, 30)]) == 0.0  # other doc, touch
    assert reciprocal_rank(reference, []) == 0.0


def test_ndcg_with_the_column_relevant_count_and_the_retrieved_count() -> None:
    reference = [("d", 10, 20)]
    hit, miss = ("d", 12, 18), ("d", 40, 50)
    # One relevant chunk at rank 2 of 3, R = 1: (1 / log2 3) / 1.
    assert ndcg(reference, [miss, hit, miss], 1) == pytest.approx(1 / math.log2(3))
    # R = 3 but n = 2: the ideal puts min(R, n) = 2 relevant first.
    ideal = 1 + 1 / math.log2(3)
    assert ndcg(reference, [miss, hit], 3) == pytest.approx((1 / math.log2(3)) / ideal)
    assert ndcg(reference, [hit, hit], 2) == 1.0
    assert ndcg(reference, [miss], 0) == 0.0  # R = 0
    assert ndcg(reference, [], 4) == 0.0  # nothing retrieved


# --- the budget -------------------------------------------------------------------------------


def hits(*sizes: tuple[int, int]) -> list[Hit]:
    """Hits of (characters, tokens), laid end to end in document d."""
    made, start = [], 0
    for number, (chars, tokens) in enumerate(sizes):
        made.append(Hit(f"c{number}", "d", start, start + chars, 1.0, None, tokens))
        start += chars
    return made


def test_the_budget_keeps_chunks_while_they_fit_and_stops_at_the_first_that_does_not() -> None:
    ranked = hits((50, 9), (30, 5), (40, 7), (5, 1))
    chars: Budget = {"size": 80, "unit": "chars"}
    more: Budget = {"size": 89, "unit": "chars"}
    tokens: Budget = {"size": 14, "unit": "tokens"}
    assert within_budget(ranked, chars) == (ranked[:2], False)  # 50 + 30 = 80 fits; 40 stops
    assert within_budget(ranked, more) == (ranked[:2], False)  # not 5
    assert within_budget(ranked, tokens) == (ranked[:2], False)
    assert within_budget(ranked, None) == (ranked, False)
    assert within_budget([], chars) == ([], False)


def test_a_first_chunk_over_the_budget_is_kept_alone_and_says_so() -> None:
    ranked = hits((100, 20), (5, 1))
    assert within_budget(ranked, {"size": 50, "unit": "chars"}) == (ranked[:1], True)
    question = PlacedQuestion("q", "what?", "d", (("d", 0, 10),))
    result = question_result(question, ranked, Coverage(0.5, 1), {"size": 19, "unit": "tokens"})
    assert result["over_budget"] and [r["chunk_id"] for r in result["retrieved"]] == ["c0"]
    assert result["retrieved_tokens"] == 20 and result["precision"] == 0.1


@pytest.mark.parametrize("text", ["0", "0t", "-5", "-5t", "abc", "12x", "", "t", "1.5"])
def test_a_bad_budget_is_invalid_budget(text: str) -> None:
    with pytest.raises(ExplorerError) as caught:
        parse_budget(text)
    assert caught.value.code is ErrorCode.INVALID_BUDGET


def test_budgets_parse() -> None:
    assert parse_budget("4000") == {"size": 4000, "unit": "chars"}
    assert parse_budget("1000t") == {"size": 1000, "unit": "tokens"}


def evaluated(tmp_path: Path, *extra: str, name: str = "out.json") -> dict[str, Any]:
    out = tmp_path / name
    result = run_cli(
        "evaluate", MARKDOWN_DOCS / "manifest.json", "--questions",
        MARKDOWN_DOCS / "questions.json", "--policy", "heading-aware", "--max-chars", "800",
        "--policy", "paragraph", "--out", out, *extra,
    )  # fmt: skip
    assert result.code == 0, result.err
    data: dict[str, Any] = json.loads(out.read_text("utf-8"))
    return data


def test_the_command_line_budget_walks_each_ranking_of_k_100(tmp_path: Path) -> None:
    whole = evaluated(tmp_path, "--k", "100", "--bootstrap", "0", name="whole.json")
    for budget, unit in (("1000t", "tokens"), ("1500", "chars")):
        run = evaluated(tmp_path, "--budget", budget, "--bootstrap", "0")
        size = int(budget.removesuffix("t"))
        assert (run["k"], run["budget"]) == (100, {"size": size, "unit": unit})
        for policy, full in zip(run["policies"], whole["policies"], strict=True):
            for result, ranked in zip(policy["questions"], full["questions"], strict=True):
                kept = result["retrieved"]
                assert kept == ranked["retrieved"][: len(kept)]  # a prefix of the ranking
                spent = (
                    result["retrieved_tokens"]
                    if unit == "tokens"
                    else sum(r["end"] - r["start"] for r in kept)
                )
                assert result["over_budget"] == (len(kept) == 1 and spent > size)
                assert spent <= size or result["over_budget"]
                if len(kept) < len(ranked["retrieved"]):  # the next one would not fit
                    after = ranked["retrieved"][len(kept)]
                    more = after["end"] - after["start"] if unit == "chars" else 1
                    assert spent + more > size or unit == "tokens"


# --- the bootstrap, verdicts and the decision -------------------------------------------------


def test_a_column_better_on_every_question_wins_and_identical_columns_tie() -> None:
    rng = np.random.default_rng(5)
    base = rng.uniform(0, 0.8, size=40).round(6)
    better = (base + 0.1).round(6)
    figures = [[list(better)], [list(base)], [list(base)]]
    found = bootstrap(figures, 2000, 0, 10**7)
    ab, ac, bc = found.verdicts
    assert (ab.winner, ab.difference) == ("a", 0.1) and ab.low > 0
    assert (ac.winner, ac.difference) == ("a", 0.1)
    assert (bc.winner, bc.difference, bc.low, bc.high) == ("tie", 0.0, 0.0, 0.0)
    reverse = bootstrap([[list(base)], [list(better)]], 500, 3, 10**7).verdicts[0]
    assert reverse.winner == "b" and reverse.high < 0
    low, high = found.per_column[1][0]
    assert low < float(np.mean(base)) < high


def test_the_same_seed_gives_the_same_intervals_and_another_seed_others() -> None:
    figures = [[list(np.linspace(0, 1, 37))], [list(np.linspace(0, 1, 37) ** 2)]]
    first = bootstrap(figures, 300, 11, 10**7)
    assert bootstrap(figures, 300, 11, 10**7) == first
    assert bootstrap(figures, 300, 12, 10**7) != first


def test_the_bootstrap_of_2000_resamples_472_questions_3_columns_takes_under_two_seconds() -> None:
    rng = np.random.default_rng(0)
    figures = rng.uniform(0, 1, size=(3, 7, 472)).round(6).tolist()
    began = time.perf_counter()
    found = bootstrap(figures, 2000, 0, 4_000_000)
    assert time.perf_counter() - began < 2.0
    assert len(found.verdicts) == 3 * 7


def test_resamples_past_the_scores_held_limit_are_refused() -> None:
    with pytest.raises(ExplorerError) as caught:
        bootstrap([[[0.5, 0.2]]] * 3, 1000, 0, 2000)
    assert caught.value.code is ErrorCode.INVALID_BOOTSTRAP


def v(a: int, b: int, winner: str, difference: float = 0.0) -> Verdict:
    return Verdict(a, b, 0, difference, difference - 0.01, difference + 0.01, winner)  # type: ignore[arg-type]


def test_the_decision_takes_the_unbeaten_column() -> None:
    choice = decide(
        ["x", "y", "z"], "recall", [0.9, 0.7, 0.6],
        [v(0, 1, "a", 0.2), v(0, 2, "a", 0.3), v(1, 2, "tie", 0.1)], [500, 100, 50], 120,
    )  # fmt: skip
    assert (choice.best, choice.choice) == ([0], 0)
    assert "'x' is best on recall" in choice.why and "'y'" in choice.why
    assert "+0.200 (95 % interval +0.190 to +0.210) over 120 questions" in choice.why


def test_when_the_questions_cannot_separate_columns_the_cheapest_is_taken() -> None:
    choice = decide(
        ["x", "y", "z"], "ndcg", [0.8, 0.79, 0.5],
        [v(0, 1, "tie", 0.01), v(0, 2, "a", 0.3), v(1, 2, "a", 0.29)], [500, 300, 50], 25,
    )  # fmt: skip
    assert (choice.best, choice.choice) == ([0, 1], 1)
    assert choice.why.startswith("The 25 questions cannot separate 'x' and 'y' on ndcg")
    assert "the cheapest, 'y' (300 retrieved tokens per question), was taken" in choice.why
    assert "-0.010 (95 % interval -0.020 to +0.000) over 25 questions" in choice.why
    tied = decide(["x", "y"], "recall", [0.5, 0.5], [v(0, 1, "tie")], [10, 10], 3)
    assert (tied.best, tied.choice) == ([0, 1], 0)  # declaration order breaks a tie in tokens


def test_one_column_is_its_own_choice() -> None:
    choice = decide(["only"], "recall", [0.4], [], [10], 9)
    assert (choice.best, choice.choice) == ([0], 0) and "only column" in choice.why


# --- the file, the command line and the report ------------------------------------------------


def test_the_file_holds_intervals_verdicts_and_the_decision(tmp_path: Path) -> None:
    run = evaluated(tmp_path, "--decide-by", "ndcg", "--seed", "7", "--bootstrap", "500")
    again = evaluated(tmp_path, "--decide-by", "ndcg", "--seed", "7", "--bootstrap", "500",
                      name="again.json")  # fmt: skip
    assert (tmp_path / "out.json").read_bytes() == (tmp_path / "again.json").read_bytes()
    assert run == again
    assert run["bootstrap"] == {"resamples": 500, "seed": 7, "level": 0.95}
    assert run["budget"] is None
    metrics = ["recall", "precision", "iou", "hit", "precision_omega", "mrr", "ndcg"]
    for policy in run["policies"]:
        summary = policy["summary"]
        assert list(summary["std"]) == metrics and list(summary["ci"]) == metrics
        for metric in metrics:
            low, high = summary["ci"][metric]
            assert low <= summary[metric] <= high
            values = [float(q[metric]) for q in policy["questions"]]
            assert summary["std"][metric] == round(float(np.std(values)), 6)
    assert [(c["a"], c["b"], c["metric"]) for c in run["comparisons"]] == [
        ("heading-aware", "paragraph", m) for m in metrics
    ]
    decision = run["decision"]
    assert decision["metric"] == "ndcg" and decision["choice"] in decision["best"]
    assert "31 questions" in decision["why"]


def test_bootstrap_0_gives_no_intervals_verdicts_or_decision(tmp_path: Path) -> None:
    run = evaluated(tmp_path, "--bootstrap", "0")
    assert run["bootstrap"] is None and run["comparisons"] == [] and run["decision"] is None
    assert all(p["summary"]["ci"] is None for p in run["policies"])


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("--budget", "0"), "invalid_budget"),
        (("--budget", "-3"), "invalid_budget"),
        (("--budget", "lots"), "invalid_budget"),
        (("--bootstrap", "-1"), "invalid_bootstrap"),
        (("--bootstrap", "100001"), "invalid_bootstrap"),
        (("--bootstrap", "many"), "invalid_bootstrap"),
        (("--decide-by", "f1"), "unknown_metric"),
        (("--report", "/nonexistent-folder-33/report.html"), "report_folder_missing"),
    ],
)
def test_bad_values_are_refused_with_their_code(args: tuple[str, ...], code: str) -> None:
    result = run_cli(
        "evaluate", LIBRARY / "manifest.json", "--questions", LIBRARY / "questions.json", *args
    )
    assert result.code == 2 and result.out == ""
    assert result.err.startswith(f"error: {code}: ") and result.err.count("\n") == 1


def test_the_report_is_one_offline_page_with_everything_escaped(tmp_path: Path) -> None:
    from explorer.view.evaluation_page import evaluation_page

    report = tmp_path / "report.html"
    result = run_cli(
        "evaluate", LIBRARY / "manifest.json", "--questions", LIBRARY / "questions.json",
        "--sweep", "heading-aware:100:400:100", "--report", report,
    )  # fmt: skip
    assert result.code == 0, result.err
    page = report.read_text("utf-8")
    lowered = page.lower()
    for outside in ("<script", "<link", "src=", "href=", "url(", "@import", "http:", "https:"):
        assert outside not in lowered
    assert "<svg" in page and "<polyline" in page  # error bars and the sweep's chart
    assert "Choice: heading-aware@" in page and "index_id" in page
    assert result.err.splitlines()[-1].startswith("decision: heading-aware@")
    evaluation = json.loads(
        run_cli("evaluate", LIBRARY / "manifest.json", "--questions", LIBRARY / "questions.json",
                "--policy", "paragraph").out
    )  # fmt: skip
    evaluation["policies"][0]["name"] = "<img src=x onerror=alert(1)>"
    hostile = evaluation_page(evaluation)
    assert "<img" not in hostile and "&lt;img src=x onerror=alert(1)&gt;" in hostile


# --- the app's path: one question at a time, against a kept index -----------------------------


def test_a_kept_index_ranking_one_question_at_a_time_gives_evaluate_s_figures() -> None:
    from explorer.chunking.index import build_index
    from explorer.chunking.policies import make_config
    from explorer.retrieval.evaluate import (
        ColumnFigures,
        Measured,
        evaluate_chunks,
        measure_column,
    )
    from explorer.retrieval.questions import parse_questions, place_questions
    from explorer.retrieval.retrievers import BM25
    from explorer.sources.loading import DirectoryReader, load_documents
    from explorer.sources.manifest import parse_manifest

    manifest = MARKDOWN_DOCS / "manifest.json"
    load = load_documents(parse_manifest(manifest.read_bytes()), DirectoryReader(MARKDOWN_DOCS))
    texts = {d["source_id"]: d["text"] for d in load.documents}
    placed = place_questions(
        parse_questions((MARKDOWN_DOCS / "questions.json").read_bytes()), texts
    )
    chunks = build_index(load.documents, make_config("heading-aware", 400))["chunks"]
    index = BM25().index([c["text"] for c in chunks])
    asked = [q.question for q in placed]
    whole = BM25().ranking([c["text"] for c in chunks], asked).scores(0, len(asked))
    assert np.array_equal(index.ranking(asked).scores(0, len(asked)), whole)
    budget: Budget = {"size": 300, "unit": "tokens"}
    expected = evaluate_chunks(chunks, placed, BM25(), 100, budget=budget)
    figures, measured = ColumnFigures(chunks), cast(Measured, {})
    for count in range(1, len(placed) + 1):  # as a person adds them, one by one
        got = measure_column(chunks, placed[:count], lambda: index, figures, 100, budget, measured)
    assert got == expected and len(measured) == len(placed)


def test_the_sweeps_legend_fits_inside_its_chart(tmp_path: Path) -> None:
    """Each label of the sweep's chart ends inside the drawing (at most 7 px a character
    at its 11 px font): 'Hit rate' and 'Precision Ω' were cut at the right edge."""
    import re

    from explorer.view.evaluation_page import sweep_chart

    run = run_cli(
        "evaluate", LIBRARY / "manifest.json", "--questions", LIBRARY / "questions.json",
        "--sweep", "heading-aware:100:400:100", "--bootstrap", "0", "--out", tmp_path / "e.json",
    )  # fmt: skip
    assert run.code == 0, run.err
    evaluation = json.loads((tmp_path / "e.json").read_text("utf-8"))
    chart = sweep_chart(evaluation["policies"])
    width = float(re.search(r'<svg width="([\d.]+)"', chart).group(1))  # type: ignore[union-attr]
    labels = re.findall(r'<text x="([\d.]+)"[^>]*>([^<]*)</text>', chart)
    assert {"Recall", "Hit rate", "Precision Ω"} <= {text for _, text in labels}
    for x, text in labels:
        assert float(x) + 7 * len(text) <= width, text


def test_the_report_and_the_json_cannot_be_the_same_file(tmp_path: Path) -> None:
    """The page written second would replace the JSON: refused before any work."""
    same = tmp_path / "run.html"
    result = run_cli(
        "evaluate", LIBRARY / "manifest.json", "--questions", LIBRARY / "questions.json",
        "--out", same, "--report", tmp_path / "." / "run.html",
    )  # fmt: skip
    assert result.code == 2 and not same.exists()
    assert result.err.startswith("error: usage: ") and result.err.count("\n") == 1
