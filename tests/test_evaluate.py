"""Measure retrieval (explorer/evaluate.py): questions, metrics, retrievers, the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from explorer.chunking.policies import make_config
from explorer.errors import ErrorCode, ExplorerError
from explorer.retrieval.evaluate import EVALUATION, sweep_columns
from explorer.retrieval.metrics import score, union
from explorer.retrieval.questions import QuestionSet, new_question, parse_questions, place_questions
from explorer.sources.loading import DirectoryReader, LoadResult, load_documents
from explorer.sources.manifest import parse_manifest
from tests.conftest import ROOT, run_cli

LIBRARY = ROOT / "fixtures" / "library"
LIBRARY_MANIFEST = LIBRARY / "manifest.json"
LIBRARY_QUESTIONS = LIBRARY / "questions.json"
SCHEMAS = ROOT / "schemas"


def library() -> LoadResult:
    manifest = parse_manifest(LIBRARY_MANIFEST.read_bytes())
    return load_documents(manifest, DirectoryReader(LIBRARY))


def texts() -> dict[str, str]:
    return {d["source_id"]: d["text"] for d in library().documents}


def question_set(*questions: dict[str, Any]) -> QuestionSet:
    return QuestionSet.model_validate({"questions_version": 1, "questions": list(questions)})


def refused(code: ErrorCode) -> Any:
    return pytest.raises(ExplorerError, match=f"^{code.value}: ")


# --- metrics, against a character-by-character count -------------------------------


def characters(ranges: list[tuple[str, int, int]]) -> set[tuple[str, int]]:
    return {(source, i) for source, start, end in ranges for i in range(start, end)}


def brute_force(
    references: list[tuple[str, int, int]], retrieved: list[tuple[str, int, int]]
) -> tuple[float, float, float, bool]:
    """The definitions, spelled out over sets of (document, character) pairs."""
    wanted, found = characters(references), characters(retrieved)
    common = len(wanted & found)
    total = sum(end - start for _, start, end in retrieved)
    recall = common / len(wanted)
    precision = common / total if total else 0.0
    iou = common / (total + len(wanted - found))
    hit = any(characters([chunk]) >= wanted for chunk in retrieved)
    return recall, precision, iou, hit


def test_metrics_on_a_worked_example() -> None:
    # Answer: [10, 20) and [30, 40) of "a"; chunks [0, 25) and [20, 35) of "a", [10, 20) of "b".
    figures = score([("a", 10, 20), ("a", 30, 40)], [("a", 0, 25), ("a", 20, 35), ("b", 10, 20)])
    assert figures.recall == 15 / 20
    assert figures.precision == 15 / (25 + 15 + 10)  # every retrieved character counts
    assert figures.iou == 15 / (50 + 5)
    assert figures.hit is False


def test_hit_needs_one_chunk_holding_every_reference() -> None:
    assert score([("a", 10, 20), ("a", 30, 40)], [("a", 5, 45)]).hit
    assert not score([("a", 10, 20), ("a", 30, 40)], [("a", 5, 25), ("a", 25, 45)]).hit
    assert not score([("a", 10, 20)], [("b", 10, 20)]).hit  # another document's characters


def test_overlapping_chunks_count_twice_in_precision_only() -> None:
    figures = score([("a", 0, 10)], [("a", 0, 10), ("a", 0, 10)])
    assert (figures.recall, figures.precision, figures.iou) == (1.0, 0.5, 0.5)


def test_nothing_retrieved_scores_zero() -> None:
    figures = score([("a", 0, 10)], [])
    assert (figures.recall, figures.precision, figures.iou, figures.hit) == (0, 0, 0, False)


def test_union_merges_touching_and_overlapping_ranges_per_document() -> None:
    merged = union([("b", 0, 5), ("a", 5, 9), ("a", 0, 5), ("a", 20, 30), ("a", 25, 26)])
    assert merged == [("a", 0, 9), ("a", 20, 30), ("b", 0, 5)]


ranges = st.lists(
    st.tuples(st.sampled_from("ab"), st.integers(0, 60), st.integers(1, 30)).map(
        lambda t: (t[0], t[1], t[1] + t[2])
    ),
    max_size=6,
)


@given(ranges.filter(bool), ranges)
def test_metrics_agree_with_the_definitions(
    references: list[tuple[str, int, int]], retrieved: list[tuple[str, int, int]]
) -> None:
    figures = score(references, retrieved)
    recall, precision, iou, hit = brute_force(references, retrieved)
    assert figures.recall == pytest.approx(recall)
    assert figures.precision == pytest.approx(precision)
    assert figures.iou == pytest.approx(iou)
    assert figures.hit == hit


# --- questions ---------------------------------------------------------------------


def test_library_questions_parse_and_place() -> None:
    questions = parse_questions(LIBRARY_QUESTIONS.read_bytes())
    placed = place_questions(questions, texts())
    assert len(placed) == 5
    shipping = texts()["shipping"]
    express = next(q for q in placed if q.id == "express-weight")
    assert [shipping[s:e] for _, s, e in express.references] == [
        "| Europe | 9.50 | 24.00 |",
        "Express rates apply only to parcels under 5 kg",
    ]


def test_questions_file_matches_its_schema() -> None:
    schema = json.loads((SCHEMAS / "questions.schema.json").read_text("utf-8"))
    jsonschema.validate(json.loads(LIBRARY_QUESTIONS.read_text("utf-8")), schema)
    for name in ("markdown-docs",):
        path = ROOT / "fixtures" / name / "questions.json"
        if path.exists():
            jsonschema.validate(json.loads(path.read_text("utf-8")), schema)


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        (b"", "empty"),
        (b'{"questions_version": 2, "questions": []}', "questions_version"),
        (b'{"questions_version": 1, "questions": [], "extra": 1}', "unknown key"),
        (
            b'{"questions_version": 1, "questions": [{"id": "q", "question": "?", '
            b'"source_id": "s", "references": [{"quote": "x", "start": 0}]}]}',
            "both start and end, or neither",
        ),
        (
            b'{"questions_version": 1, "questions": [{"id": "q", "question": "?", '
            b'"source_id": "s", "references": [{"start": 0}]}]}',
            "both start and end",
        ),
        (
            b'{"questions_version": 1, "questions": [{"id": "q", "question": "?", '
            b'"source_id": "s", "references": []}]}',
            "references",
        ),
        (
            b'{"questions_version": 1, "questions": ['
            b'{"id": "q", "question": "?", "source_id": "s", "references": [{"quote": "x"}]},'
            b'{"id": "q", "question": "!", "source_id": "s", "references": [{"quote": "y"}]}]}',
            "duplicate question id",
        ),
        (
            b'{"questions_version": 1, "questions": [{"id": "q", "question": "?", '
            b'"source_id": "s", "references": [{"quote": "x"}], "words": "a b"}]}',
            "unknown key",
        ),
    ],
)
def test_a_bad_questions_file_is_refused(raw: bytes, says: str) -> None:
    with refused(ErrorCode.INVALID_QUESTIONS) as caught:
        parse_questions(raw)
    assert says in caught.value.detail


def one(reference: dict[str, Any], source_id: str = "shipping") -> QuestionSet:
    return question_set(
        {"id": "q", "question": "?", "source_id": source_id, "references": [reference]}
    )


def test_references_are_placed_like_span_checks() -> None:
    with refused(ErrorCode.SPAN_QUOTE_NOT_FOUND) as caught:
        place_questions(one({"quote": "free shipping"}), texts())
    assert "question 'q', reference 1" in caught.value.detail
    with refused(ErrorCode.SPAN_QUOTE_AMBIGUOUS):
        place_questions(one({"quote": "Express"}), texts())
    with refused(ErrorCode.SPAN_OUT_OF_RANGE):
        place_questions(one({"start": 10, "end": 10_000}), texts())
    with refused(ErrorCode.INVALID_QUESTIONS) as caught:
        place_questions(one({"quote": "x"}, source_id="nowhere"), texts())
    assert "'nowhere'" in caught.value.detail
    placed = place_questions(one({"start": 2, "end": 10}), texts())
    assert placed[0].references == (("shipping", 2, 10),)


def test_a_typed_question_is_placed_and_named_by_its_content() -> None:
    text = texts()["shipping"]
    made = new_question("How long does express take?", "shipping", ["one to two"], text)
    again = new_question("How long does express take?", "shipping", ["one to two"], text)
    assert made == again and made.id.startswith("q-") and len(made.id) == 14
    assert made.references[0].quote == "one to two"
    taken = new_question("How long does express take?", "shipping", ["one to two"], text, [made.id])
    assert taken.id == made.id + "-2"
    with refused(ErrorCode.SPAN_QUOTE_AMBIGUOUS):
        new_question("Express?", "shipping", ["Express"], text)
    with refused(ErrorCode.SPAN_QUOTE_NOT_FOUND):
        new_question("Express?", "shipping", ["overnight"], text)
    with refused(ErrorCode.INVALID_QUESTIONS):
        new_question("", "shipping", ["one to two"], text)


# --- evaluation over the library fixture ---------------------------------------------


def evaluated(*args: str) -> dict[str, Any]:
    result = run_cli("evaluate", LIBRARY_MANIFEST, "--questions", LIBRARY_QUESTIONS, *args)
    assert result.code == 0, result.err
    data: dict[str, Any] = result.json()
    return data


def recompute_every_figure(evaluation: dict[str, Any]) -> None:
    """From the retrieved ranges alone, and the chunks of an index rebuilt here."""
    from explorer.chunking.index import build_index

    load = library()
    placed = {
        q.id: q for q in place_questions(parse_questions(LIBRARY_QUESTIONS.read_bytes()), texts())
    }
    for policy in evaluation["policies"]:
        config = make_config(policy["config"]["strategy"], policy["config"]["max_chars"])
        index = build_index(load.documents, config)
        assert policy["index_id"] == index["index_id"]
        chunks = {c["chunk_id"]: c for c in index["chunks"]}
        sizes = [c["end"] - c["start"] for c in index["chunks"]]
        summary = policy["summary"]
        assert summary["chunk_count"] == len(sizes)
        assert summary["mean_chunk_chars"] == pytest.approx(sum(sizes) / len(sizes), abs=1e-6)
        figures = []
        for result in policy["questions"]:
            retrieved = result["retrieved"]
            assert [r["rank"] for r in retrieved] == list(range(1, evaluation["k"] + 1))
            assert [r["score"] for r in retrieved] == sorted(
                (r["score"] for r in retrieved), reverse=True
            )
            for r in retrieved:
                chunk = chunks[r["chunk_id"]]
                assert (r["source_id"], r["start"], r["end"]) == (
                    chunk["source_id"],
                    chunk["start"],
                    chunk["end"],
                )
            question = placed[result["id"]]
            reference = [
                (question.source_id, s, e)
                for s, e in ((x["start"], x["end"]) for x in result["references"])
            ]
            assert tuple(reference) == question.references
            got = brute_force(
                reference, [(r["source_id"], r["start"], r["end"]) for r in retrieved]
            )
            assert result["recall"] == pytest.approx(got[0], abs=1e-6)
            assert result["precision"] == pytest.approx(got[1], abs=1e-6)
            assert result["iou"] == pytest.approx(got[2], abs=1e-6)
            assert result["hit"] == got[3]
            figures.append(got)
        for position, key in enumerate(("recall", "precision", "iou", "hit")):
            mean = sum(float(f[position]) for f in figures) / len(figures)
            assert summary[key] == pytest.approx(mean, abs=1e-5)


@pytest.mark.parametrize("retriever", ["bm25", "embedding", "hybrid"])
def test_every_figure_recomputes_from_the_retrieved_ranges(retriever: str) -> None:
    evaluation = evaluated("--retriever", retriever, "--k", "3")
    assert evaluation["retriever"] == retriever and evaluation["k"] == 3
    assert [p["name"] for p in evaluation["policies"]] == [
        "fixed-char",
        "paragraph",
        "heading-aware",
    ]
    EVALUATION.validate_python(evaluation)
    schema = json.loads((SCHEMAS / "evaluation.schema.json").read_text("utf-8"))
    jsonschema.validate(evaluation, schema)
    recompute_every_figure(evaluation)


def test_heading_aware_keeps_every_library_answer_whole() -> None:
    summaries = {p["name"]: p["summary"] for p in evaluated()["policies"]}
    assert summaries["heading-aware"]["hit"] == 1.0
    assert summaries["fixed-char"]["hit"] == 0.0


@pytest.mark.parametrize(
    "sentence",
    [
        "Standard delivery takes three to five working days.",
        "Return shipping is free for defective items.",
        "Express rates apply only to parcels under 5 kg; heavier parcels ship standard.",
    ],
)
@pytest.mark.parametrize("policy", ["fixed-char", "paragraph", "heading-aware"])
def test_a_sentence_of_a_chunk_retrieves_that_chunk_first_under_bm25(
    sentence: str, policy: str
) -> None:
    from explorer.chunking.index import build_index
    from explorer.retrieval.retrievers import BM25, top_k

    chunks = build_index(library().documents, make_config(policy))["chunks"]
    owner = [i for i, c in enumerate(chunks) if sentence in c["text"]]
    if not owner:  # fixed-char cut the sentence: ask with the part the first chunk holds
        first = next(i for i, c in enumerate(chunks) if sentence[:20] in c["text"])
        text = chunks[first]["text"]
        sentence = text[text.index(sentence[:20]) :]
        owner = [first]
    scores = BM25().ranking([c["text"] for c in chunks], [sentence]).scores(0, 99)
    assert top_k(scores[0], 1) == owner[:1]


def test_ties_break_by_chunk_order() -> None:
    from explorer.retrieval.retrievers import BM25, top_k

    chunks = ["alpha beta", "gamma delta", "alpha beta", "epsilon", "alpha beta"]
    scores = BM25().ranking(chunks, ["alpha", "nothing matches"]).scores(0, 99)
    assert top_k(scores[0], 3) == [0, 2, 4]
    assert top_k(scores[1], 3) == [0, 1, 2]


def test_an_exact_duplicate_document_ranks_after_the_first_by_source_id() -> None:
    evaluation = evaluated("--policy", "heading-aware", "--k", "2")
    warranty = next(q for q in evaluation["policies"][0]["questions"] if q["id"] == "warranty-void")
    first, second = warranty["retrieved"]
    assert first["score"] == second["score"]
    assert (first["source_id"], second["source_id"]) == ("warranty", "warranty-copy")


def test_the_same_run_gives_the_same_file() -> None:
    assert evaluated("--retriever", "hybrid") == evaluated("--retriever", "hybrid")


# --- the command line ---------------------------------------------------------------


def test_policies_and_sizes_are_named_as_compare_names_them(tmp_path: Path) -> None:
    out = tmp_path / "evaluation.json"
    result = run_cli(
        "evaluate",
        LIBRARY_MANIFEST,
        "--questions",
        LIBRARY_QUESTIONS,
        "--policy",
        "heading-aware",
        "--max-chars",
        "100",
        "--policy",
        "heading-aware",
        "--max-chars",
        "400",
        "--policy",
        "paragraph",
        "--out",
        out,
    )
    assert result.code == 0, result.err
    evaluation = json.loads(out.read_text("utf-8"))
    assert [p["name"] for p in evaluation["policies"]] == [
        "heading-aware@100",
        "heading-aware@400",
        "paragraph",
    ]
    assert [p["config"]["max_chars"] for p in evaluation["policies"]] == [100, 400, None]
    assert result.out.splitlines()[0].split()[:3] == ["policy", "size", "chunks"]  # the table


def test_sweep_prints_the_curve(tmp_path: Path) -> None:
    out = tmp_path / "sweep.json"
    result = run_cli(
        "evaluate",
        LIBRARY_MANIFEST,
        "--questions",
        LIBRARY_QUESTIONS,
        "--sweep",
        "heading-aware:100:1000:100",
        "--out",
        out,
    )
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert len(lines) == 11
    assert [line.split()[1] for line in lines[1:]] == [str(n) for n in range(100, 1001, 100)]
    evaluation = json.loads(out.read_text("utf-8"))
    assert [p["config"]["max_chars"] for p in evaluation["policies"]] == list(range(100, 1001, 100))


@pytest.mark.parametrize(
    "spec",
    [
        "heading-aware",
        "paragraph:1:2:1",
        "heading-aware:0:10:1",
        "heading-aware:1:100000:1",
        "heading-aware:10:1:1",
        "heading-aware:1:10:x",
        "nope:1:2:1",
    ],
)
def test_a_bad_sweep_is_a_usage_error(spec: str) -> None:
    with refused(ErrorCode.USAGE):
        sweep_columns(spec)


def test_command_line_errors_are_one_line() -> None:
    result = run_cli(
        "evaluate", LIBRARY_MANIFEST, "--questions", LIBRARY_MANIFEST
    )  # a manifest is not a questions file
    assert result.code == 2
    assert result.err.startswith("error: invalid_questions: ")
    result = run_cli("evaluate", LIBRARY_MANIFEST, "--questions", LIBRARY_QUESTIONS, "--k", "0")
    assert (result.code, result.err.split(":")[1].strip()) == (2, "usage")
    result = run_cli(
        "evaluate",
        LIBRARY_MANIFEST,
        "--questions",
        LIBRARY_QUESTIONS,
        "--sweep",
        "heading-aware:100:200:100",
        "--policy",
        "paragraph",
    )
    assert result.code == 2 and "not both" in result.err


NO_NETWORK = """
import socket, sys
def refuse(*args, **kwargs):
    raise OSError("network use in an offline test")
socket.socket.connect = refuse
socket.socket.connect_ex = refuse
socket.create_connection = refuse
socket.getaddrinfo = refuse
from explorer.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_the_embedding_retriever_needs_no_network(tmp_path: Path) -> None:
    environment = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "HF_HOME": str(tmp_path)}
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            NO_NETWORK,
            "evaluate",
            str(LIBRARY_MANIFEST),
            "--questions",
            str(LIBRARY_QUESTIONS),
            "--retriever",
            "embedding",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=environment,
        check=False,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    evaluation = json.loads(result.stdout)
    assert evaluation["retriever"] == "embedding"
    assert list(tmp_path.iterdir()) == []  # nothing downloaded or cached at home


# --- the real questions over FastAPI's and the Rust book's docs -----------------------

MARKDOWN_DOCS = ROOT / "fixtures" / "markdown-docs"


def test_the_real_questions_place_their_answers() -> None:
    manifest = parse_manifest((MARKDOWN_DOCS / "manifest.json").read_bytes())
    load = load_documents(manifest, DirectoryReader(MARKDOWN_DOCS))
    assert not load.failures
    questions = parse_questions((MARKDOWN_DOCS / "questions.json").read_bytes())
    placed = place_questions(questions, {d["source_id"]: d["text"] for d in load.documents})
    assert len(placed) >= 25
    assert {q.source_id.split("/")[0] for q in placed} == {"fastapi", "rust-book"}
    # About half have an answer beside a qualifier or across paragraphs: more than one
    # reference, or one that spans a blank line.
    texts = {d["source_id"]: d["text"] for d in load.documents}
    spread = [
        q
        for q in placed
        if len(q.references) > 1 or any("\n\n" in texts[s][a:b] for s, a, b in q.references)
    ]
    assert len(spread) >= len(placed) // 2 - 3


@pytest.mark.parametrize("retriever", ["bm25", "embedding"])
def test_the_real_questions_evaluate_within_ten_seconds(retriever: str, tmp_path: Path) -> None:
    import time

    out = tmp_path / "evaluation.json"
    began = time.perf_counter()
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "explorer",
            "evaluate",
            str(MARKDOWN_DOCS / "manifest.json"),
            "--questions",
            str(MARKDOWN_DOCS / "questions.json"),
            "--retriever",
            retriever,
            "--vector-cache",  # a fresh cache: every vector computed, and kept
            str(tmp_path / "vectors.db"),
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
        timeout=60,
    )
    elapsed = time.perf_counter() - began
    assert result.returncode == 0, result.stderr
    assert elapsed < 10, f"{retriever} took {elapsed:.1f} s"
    evaluation = json.loads(out.read_text("utf-8"))
    assert len(evaluation["policies"][0]["questions"]) >= 25


@pytest.mark.parametrize("policy", ["paragraph", "heading-aware"])
def test_on_real_docs_a_sentence_of_a_chunk_almost_always_retrieves_it_first(policy: str) -> None:
    """BM25 guarantees nothing for one chunk (a shorter chunk with the same rare words
    can outscore it), but over ~800 chunks of real prose it holds nearly always."""
    import re

    from explorer.chunking.index import build_index
    from explorer.retrieval.retrievers import BM25, top_k

    manifest = parse_manifest((MARKDOWN_DOCS / "manifest.json").read_bytes())
    load = load_documents(manifest, DirectoryReader(MARKDOWN_DOCS))
    texts = [
        c["text"].replace("\n", " ")
        for c in build_index(load.documents, make_config(policy))["chunks"]
    ]
    asked, owners = [], []
    for position, text in enumerate(texts):
        sentences = [s for s in re.split(r"(?<=[.!?])\s+", text) if len(s.split()) >= 8]
        if sentences and sum(sentences[0] in other for other in texts) == 1:
            asked.append(sentences[0])
            owners.append(position)
    scores = BM25().ranking(texts, asked).scores(0, len(asked))
    first = sum(top_k(row, 1) == [owner] for row, owner in zip(scores, owners, strict=True))
    assert len(asked) > 700
    assert first / len(asked) >= 0.97
