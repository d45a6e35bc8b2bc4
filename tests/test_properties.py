"""Invariants, driven by Hypothesis over documents with awkward Unicode and layout."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from explorer import (
    POLICIES,
    ErrorCode,
    ExplorerError,
    Limits,
    build_index,
    digest,
    make_config,
    sections,
    sha,
    validate_index,
)
from explorer.chunking.index import section_id
from explorer.grammars.v1 import _paragraphs_by_lines, paragraphs
from explorer.sources.documents import DocumentRecord, document_record

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

WORDS = st.text(
    alphabet=st.sampled_from([*list('ab #\t"\\é☃🙂\xa0\u3000<>&'), "\x0c", "\u2028", "\x85"]),
    min_size=1,
    max_size=12,
)
LINE = st.one_of(
    WORDS,
    st.builds(lambda n, w: "#" * n + " " + w, st.integers(1, 7), WORDS),
    st.builds(lambda n, w: "#" * n + w, st.integers(1, 3), WORDS),
    st.sampled_from(["", " ", "\t", "\u00a0 ", "\u3000"]),
)


@st.composite
def texts(draw: st.DrawFn) -> str:
    lines = draw(st.lists(LINE, max_size=25))
    lines.insert(0, draw(WORDS))
    text = "# " + draw(WORDS).replace("\n", "") + "\n" + "\n".join(lines)
    if draw(st.booleans()):
        text += "\n"
    return text


def record(text: str, source_id: str = "doc") -> DocumentRecord:
    fields = {
        "source_id": source_id,
        "version": "1.0",
        "path": f"{source_id}.md",
        "sha256": "0" * 64,
    }
    return document_record(fields, text)


configs = st.one_of(
    st.builds(lambda n: make_config("fixed-char", n), st.integers(1, 300)),
    st.just(make_config("paragraph")),
    st.builds(lambda n: make_config("heading-aware", n), st.integers(1, 400)),
)


@SETTINGS
@given(texts(), configs)
def test_chunks_are_ordered_slices_inside_their_sections(text: str, config: Any) -> None:
    doc = record(text)
    index = build_index([doc], config)
    by_id = {section_id(doc["document_revision"], s.heading_start): s for s in sections(text)}
    previous_end = 0
    for order, chunk in enumerate(index["chunks"]):
        assert chunk["order"] == order
        assert text[chunk["start"] : chunk["end"]] == chunk["text"]
        assert chunk["start"] < chunk["end"] and not chunk["text"].isspace()
        assert chunk["start"] >= previous_end
        previous_end = chunk["end"]
        section = by_id[chunk["section_id"]]
        assert section.start <= chunk["start"] and chunk["end"] <= section.end
        assert chunk["section_title"] == section.title
        assert chunk["start_line"] == text.count("\n", 0, chunk["start"]) + 1
        assert chunk["end_line"] == text.count("\n", 0, chunk["end"] - 1) + 1
        if config.strategy == "fixed-char":
            assert chunk["end"] - chunk["start"] <= config.max_chars


@SETTINGS
@given(texts(), configs)
def test_ids_are_the_spec_digests(text: str, config: Any) -> None:
    index = build_index([record(text)], config)
    for chunk in index["chunks"]:
        payload = {k: v for k, v in chunk.items() if k != "chunk_id"}
        assert chunk["chunk_id"] == digest({"config": config.as_json(), **payload})
    body = {k: v for k, v in index.items() if k != "index_id"}
    assert index["index_id"] == digest(body)


@SETTINGS
@given(texts())
def test_fast_paragraphs_equal_the_line_by_line_definition(text: str) -> None:
    for section in sections(text):
        expected = _paragraphs_by_lines(text, section.start, section.end)
        assert paragraphs(text, section.start, section.end) == expected
        for start, end in expected:
            assert text[start:end].splitlines(keepends=True)[0].strip()


@SETTINGS
@given(texts(), texts(), configs)
def test_validate_accepts_what_build_makes(first: str, second: str, config: Any) -> None:
    index = build_index([record(second, "b"), record(first, "a")], config)
    round_tripped = json.loads(json.dumps(index, ensure_ascii=False))
    assert validate_index(round_tripped) == index


def _recompute_index_id(index: dict[str, Any]) -> None:
    index["index_id"] = digest({k: v for k, v in index.items() if k != "index_id"})


def _mutate(index: dict[str, Any], data: st.DataObject) -> None:
    chunks = index["chunks"]
    kind = data.draw(
        st.sampled_from(
            ["field", "text", "swap", "drop", "duplicate", "config", "unknown", "document", "id"]
        )
    )
    if kind == "field":
        chunk = data.draw(st.sampled_from(chunks))
        field = data.draw(
            st.sampled_from(["order", "start", "end", "start_line", "end_line", "section_title"])
        )
        chunk[field] = chunk[field] + "x" if isinstance(chunk[field], str) else chunk[field] + 1
    elif kind == "text":  # a careful forger recomputes the chunk's own digests
        chunk = data.draw(st.sampled_from(chunks))
        chunk["text"] = chunk["text"][:-1] + ("y" if chunk["text"][-1] != "y" else "z")
        chunk["text_sha256"] = sha(chunk["text"])
        payload = {k: v for k, v in chunk.items() if k != "chunk_id"}
        chunk["chunk_id"] = digest({"config": index["config"], **payload})
    elif kind == "swap":
        i = data.draw(st.integers(0, len(chunks) - 2))
        chunks[i], chunks[i + 1] = chunks[i + 1], chunks[i]
    elif kind == "drop":
        del chunks[data.draw(st.integers(0, len(chunks) - 1))]
    elif kind == "duplicate":
        i = data.draw(st.integers(0, len(chunks) - 1))
        chunks.insert(i, copy.deepcopy(chunks[i]))
    elif kind == "config":
        config = index["config"]
        if config["max_chars"] is None:
            config["max_chars"] = 5
        else:
            config["max_chars"] += 1
    elif kind == "unknown":
        target = data.draw(st.sampled_from([index, index["documents"][0], *chunks[:1]]))
        target["extra"] = 1
    elif kind == "document":
        doc = index["documents"][0]
        doc["version"] = doc["version"] + ".1"
        doc["document_revision"] = digest(
            {k: v for k, v in doc.items() if k not in ("text", "document_revision")}
        )
    else:
        index["index_id"] = "0" * 64 if index["index_id"] != "0" * 64 else "1" * 64
        return
    if data.draw(st.booleans()):
        _recompute_index_id(index)


@SETTINGS
@given(texts(), configs, st.data())
def test_any_single_mutation_is_refused(text: str, config: Any, data: st.DataObject) -> None:
    index: dict[str, Any] = json.loads(json.dumps(build_index([record(text)], config)))
    # With fewer than two chunks some edits, consistently recomputed, are a valid index.
    assume(len(index["chunks"]) >= 2)
    _mutate(index, data)
    try:
        validate_index(index)
    except ExplorerError as error:
        assert error.code is ErrorCode.INVALID_CHUNK_INDEX
        assert error.detail
    else:
        raise AssertionError("a mutated index was accepted")


def test_every_policy_is_exercised() -> None:
    assert set(POLICIES) == {"fixed-char", "paragraph", "heading-aware"}


@SETTINGS
@given(texts(), texts(), configs, st.integers(1, 30), st.integers(1, 60))
def test_limits_refuse_exactly_past_their_counts(
    first: str, second: str, config: Any, per_document: int, per_index: int
) -> None:
    """A build refuses exactly when a document or the index has more chunks than allowed,
    and validation under the same limits agrees with it."""
    documents = [record(first, "a"), record(second, "b")]
    counts = [len(build_index([d], config)["chunks"]) for d in documents]
    limits = Limits(per_document, per_index)
    too_many = max(counts) > per_document or sum(counts) > per_index
    try:
        index = build_index(documents, config, limits)
    except ExplorerError as error:
        assert error.code is ErrorCode.TOO_MANY_CHUNKS and too_many
    else:
        assert not too_many
        assert validate_index(copy.deepcopy(index), limits) == index
