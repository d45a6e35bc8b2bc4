"""Questions you do not have yet (`questions draft`), and chunking_evaluation's
questions_df.csv read as a questions file."""

from __future__ import annotations

import csv
import io
import json
import time
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.chunking.index import build_index
from explorer.chunking.policies import make_config
from explorer.errors import ErrorCode, ExplorerError
from explorer.retrieval.drafting import boundary_passages, choose
from explorer.retrieval.questions import parse_questions, place_questions
from explorer.sources.loading import DirectoryReader, load_documents
from explorer.sources.manifest import parse_manifest
from tests.conftest import ROOT, run_cli

MARKDOWN_DOCS = ROOT / "fixtures" / "markdown-docs" / "manifest.json"
LIBRARY = ROOT / "fixtures" / "library"
SMALL = ("--policy", "heading-aware", "--max-tokens", "64", "--grammar", "markdown")


def loaded() -> dict[str, str]:
    manifest = parse_manifest(MARKDOWN_DOCS.read_bytes())
    documents = load_documents(manifest, DirectoryReader(MARKDOWN_DOCS.parent)).documents
    return {d["source_id"]: d["text"] for d in documents}


TEXTS = loaded()


@pytest.mark.parametrize(
    ("policy", "size", "overlap"),
    [
        ("heading-aware", 64, 0),
        ("fixed-char", 200, 0),
        ("fixed-char", 200, 50),
        ("paragraph", None, 0),
    ],
)
def test_every_passage_crosses_a_boundary_and_no_chunk_holds_it(
    policy: str, size: int | None, overlap: int
) -> None:
    config = make_config(policy, size, overlap=overlap, grammar="markdown")
    documents = [{"source_id": s, "text": t} for s, t in TEXTS.items()]
    manifest = parse_manifest(MARKDOWN_DOCS.read_bytes())
    records = load_documents(manifest, DirectoryReader(MARKDOWN_DOCS.parent)).documents
    chunks = build_index(records, config)["chunks"]
    passages = boundary_passages(TEXTS, chunks)
    assert len(passages) > 20, len(documents)
    for passage in passages:
        text = TEXTS[passage.source_id]
        assert text[passage.start : passage.end] == passage.text
        assert passage.start < passage.boundary < passage.end
        assert passage.text == passage.text.strip() and passage.text
        holders = [
            c
            for c in chunks
            if c["source_id"] == passage.source_id
            and c["start"] <= passage.start
            and passage.end <= c["end"]
        ]
        assert holders == [], passage


def test_a_passage_is_the_sentence_before_a_cut_and_the_one_after() -> None:
    text = (
        "# Rules\n\nFirst sentence here. Approve the refund only after checking the current "
        "revision. Then tell the customer. Last words.\n"
    )
    cut = text.index("revision.") + len("revision.")
    chunks: list[Any] = [
        {"source_id": "d", "order": 0, "section_id": "s", "start": 9, "end": cut},
        {"source_id": "d", "order": 1, "section_id": "s", "start": cut + 1, "end": len(text) - 1},
    ]
    [passage] = boundary_passages({"d": text}, chunks)
    assert passage.text == (
        "Approve the refund only after checking the current revision. Then tell the customer."
    )
    chunks[1]["section_id"] = "another"  # a section's end is no boundary worth asking about
    assert boundary_passages({"d": text}, chunks) == []


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab. \n!?é🙂"), min_size=2, max_size=300), st.data())
def test_passages_hold_for_any_text_and_cuts(text: str, data: st.DataObject) -> None:
    cuts = sorted(set(data.draw(st.lists(st.integers(1, len(text) - 1), max_size=6))))
    bounds = [0, *cuts, len(text)]
    chunks: list[Any] = [
        {"source_id": "d", "order": i, "section_id": "s", "start": a, "end": b}
        for i, (a, b) in enumerate(pairwise(bounds))
    ]
    for passage in boundary_passages({"d": text}, chunks):
        assert passage.text == text[passage.start : passage.end] == passage.text.strip()
        assert passage.start < passage.boundary < passage.end
        assert not any(c["start"] <= passage.start and passage.end <= c["end"] for c in chunks)


def test_a_passage_starts_at_its_sentence_after_a_blank_line() -> None:
    text = (
        "# R\n\nCustomers may ask within 30 days.\n\nRefunds are issued only after the "
        "item is inspected.\n"
    )
    cut = text.index("only")
    chunks: list[Any] = [
        {"source_id": "d", "order": 0, "section_id": "s", "start": 5, "end": cut},
        {"source_id": "d", "order": 1, "section_id": "s", "start": cut, "end": len(text) - 1},
    ]
    [passage] = boundary_passages({"d": text}, chunks)
    assert passage.text == "Refunds are issued only after the item is inspected."


def test_markup_is_no_passage() -> None:
    text = '# R\n\n<a id="x"></a>\n\nThe key rotates every thirty days here.\n'
    cut = text.index("The key")
    chunks: list[Any] = [
        {"source_id": "d", "order": 0, "section_id": "s", "start": 5, "end": cut - 2},
        {"source_id": "d", "order": 1, "section_id": "s", "start": cut, "end": len(text) - 1},
    ]
    assert boundary_passages({"d": text}, chunks) == []


def test_choose_is_seeded_and_keeps_document_order() -> None:
    passages = list(range(50))
    first = choose(passages, 5, 7)
    assert first == choose(passages, 5, 7) == sorted(first)
    assert first != choose(passages, 5, 8)
    assert choose(passages[:3], 10, 1) == [0, 1, 2]


def drafted(tmp_path: Path, *args: str) -> tuple[Path, dict[str, Any]]:
    out = tmp_path / "questions.json"
    result = run_cli("questions", "draft", MARKDOWN_DOCS, *SMALL, "--out", out, *args)
    assert result.code == 0, result.err
    return out, json.loads(out.read_text())


def test_a_draft_without_a_generator_is_refused_by_evaluate_naming_the_questions(
    tmp_path: Path,
) -> None:
    out, data = drafted(tmp_path, "--n", "4")
    assert len(data["questions"]) == 4
    assert all(q["question"] == "" for q in data["questions"])
    [reference] = data["questions"][0]["references"]
    assert set(reference) == {"quote", "start", "end"}
    measured = run_cli("evaluate", MARKDOWN_DOCS, "--questions", out, *SMALL)
    assert measured.code == 2
    assert measured.err.startswith("error: invalid_questions: 4 question(s) have no text yet")
    assert data["questions"][0]["id"] in measured.err


def test_a_generated_draft_is_measured_by_evaluate(tmp_path: Path) -> None:
    out, data = drafted(
        tmp_path, "--n", "6", "--seed", "3", "--generator", "tests.generators:first_words"
    )
    assert all(q["question"].startswith("What about ") for q in data["questions"])
    again = tmp_path / "again.json"
    run_cli("questions", "draft", MARKDOWN_DOCS, *SMALL, "--n", "6", "--seed", "3",
            "--generator", "tests.generators:first_words", "--out", again)  # fmt: skip
    assert again.read_bytes() == out.read_bytes()
    measured = run_cli(
        "evaluate", MARKDOWN_DOCS, "--questions", out, *SMALL, "--out", tmp_path / "e.json"
    )
    assert measured.code == 0, measured.err
    evaluation = json.loads((tmp_path / "e.json").read_text())
    [policy] = evaluation["policies"]
    assert len(policy["questions"]) == 6
    # Each answer crosses one of this column's boundaries: no retrieved chunk holds it whole.
    assert policy["summary"]["hit"] == 0.0
    placed = place_questions(parse_questions(out.read_bytes()), TEXTS)
    assert [p.references for p in placed] == [
        ((q["source_id"], q["references"][0]["start"], q["references"][0]["end"]),)
        for q in data["questions"]
    ]


@pytest.mark.parametrize(
    ("generator", "code", "says"),
    [
        (
            "tests.generators:raising",
            ErrorCode.GENERATION_FAILED,
            "raised RuntimeError: the model is down",
        ),
        ("tests.generators:silent", ErrorCode.GENERATION_FAILED, "returned 0 characters"),
        ("tests.generators:nameless", ErrorCode.INVALID_GENERATOR, "without a name"),
        ("tests.generators:missing", ErrorCode.INVALID_GENERATOR, "has no callable 'missing'"),
        ("no such thing", ErrorCode.INVALID_GENERATOR, "--generator takes"),
    ],
)
def test_a_bad_generator_is_one_line_with_its_code(
    tmp_path: Path, generator: str, code: ErrorCode, says: str
) -> None:
    out = tmp_path / "q.json"
    result = run_cli(
        "questions", "draft", MARKDOWN_DOCS, *SMALL, "--generator", generator, "--out", out
    )
    assert result.code == 2
    assert result.err.startswith(f"error: {code.value}: ") and says in result.err
    assert "Traceback" not in result.err and not out.exists()


def test_no_boundary_inside_a_section_is_said(tmp_path: Path) -> None:
    result = run_cli(
        "questions", "draft", MARKDOWN_DOCS, "--policy", "heading-aware", "--max-chars",
        "1000000", "--grammar", "markdown", "--out", tmp_path / "q.json",
    )  # fmt: skip
    assert result.code == 2 and result.err.startswith("error: no_documents: ")


# --- chunking_evaluation's questions_df.csv ------------------------------------------


def csv_bytes(rows: list[dict[str, str]], index: bool = True) -> bytes:
    """As pandas' `to_csv` writes it: an unnamed index column first."""
    buffer = io.StringIO()
    names = (
        ["", "question", "references", "corpus_id"]
        if index
        else ["question", "references", "corpus_id"]
    )
    writer = csv.DictWriter(buffer, fieldnames=names, lineterminator="\n")
    writer.writeheader()
    for number, row in enumerate(rows):
        writer.writerow({"": str(number), **row} if index else row)
    return buffer.getvalue().encode()


def reference(source_id: str, quote: str) -> dict[str, Any]:
    start = TEXTS[source_id].index(quote)
    return {"content": quote, "start_index": start, "end_index": start + len(quote)}


def test_a_chunking_evaluation_csv_is_a_questions_file(tmp_path: Path) -> None:
    source = "fastapi/query-params"
    quote = TEXTS[source].split("\n\n")[3].strip()
    rows = [
        {
            "question": "What is said here,\nover two lines?",
            "references": json.dumps([reference(source, quote)]),
            "corpus_id": source,
        }
    ]
    questions = parse_questions(csv_bytes(rows))
    [question] = questions.questions
    assert (
        question.question == "What is said here, over two lines?" and question.source_id == source
    )
    [placed] = place_questions(questions, TEXTS)
    start = TEXTS[source].index(quote)
    assert placed.references == ((source, start, start + len(quote)),)
    path = tmp_path / "questions_df.csv"
    path.write_bytes(csv_bytes(rows * 2, index=False))
    result = run_cli("evaluate", MARKDOWN_DOCS, "--questions", path, *SMALL)
    assert result.code == 0, result.err
    ids = [q["id"] for q in result.json()["policies"][0]["questions"]]
    assert len(ids) == 2 and ids[1] == ids[0] + "-2"


@pytest.mark.parametrize(
    ("row", "line", "says"),
    [
        ({"references": "[{", "corpus_id": "x"}, 3, "references"),
        (
            {"references": '[{"content": "a"}]', "corpus_id": "x"},
            3,
            "content, start_index, end_index",
        ),
        ({"references": "[]", "corpus_id": "x"}, 3, "references"),
        (
            {
                "references": '[{"content": "a", "start_index": "0", "end_index": 1}]',
                "corpus_id": "x",
            },
            3,
            "start",
        ),
        (
            {"references": '[{"content": "a", "start_index": 0, "end_index": 1}]', "corpus_id": ""},
            3,
            "source_id",
        ),
    ],
)
def test_a_bad_csv_row_is_refused_by_its_line(row: dict[str, str], line: int, says: str) -> None:
    good = {
        "question": "q?",
        "references": json.dumps([reference("fastapi/query-params", "Query")]),
        "corpus_id": "fastapi/query-params",
    }
    data = csv_bytes([good, {"question": "multi\nline?", **row}], index=False)
    # The header is line 1, the first row line 2; the second row's question spans lines 3-4.
    with pytest.raises(ExplorerError, match=r"^invalid_questions: ") as caught:
        parse_questions(data)
    assert f"line {line}:" in caught.value.detail and says in caught.value.detail


def test_a_csv_reference_whose_content_is_not_at_its_offsets_is_refused() -> None:
    source = "fastapi/query-params"
    wrong = {**reference(source, "Query"), "content": "Not there"}
    rows = [{"question": "q?", "references": json.dumps([wrong]), "corpus_id": source}]
    with pytest.raises(ExplorerError, match=r"^span_quote_not_found: .*is not its quote"):
        place_questions(parse_questions(csv_bytes(rows)), TEXTS)


def test_a_csv_without_the_columns_says_what_it_expected() -> None:
    with pytest.raises(ExplorerError, match=r"^invalid_questions: ") as caught:
        parse_questions(b"a,b\n1,2\n")
    assert "question, references, corpus_id" in caught.value.detail


@pytest.mark.parametrize("count", [3_000, 10_000])
def test_identical_csv_rows_are_numbered_in_linear_time(count: int) -> None:
    """Each repeated row takes the next free number of its id; 10,000 identical rows (the
    most a file holds) once cost minutes, each row retrying every number taken before."""
    row = {
        "question": "q?",
        "references": json.dumps([reference("fastapi/query-params", "Query")]),
        "corpus_id": "fastapi/query-params",
    }
    data = csv_bytes([row] * count)
    began = time.process_time()
    questions = parse_questions(data)
    spent = time.process_time() - began
    ids = [q.id for q in questions.questions]
    assert ids[1:] == [f"{ids[0]}-{n}" for n in range(2, count + 1)]
    assert spent < 1.0, f"{count:,} identical rows took {spent:.2f} s of CPU"
