"""Judging chunkings with the user's own stack (issue 22): their embedder and its vector
cache, their chunk files, documents without a leading heading, one fusion, and ranking
in bounded memory."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import tracemalloc
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import pytest

from explorer.chunking.index import ChunkRecord
from explorer.limits import Limits
from explorer.retrieval.evaluate import METRICS, evaluate_chunks
from explorer.retrieval.questions import PlacedQuestion
from explorer.retrieval.retrievers import (
    BM25,
    FUSION_DEPTH,
    RRF_K,
    Embedding,
    Hybrid,
    best_chunks,
    fused,
)
from explorer.retrieval.vectors import VECTORS_TABLE
from tests import embedders
from tests.conftest import ROOT, ManifestBuilder, run_cli

COUNTING = "tests.embedders:counting"
LIBRARY = ROOT / "fixtures" / "library"
CHUNK_FILE = ROOT / "fixtures" / "chunk-files" / "llamaindex-library.json"
SCHEMA = ROOT / "schemas" / "evaluation.schema.json"

PLAIN = {
    "refunds.md": (
        b"Customers may request a refund within 30 days of delivery.\n\n"
        b"Refunds are paid to the original card once the item is inspected.\n\n"
        b"Gift cards are never refunded in cash.\n"
    ),
    "shipping.md": (
        b"Standard shipping takes five working days.\n\n"
        b"Express parcels arrive the next day when ordered before noon.\n"
    ),
}
QUESTIONS: dict[str, Any] = {
    "questions_version": 1,
    "questions": [
        {
            "id": "window",
            "question": "How long can customers ask for a refund?",
            "source_id": "refunds",
            "references": [{"quote": "within 30 days of delivery"}],
        },
        {
            "id": "express",
            "question": "When do express parcels arrive?",
            "source_id": "shipping",
            "references": [{"quote": "Express parcels arrive the next day"}],
        },
    ],
}


@pytest.fixture(autouse=True)
def _fresh_record() -> None:
    embedders.EMBEDDED.clear()


def plain_run(make_manifest: ManifestBuilder, tmp_path: Path) -> tuple[Path, Path]:
    manifest = make_manifest(PLAIN)
    questions = tmp_path / "questions.json"
    questions.write_text(json.dumps(QUESTIONS))
    return manifest, questions


def evaluate_cli(manifest: Path, questions: Path, *extra: str | Path) -> Any:
    return run_cli("evaluate", manifest, "--questions", questions, *extra)


# --- your embedder, through the vector cache ----------------------------------------------


def test_a_plugged_in_embedder_is_cached_and_a_second_run_embeds_nothing(
    make_manifest: ManifestBuilder, tmp_path: Path
) -> None:
    manifest, questions = plain_run(make_manifest, tmp_path)
    cache = tmp_path / "vectors.db"
    args = ("--policy", "paragraph", "--grammar", "markdown", "--retriever", "embedding")
    options = (*args, "--embedder", COUNTING, "--vector-cache", cache)
    first = evaluate_cli(manifest, questions, *options)
    assert first.code == 0, first.err
    computed = len(embedders.EMBEDDED)
    assert computed == len(set(embedders.EMBEDDED)) > 0  # each text once
    assert f"vectors: {computed} computed, 0 reused (embedder 'test-hash/1'" in first.err
    embedders.EMBEDDED.clear()
    second = evaluate_cli(manifest, questions, *options)
    assert second.code == 0, second.err
    assert embedders.EMBEDDED == []
    assert f"vectors: 0 computed, {computed} reused" in second.err
    assert second.out == first.out  # the same figures from the cached vectors
    rows = sqlite3.connect(cache).execute("SELECT DISTINCT embedder FROM vectors").fetchall()
    assert rows == [("test-hash/1",)]


def test_a_sweep_revisiting_a_size_embeds_no_chunk_again(
    make_manifest: ManifestBuilder, tmp_path: Path
) -> None:
    manifest, questions = plain_run(make_manifest, tmp_path)
    cache = tmp_path / "vectors.db"
    options = ("--embedder", COUNTING, "--vector-cache", cache, "--retriever", "hybrid")
    sweep = ("--sweep", "heading-aware:40:80:20", "--grammar", "markdown")
    first = evaluate_cli(manifest, questions, *sweep, *options)
    assert first.code == 0, first.err
    assert first.out.count("heading-aware@") == 3  # the curve, measured without headings
    embedded_first = set(embedders.EMBEDDED)
    embedders.EMBEDDED.clear()
    wider = ("--sweep", "heading-aware:40:100:20", "--grammar", "markdown")
    again = evaluate_cli(manifest, questions, *wider, *options)
    assert again.code == 0, again.err
    assert not embedded_first & set(embedders.EMBEDDED)  # sizes 40 to 80: nothing again
    revisited = evaluate_cli(manifest, questions, *sweep, *options)
    assert revisited.code == 0 and "vectors: 0 computed" in revisited.err
    # under grammar v1 (the default) a sweep reads none of these texts: it says so, and
    # measures nothing
    v1 = evaluate_cli(manifest, questions, "--sweep", "heading-aware:40:80:20", *options)
    assert v1.code == 0, v1.err
    assert "note: heading-aware@40: heading_required: grammar v1 cuts only" in v1.err
    rows = v1.out.splitlines()[1:]
    assert len(rows) == 3 and all("not measured: heading_required: " in row for row in rows)
    both = evaluate_cli(manifest, questions, *sweep, "--policy", "paragraph")
    assert both.err.startswith("error: usage: --sweep heading-aware with --policy paragraph")
    assert "give --sweep or other --policy columns, not both" in both.err


def test_the_default_cache_is_in_the_working_directory(
    make_manifest: ManifestBuilder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    manifest, questions = plain_run(make_manifest, tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    args = ("--policy", "paragraph", "--grammar", "markdown", "--retriever", "embedding")
    result = evaluate_cli(manifest, questions, *args, "--embedder", COUNTING)
    assert result.code == 0, result.err
    assert (work / ".explorer" / "vectors.db").is_file()
    embedders.EMBEDDED.clear()
    result = evaluate_cli(
        manifest, questions, *args, "--embedder", COUNTING, "--vector-cache", "none"
    )
    assert result.code == 0 and embedders.EMBEDDED  # no cache: embedded again
    assert "cache none" in result.err


@pytest.mark.parametrize(
    ("embedder", "said"),
    [
        ("tests.embedders:wrong_shape", "expected (1, 32)"),
        ("tests.embedders:failing_after_2", "quota exceeded"),
    ],
)
def test_a_failing_embedder_names_the_column_and_keeps_what_it_embedded(
    make_manifest: ManifestBuilder, tmp_path: Path, embedder: str, said: str
) -> None:
    manifest, questions = plain_run(make_manifest, tmp_path)
    cache = tmp_path / "vectors.db"
    args = ("--policy", "paragraph", "--grammar", "markdown", "--retriever", "hybrid")
    result = evaluate_cli(
        manifest, questions, *args, "--embedder", embedder, "--vector-cache", cache
    )
    assert result.code == 2 and "Traceback" not in result.err
    last = result.err.strip().splitlines()[-1]
    assert last.startswith("error: embedding_failed: column 'paragraph': ") and said in last
    kept = sqlite3.connect(cache).execute("SELECT count(*) FROM vectors").fetchone()[0]
    assert kept == (2 if "failing" in embedder else 0)
    if "failing" in embedder:  # the retry embeds only what is missing
        embedders.EMBEDDED.clear()
        retry = evaluate_cli(
            manifest, questions, *args, "--embedder", COUNTING, "--vector-cache", cache
        )
        assert retry.code == 0, retry.err
        assert "2 reused" in retry.err


def test_embedder_none_refuses_the_retrievers_that_embed(
    make_manifest: ManifestBuilder, tmp_path: Path
) -> None:
    manifest, questions = plain_run(make_manifest, tmp_path)
    args = ("--policy", "paragraph", "--grammar", "markdown", "--embedder", "none")
    for retriever in ("embedding", "hybrid"):
        result = evaluate_cli(manifest, questions, *args, "--retriever", retriever)
        assert result.code == 2 and result.err.startswith("error: usage: ")
    assert evaluate_cli(manifest, questions, *args).code == 0  # bm25 embeds nothing
    bad = evaluate_cli(
        manifest, questions, *args[:4], "--embedder", "no.such:thing", "--retriever", "embedding"
    )
    assert bad.err.startswith("error: invalid_embedder: ")


# --- your chunks, and documents without a leading heading -------------------------------


def test_markdown_library_and_imported_columns_side_by_side_without_headings(
    make_manifest: ManifestBuilder, tmp_path: Path
) -> None:
    manifest, questions = plain_run(make_manifest, tmp_path)
    chunks = tmp_path / "mine.jsonl"
    lines = [
        {"source_id": source_id, "text": paragraph}
        for name, data in PLAIN.items()
        for source_id in [Path(name).stem]
        for paragraph in data.decode().split("\n\n")
    ]
    chunks.write_text("\n".join(json.dumps(line) for line in lines))
    result = evaluate_cli(
        manifest,
        questions,
        "--policy", "heading-aware", "--grammar", "markdown",
        "--policy", "langchain-recursive", "--max-chars", "80",
        "--policy", "paragraph",
        "--chunks", f"mine={chunks}",
        "--out", tmp_path / "evaluation.json",
    )  # fmt: skip
    assert result.code == 0, result.err  # paragraph under grammar v1 reads none of them
    v1 = json.loads((tmp_path / "evaluation.json").read_text())["policies"][2]
    assert (v1["name"], v1["index_id"], v1["questions"]) == ("paragraph", "", [])
    assert v1["summary"]["measured"] is False and v1["summary"]["recall"] is None
    assert "leaves out 2 of 2 documents ('refunds', 'shipping')" in v1["notes"][0]
    assert "note: paragraph: heading_required: " in result.err
    compared = run_cli("compare", manifest, "--policy", "paragraph", "--chunks", f"mine={chunks}")
    assert compared.err.startswith("error: heading_required: the column 'paragraph' ")
    result = evaluate_cli(
        manifest,
        questions,
        "--policy", "heading-aware", "--grammar", "markdown",
        "--policy", "langchain-recursive", "--max-chars", "80",
        "--chunks", f"mine={chunks}",
        "--out", tmp_path / "evaluation.json",
    )  # fmt: skip
    assert result.code == 0, result.err
    evaluation = json.loads((tmp_path / "evaluation.json").read_text())
    names = [p["name"] for p in evaluation["policies"]]
    assert names == ["heading-aware", "langchain-recursive", "mine"]
    mine = evaluation["policies"][2]
    assert mine["summary"]["chunk_count"] == len(lines)
    assert mine["summary"]["hit"] == 1.0
    assert "mine" in result.out  # the curve's row


def test_a_column_that_measured_nothing_says_so_never_zeros(
    make_manifest: ManifestBuilder, tmp_path: Path
) -> None:
    # the README's pattern: --grammar after the last --policy is that column's only
    manifest, questions = plain_run(make_manifest, tmp_path)
    out = tmp_path / "evaluation.json"
    columns = ("--policy", "fixed-char", "--max-chars", "80", "--policy", "paragraph",
               "--policy", "heading-aware", "--max-chars", "900")  # fmt: skip
    report = tmp_path / "report.html"
    result = evaluate_cli(
        manifest, questions, *columns, "--grammar", "markdown", "--out", out, "--report", report
    )
    assert result.code == 0, result.err
    evaluation = json.loads(out.read_text())
    page = report.read_text("utf-8")
    for name in ("fixed-char", "paragraph"):  # the report's table and its questions' part
        assert page.count(f"<td>{name}</td><td colspan=") == 1
        assert f"<p>{name}: not measured; heading_required: grammar v1 cuts only " in page
    jsonschema.validate(evaluation, json.loads(SCHEMA.read_text()))
    fixed, paragraph, heading = evaluation["policies"]
    for column in (fixed, paragraph):
        nothing = ("retrieved_tokens", "chunk_count", "mean_chunk_chars", "std", "ci")
        assert column["summary"] == {"measured": False} | dict.fromkeys((*METRICS, *nothing))
        assert (column["index_id"], column["questions"]) == ("", [])
        assert column["notes"][0].startswith("heading_required: grammar v1 cuts only ")
    assert heading["summary"]["measured"] is True and heading["summary"]["recall"] == 1.0
    assert heading["summary"]["ci"] is not None  # the one measured column has intervals
    # no verdict against a column not measured; it is never chosen
    assert evaluation["comparisons"] == []
    assert evaluation["decision"]["best"] == ["heading-aware"]
    assert evaluation["decision"]["choice"] == "heading-aware"
    table = dict(line.split(maxsplit=1) for line in result.out.splitlines()[1:])
    assert table["fixed-char"].startswith("80  not measured: heading_required: grammar v1 ")
    assert table["paragraph"].startswith("-  not measured: heading_required: ")
    assert "0.000" not in result.out and "not measured" not in table["heading-aware"]
    # a --grammar before the first --policy is every column's (a library's has none)
    shared = evaluate_cli(
        manifest, questions, "--grammar", "markdown", *columns,
        "--policy", "langchain-recursive", "--max-chars", "80", "--out", out,
    )  # fmt: skip
    assert shared.code == 0, shared.err
    policies = json.loads(out.read_text())["policies"]
    assert [p["config"].get("grammar") for p in policies] == ["markdown"] * 3 + [None]
    assert all(p["summary"]["measured"] and "notes" not in p for p in policies)
    # a column may still name its own
    own = evaluate_cli(
        manifest, questions, "--grammar", "markdown", "--policy", "paragraph", "--grammar", "v1"
    )
    assert own.code == 0, own.err
    assert json.loads(own.out)["policies"][0]["summary"]["measured"] is False
    twice = evaluate_cli(manifest, questions, "--grammar", "markdown", "--grammar", "v1")
    assert twice.err.startswith("error: usage: --grammar is given twice before the first")


def test_a_grammar_before_the_first_policy_names_compare_and_index_columns(
    make_manifest: ManifestBuilder,
) -> None:
    manifest = make_manifest(PLAIN)
    compared = run_cli("compare", manifest, "--grammar", "markdown")  # every policy
    assert compared.code == 0, compared.err
    assert {p["config"].get("grammar") for p in compared.json()["policies"]} == {"markdown"}
    indexed = run_cli("index", manifest, "--grammar", "markdown", "--policy", "paragraph")
    assert indexed.code == 0, indexed.err
    assert indexed.json()["config"]["grammar"] == "markdown"


def test_a_grammar_v1_column_leaves_out_only_its_documents_and_says_so(
    make_manifest: ManifestBuilder, tmp_path: Path
) -> None:
    manifest = make_manifest({**PLAIN, "titled.md": b"# Title\n\nA headed page.\n"})
    questions = tmp_path / "questions.json"
    questions.write_text(json.dumps(QUESTIONS))
    result = evaluate_cli(
        manifest,
        questions,
        "--policy",
        "paragraph",
        "--policy",
        "langchain-recursive",
        "--max-chars",
        "80",
    )
    assert result.code == 0, result.err
    evaluation = json.loads(result.out)
    paragraph, library = evaluation["policies"]
    assert paragraph["notes"][0].startswith("heading_required: grammar v1 cuts only a text ")
    assert "leaves out 2 of 3 documents ('refunds', 'shipping')" in paragraph["notes"][0]
    assert paragraph["summary"]["recall"] == 0.0  # its own verdicts only
    assert "notes" not in library and library["summary"]["recall"] == 1.0
    assert "note: paragraph: heading_required: " in result.err


def test_chunks_in_evaluate_are_refused_as_compare_refuses_them(
    make_manifest: ManifestBuilder, tmp_path: Path
) -> None:
    manifest, _ = plain_run(make_manifest, tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    for command in ("compare", "evaluate"):
        extra = ("--questions", tmp_path / "questions.json") if command == "evaluate" else ()
        result = run_cli(command, manifest, *extra, "--chunks", f"mine={bad}")
        assert result.code == 2 and result.err.startswith("error: invalid_chunk_file: ")
        usage = run_cli(command, manifest, *extra, "--chunks", "nofile")
        assert usage.err.startswith("error: usage: --chunks takes NAME=FILE")


def test_the_library_fixture_with_its_llamaindex_chunks(tmp_path: Path) -> None:
    result = run_cli(
        "evaluate", LIBRARY / "manifest.json", "--questions", LIBRARY / "questions.json",
        "--policy", "heading-aware", "--chunks", f"llamaindex={CHUNK_FILE}",
    )  # fmt: skip
    assert result.code == 0, result.err
    names = [p["name"] for p in json.loads(result.out)["policies"]]
    assert names == ["heading-aware", "llamaindex"]


# --- one fusion -------------------------------------------------------------------------


def test_a_key_a_ranking_does_not_hold_gets_nothing_from_it() -> None:
    ranked = fused([[3, 1], [1, 2]])
    assert ranked[0] == (1, 1 / (RRF_K + 2) + 1 / (RRF_K + 1))
    assert dict(ranked)[2] == 1 / (RRF_K + 2)
    assert dict(ranked)[3] == 1 / (RRF_K + 1)
    assert [key for key, _ in fused([[5], [4]])] == [4, 5]  # ties by key


def _paraphrase_embed(texts: Any) -> Any:
    """Vectors that know 'remit' means 'refund': a meaning BM25 cannot see."""
    meaning = {"refund": 0, "remit": 0, "ship": 1, "parcel": 1, "card": 2, "weather": 3}
    rows = np.zeros((len(texts), 4), dtype=np.float32)
    for row, text in enumerate(texts):
        for word, axis in meaning.items():
            if word in text.lower():
                rows[row, axis] += 1.0
        rows[row, 3] += 0.01
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_hybrid_finds_a_paraphrase_whenever_the_embedding_alone_does() -> None:
    chunks = [f"Note {n} about the weather today." for n in range(30)]
    chunks[17] = "We refund the full price."
    chunks[4] = "Parcels ship on Mondays."
    questions = ["Will you remit my money?", "When do parcels leave?"]
    embedding = Embedding(_paraphrase_embed).ranking(chunks, questions).best(0, 2, 3)
    hybrid = Hybrid(_paraphrase_embed).ranking(chunks, questions).best(0, 2, 3)
    bm25 = BM25().ranking(chunks, questions).best(0, 2, 3)
    assert [best[0][0] for best in embedding] == [17, 4]
    assert bm25[0][0][1] == 0.0  # BM25 matches nothing for the paraphrase
    # the old fusion ranked every chunk under BM25 by chunk order, pushing 17 out
    assert [best[0][0] for best in hybrid] == [17, 4]
    assert FUSION_DEPTH == 200


# --- bounded memory ---------------------------------------------------------------------


def _chunk(n: int) -> ChunkRecord:
    text = f"chunk {n} word{n % 97} other{n % 89}"
    return {  # type: ignore[typeddict-item]
        "chunk_id": f"{n:064x}",
        "source_id": "doc",
        "start": n * 40,
        "end": n * 40 + 30,
        "text": text,
    }


def _peak(chunks: int, questions: int, limits: Limits) -> int:
    records = [_chunk(n) for n in range(chunks)]
    placed = [
        PlacedQuestion(f"q{n}", f"word{n % 97} other{n % 89}", "doc", (("doc", 0, 10),))
        for n in range(questions)
    ]
    tracemalloc.start()
    try:
        evaluate_chunks(records, placed, BM25(), 5, limits)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_scores_are_held_a_block_of_questions_at_a_time() -> None:
    limits = Limits(scores_held=20_000)
    small = _peak(2_000, 200, limits)
    large = _peak(2_000, 2_000, limits)  # ten times the questions, ten times the product
    product = 2_000 * 2_000 * 8
    assert large < product / 4  # the whole matrix would be 32 MB
    assert large < 3 * small + 4_000_000


def test_blocks_rank_as_the_whole_matrix_does() -> None:
    chunks = [f"alpha {n % 7} beta {n % 5}" for n in range(50)]
    questions = [f"alpha {n % 7}" for n in range(23)]
    ranking = BM25().ranking(chunks, questions)
    whole = ranking.best(0, 23, 4)
    blocked = list(best_chunks(ranking, 23, 50, 4, Limits(scores_held=120)))
    assert blocked == whole


def test_a_cache_that_is_not_one_is_an_io_error(
    make_manifest: ManifestBuilder, tmp_path: Path
) -> None:
    manifest, questions = plain_run(make_manifest, tmp_path)
    args = ("--policy", "paragraph", "--grammar", "markdown", "--retriever", "embedding")
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"not a database at all" * 100)
    foreign = tmp_path / "foreign.db"
    sqlite3.connect(foreign).execute("CREATE TABLE vectors (x)")
    for path in (garbage, foreign, tmp_path):  # a folder is not a file either
        result = evaluate_cli(
            manifest, questions, *args, "--embedder", COUNTING, "--vector-cache", path
        )
        assert result.code == 2 and "Traceback" not in result.err
        assert result.err.startswith("error: io_error: cannot use "), result.err


def sqlite_file(path: Path, *statements: str) -> Path:
    db = sqlite3.connect(path)
    for statement in statements:
        db.execute(statement)
    db.commit()
    db.close()
    return path


@pytest.mark.parametrize(
    "statements",
    [
        ("CREATE TABLE t(x)",),
        (
            "CREATE TABLE vectors (rowid INTEGER PRIMARY KEY, embedder TEXT NOT NULL, "
            "text_sha256 TEXT NOT NULL, vector BLOB NOT NULL, owner TEXT, "
            "UNIQUE (embedder, text_sha256))",
            "INSERT INTO vectors VALUES (1, 'x', 'y', x'00', 'someone else')",
        ),
        (
            "CREATE TABLE vectors (rowid INTEGER PRIMARY KEY, embedder TEXT NOT NULL, "
            "text_sha256 TEXT NOT NULL, vector BLOB NOT NULL, UNIQUE (embedder, text_sha256))",
            "CREATE TABLE t(x)",
        ),
        ("PRAGMA user_version = 7",),  # initialised by another program, no table yet
    ],
)
def test_another_programs_sqlite_file_is_refused_untouched(
    make_manifest: ManifestBuilder, tmp_path: Path, statements: tuple[str, ...]
) -> None:
    """docs/contract.md §10c: only a vector cache or a persistent index is one."""
    manifest, questions = plain_run(make_manifest, tmp_path)
    foreign = sqlite_file(tmp_path / "foreign.db", *statements)
    before = foreign.read_bytes()
    args = ("--policy", "paragraph", "--grammar", "markdown", "--retriever", "embedding")
    result = evaluate_cli(
        manifest, questions, *args, "--embedder", COUNTING, "--vector-cache", foreign
    )
    assert result.code == 2 and "Traceback" not in result.err
    assert result.err.startswith(f"error: io_error: cannot use {str(foreign)!r} "), result.err
    assert "not a vector cache" in result.err
    assert foreign.read_bytes() == before and embedders.EMBEDDED == []
    assert sorted(p.name for p in tmp_path.glob("foreign.db*")) == ["foreign.db"]


def test_a_cache_made_before_and_an_empty_file_are_caches(
    make_manifest: ManifestBuilder, tmp_path: Path
) -> None:
    manifest, questions = plain_run(make_manifest, tmp_path)
    args = ("--policy", "paragraph", "--grammar", "markdown", "--retriever", "embedding")
    made = sqlite_file(tmp_path / "made.db", VECTORS_TABLE)
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    for path in (made, empty):
        result = evaluate_cli(
            manifest, questions, *args, "--embedder", COUNTING, "--vector-cache", path
        )
        assert result.code == 0, result.err
        count = sqlite3.connect(path).execute("SELECT count(*) FROM vectors").fetchone()[0]
        assert count > 0


ANSWERED = QUESTIONS["questions"][0]["question"]


@pytest.mark.parametrize(
    "spoiled",
    [
        np.full(embedders.DIMENSIONS, np.nan, dtype="<f4").tobytes(),
        np.full(embedders.DIMENSIONS, np.inf, dtype="<f4").tobytes(),
        np.zeros(embedders.DIMENSIONS, dtype="<f4").tobytes(),
        np.full(embedders.DIMENSIONS, 3.0, dtype="<f4").tobytes(),  # not unit length
        b"\x00" * 12,  # another size
    ],
)
def test_an_unusable_cached_vector_is_computed_again_and_replaced(
    make_manifest: ManifestBuilder, tmp_path: Path, spoiled: bytes
) -> None:
    manifest, questions = plain_run(make_manifest, tmp_path)
    cache = tmp_path / "vectors.db"
    args = ("--policy", "paragraph", "--grammar", "markdown", "--retriever", "embedding")
    options = (*args, "--embedder", COUNTING, "--vector-cache", cache)
    first = evaluate_cli(manifest, questions, *options)
    assert first.code == 0, first.err
    assert json.loads(first.out)["policies"][0]["summary"]["recall"] == 1.0
    key = hashlib.sha256(ANSWERED.encode()).hexdigest()
    db = sqlite3.connect(cache, isolation_level=None)
    [(good,)] = db.execute("SELECT vector FROM vectors WHERE text_sha256 = ?", (key,))
    db.execute("UPDATE vectors SET vector = ? WHERE text_sha256 = ?", (spoiled, key))
    db.close()
    embedders.EMBEDDED.clear()
    again = evaluate_cli(manifest, questions, *options)
    assert again.code == 0, again.err
    assert again.out == first.out  # recall 1.0 still
    assert embedders.EMBEDDED == [ANSWERED]
    assert "vectors: 1 computed (1 replacing an unusable cached vector), " in again.err
    stored = sqlite3.connect(cache).execute(
        "SELECT vector FROM vectors WHERE text_sha256 = ?", (key,)
    )
    assert stored.fetchall() == [(good,)]


def test_ingest_records_a_document_its_grammar_cannot_cut_and_goes_on(
    make_manifest: ManifestBuilder, tmp_path: Path
) -> None:
    manifest = make_manifest({**PLAIN, "titled.md": b"# Title\n\nA headed page.\n"})
    db = tmp_path / "index.db"
    result = run_cli("ingest", manifest, "--db", db, "--embedder", "none", "--json")
    assert result.code == 0, result.err
    statuses = {s["source_id"]: s["status"] for s in json.loads(result.out)["documents"]}
    assert statuses == {
        "refunds": "heading_required",
        "shipping": "heading_required",
        "titled": "ok",
    }
    library = ("--policy", "langchain-recursive", "--embedder", "none", "--json")
    again = run_cli("ingest", manifest, "--db", db, *library)
    assert again.code == 0, again.err
    assert {s["status"] for s in json.loads(again.out)["documents"]} == {"ok"}


def test_evaluate_reuses_the_vectors_the_store_computed(
    make_manifest: ManifestBuilder, tmp_path: Path
) -> None:
    manifest, questions = plain_run(make_manifest, tmp_path)
    db = tmp_path / "index.db"
    column = ("--policy", "paragraph", "--grammar", "markdown")
    ingested = run_cli("ingest", manifest, "--db", db, *column, "--embedder", COUNTING)
    assert ingested.code == 0, ingested.err
    chunks = set(embedders.EMBEDDED)
    embedders.EMBEDDED.clear()
    result = evaluate_cli(
        manifest, questions, *column, "--retriever", "embedding",
        "--embedder", COUNTING, "--vector-cache", db,
    )  # fmt: skip
    assert result.code == 0, result.err
    assert set(embedders.EMBEDDED) == {q["question"] for q in QUESTIONS["questions"]}
    assert f"vectors: 2 computed, {len(chunks)} reused" in result.err
    again = run_cli("ingest", manifest, "--db", db, *column, "--embedder", COUNTING)
    assert again.code == 0 and "unchanged 2" in again.out  # the store still reads its index


def test_a_cosine_is_the_same_in_any_block() -> None:
    """Blocks of questions (and Ray's shards of chunks) score as the whole does, bit for
    bit: a BLAS product rounds differently for other matrix sizes."""
    import numpy as np

    from explorer.retrieval.retrievers import cosines

    rng = np.random.default_rng(7)
    asked = rng.standard_normal((37, 256)).astype(np.float32)
    vectors = rng.standard_normal((3001, 256)).astype(np.float32)
    whole = cosines(asked, vectors)
    assert np.array_equal(cosines(asked[5:12], vectors[100:2999]), whole[5:12, 100:2999])
    assert np.array_equal(cosines(asked[:1], vectors[:1]), whole[:1, :1])
