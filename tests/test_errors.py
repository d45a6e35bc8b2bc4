"""Every bad input gets exit 2, `error: <code>: <detail>`, no traceback, no output file."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ManifestBuilder, run_cli, run_module, sha256_hex

GOOD = b"# Title\n\nBody text.\n"


def refused(manifest: Path, code: str, *extra: str, command: str = "compare") -> str:
    out = manifest.parent / "out.json"
    result = run_cli(command, manifest, "--out", out, *extra)
    assert result.code == 2, result.err
    first = result.err.splitlines()[-1]
    assert f"error: {code}: " in result.err, result.err
    assert first.startswith("error: ")
    assert "Traceback" not in result.err
    assert not out.exists()
    assert result.out == ""
    return result.err


def entry(path: str = "doc.md", data: bytes = GOOD, **changes: Any) -> dict[str, Any]:
    return {
        "source_id": "doc",
        "version": "1.0",
        "path": path,
        "sha256": sha256_hex(data),
        **changes,
    }


# -- loading a document (docs/contract.md §3) ------------------------------------------


def test_source_not_found(make_manifest: ManifestBuilder) -> None:
    manifest = make_manifest({}, documents=[entry("missing.md")])
    assert "no file at 'missing.md'" in refused(manifest, "source_not_found")


def test_source_that_is_a_folder(make_manifest: ManifestBuilder, tmp_path: Path) -> None:
    (tmp_path / "folder.md").mkdir()
    manifest = make_manifest({}, documents=[entry("folder.md")])
    assert "not a regular file" in refused(manifest, "source_not_found")


def test_document_too_large(make_manifest: ManifestBuilder) -> None:
    manifest = make_manifest({"doc.md": GOOD})
    detail = refused(manifest, "document_too_large", "--max-document-bytes", "10")
    assert "limit of 10 bytes" in detail


def test_default_limit_is_one_mebibyte(make_manifest: ManifestBuilder) -> None:
    exactly = b"# T\n" + b"x" * (1024 * 1024 - 4)
    assert run_cli("compare", make_manifest({"doc.md": exactly})).code == 0
    manifest = make_manifest({"doc.md": exactly + b"y"})
    refused(manifest, "document_too_large")


def test_source_digest_mismatch_is_checked_before_decoding(make_manifest: ManifestBuilder) -> None:
    manifest = make_manifest({"doc.md": b"\xff\xfe not utf-8"}, documents=[entry(data=GOOD)])
    assert "the manifest says" in refused(manifest, "source_digest_mismatch")


@pytest.mark.parametrize(
    "path",
    ["../outside.md", "docs/../../outside.md", "/etc/hostname", "~/doc.md", "docs\\..\\x.md", ".."],
)
def test_paths_that_leave_the_manifest_folder(make_manifest: ManifestBuilder, path: str) -> None:
    manifest = make_manifest({}, documents=[entry(path)])
    refused(manifest, "path_outside_manifest")


def test_link_leading_outside(make_manifest: ManifestBuilder, tmp_path: Path) -> None:
    outside = tmp_path.parent / f"{tmp_path.name}-outside.md"
    outside.write_bytes(GOOD)
    manifest = make_manifest({})
    os.symlink(outside, tmp_path / "link.md")
    manifest = make_manifest({}, documents=[entry("link.md")])
    assert "link that leads outside" in refused(manifest, "path_outside_manifest")


def test_link_inside_the_folder_is_fine(make_manifest: ManifestBuilder, tmp_path: Path) -> None:
    manifest = make_manifest({"real.md": GOOD})
    os.symlink(tmp_path / "real.md", tmp_path / "link.md")
    manifest = make_manifest({}, documents=[entry("link.md")])
    assert run_cli("compare", manifest).code == 0


def test_folder_link_leading_outside(make_manifest: ManifestBuilder, tmp_path: Path) -> None:
    # Each file of a linked folder is refused, not only the first (folders are resolved
    # once for all their files).
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (outside / "a.md").write_bytes(GOOD)
    (outside / "b.md").write_bytes(GOOD)
    os.symlink(outside, tmp_path / "docs")
    documents = [entry("docs/a.md", source_id="a"), entry("docs/b.md", source_id="b")]
    manifest = make_manifest({}, documents=documents)
    result = run_cli("compare", manifest, "--skip-failed")
    assert result.code == 2, result.err
    assert result.err.count("path_outside_manifest") == 2, result.err
    assert "link that leads outside" in result.err


def test_folder_link_inside_the_folder_is_fine(
    make_manifest: ManifestBuilder, tmp_path: Path
) -> None:
    manifest = make_manifest({"real/a.md": GOOD, "real/b.md": GOOD})
    os.symlink(tmp_path / "real", tmp_path / "alias")
    documents = [entry("alias/a.md", source_id="a"), entry("real/b.md", source_id="b")]
    manifest = make_manifest({}, documents=documents)
    result = run_cli("index", manifest, "--policy", "paragraph")
    assert result.code == 0, result.err
    assert [d["path"] for d in json.loads(result.out)["documents"]] == ["alias/a.md", "real/b.md"]


def test_not_utf8(make_manifest: ManifestBuilder) -> None:
    data = b"# T\n\nbad \xc3\x28 byte\n"
    assert "not UTF-8" in refused(make_manifest({"doc.md": data}), "not_utf8")


def test_nul_byte(make_manifest: ManifestBuilder) -> None:
    refused(make_manifest({"doc.md": b"# T\n\nnul \x00 here\n"}), "nul_byte")


@pytest.mark.parametrize("data", [b"", b" \n\t\n", "\ufeff\r\n".encode()])
def test_empty_document(make_manifest: ManifestBuilder, data: bytes) -> None:
    refused(make_manifest({"doc.md": data}), "empty_document")


def test_no_heading(make_manifest: ManifestBuilder) -> None:
    detail = refused(make_manifest({"doc.md": b"Just text.\n"}), "heading_required")
    assert "must start with a heading" in detail


def test_bom_and_crlf_are_normalized(make_manifest: ManifestBuilder) -> None:
    data = "\ufeff# T\r\n\r\nline one\rline two\r\n".encode()
    result = run_cli("index", make_manifest({"doc.md": data}), "--policy", "paragraph")
    assert result.code == 0, result.err
    index = result.json()
    assert index["documents"][0]["text"] == "# T\n\nline one\nline two\n"
    assert index["documents"][0]["sha256"] == sha256_hex(data)
    assert index["chunks"][0]["text"] == "line one\nline two\n"


# -- the manifest (docs/contract.md §2) ------------------------------------------------


@pytest.mark.parametrize(
    ("manifest", "detail"),
    [
        ({"manifest_version": 1, "documents": [entry()], "extra": 1}, "extra: unknown key"),
        (
            {"manifest_version": 1, "documents": [entry(owner="x")]},
            "documents[0].owner: unknown key",
        ),
        (
            {
                "manifest_version": 1,
                "documents": [{"source_id": "doc", "path": "doc.md", "sha256": sha256_hex(GOOD)}],
            },
            "documents[0].version: required key is missing",
        ),
        ({"manifest_version": 2, "documents": [entry()]}, "manifest_version"),
        ({"manifest_version": True, "documents": [entry()]}, "manifest_version"),
        ({"documents": [entry()]}, "manifest_version: required key is missing"),
        ({"manifest_version": 1, "documents": []}, "documents"),
        (
            {"manifest_version": 1, "documents": [entry(), entry(path="b.md")]},
            "duplicate source_id 'doc'",
        ),
        (
            {"manifest_version": 1, "documents": [entry(), entry(source_id="b")]},
            "duplicate path 'doc.md'",
        ),
        ({"manifest_version": 1, "documents": [entry(sha256="ABC")]}, "64 lower-case hex"),
        (
            {"manifest_version": 1, "documents": [entry(sha256=sha256_hex(GOOD).upper())]},
            "64 lower-case hex",
        ),
        ({"manifest_version": 1, "documents": [entry(title="")]}, "documents[0].title"),
        ({"manifest_version": 1, "documents": [entry(title="a\nb")]}, "control characters"),
        ({"manifest_version": 1, "documents": [entry(title=None)]}, "not null"),
        ({"manifest_version": 1, "documents": [entry(version=1)]}, "documents[0].version"),
        (
            {
                "manifest_version": 1,
                "documents": [entry()],
                "span_checks": [
                    {"id": "c", "source_id": "nope", "spans": [{"label": "a", "quote": "Body"}]}
                ],
            },
            "which no document has",
        ),
        (
            {
                "manifest_version": 1,
                "documents": [entry()],
                "span_checks": [{"id": "c", "source_id": "doc", "spans": []}],
            },
            "span_checks[0].spans",
        ),
        (
            {
                "manifest_version": 1,
                "documents": [entry()],
                "span_checks": [
                    {
                        "id": "c",
                        "source_id": "doc",
                        "spans": [{"label": "a", "quote": "Body", "start": 1, "end": 2}],
                    }
                ],
            },
            "not both",
        ),
        (
            {
                "manifest_version": 1,
                "documents": [entry()],
                "span_checks": [
                    {"id": "c", "source_id": "doc", "spans": [{"label": "a", "start": 1}]}
                ],
            },
            "both start and end",
        ),
        (
            {
                "manifest_version": 1,
                "documents": [entry()],
                "span_checks": [
                    {"id": "c", "source_id": "doc", "spans": [{"label": "a", "quote": "B"}]},
                    {"id": "c", "source_id": "doc", "spans": [{"label": "a", "quote": "B"}]},
                ],
            },
            "duplicate span check id",
        ),
    ],
)
def test_invalid_manifest(
    make_manifest: ManifestBuilder, manifest: dict[str, Any], detail: str
) -> None:
    path = make_manifest({"doc.md": GOOD}, raw=json.dumps(manifest).encode())
    assert detail in refused(path, "invalid_manifest")


@pytest.mark.parametrize(
    ("raw", "detail"),
    [
        (b"", "empty"),
        (b"{", "not JSON"),
        (b"\xff", "not UTF-8"),
        (b'{"manifest_version": 1} []', "content after the JSON value"),
        (b'{"manifest_version": 1, "manifest_version": 1}', "duplicate key"),
        (b"[]", "valid dictionary"),
        (b'{"manifest_version": 1, "x": "\\udc00"}', "lone surrogate"),
    ],
)
def test_manifest_that_is_not_json(make_manifest: ManifestBuilder, raw: bytes, detail: str) -> None:
    assert detail in refused(make_manifest({}, raw=raw), "invalid_manifest")


def test_an_escaped_surrogate_pair_is_ordinary_text(make_manifest: ManifestBuilder) -> None:
    raw = json.dumps({"manifest_version": 1, "documents": [entry(title="smile \U0001f600")]})
    assert "\\ud83d\\ude00" in raw  # json.dumps writes the pair as two escapes
    result = run_cli(
        "index", make_manifest({"doc.md": GOOD}, raw=raw.encode()), "--policy", "paragraph"
    )
    assert result.code == 0, result.err
    assert result.json()["documents"][0]["title"] == "smile \U0001f600"


def test_manifest_file_missing(tmp_path: Path) -> None:
    result = run_cli("compare", tmp_path / "manifest.json")
    assert result.code == 2
    assert result.err.startswith("error: io_error: cannot read manifest")


# -- span checks (docs/contract.md §2, §7) ---------------------------------------------


def check(*spans: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"id": "c", "source_id": "doc", "spans": list(spans)}]


@pytest.mark.parametrize(
    ("spans", "code", "detail"),
    [
        ([{"label": "q", "quote": "absent"}], "span_quote_not_found", "is not in the text"),
        ([{"label": "q", "quote": "a"}], "span_quote_ambiguous", "occurs more than once"),
        ([{"label": "q", "quote": "aa"}], "span_quote_ambiguous", "at 14 and 15"),
        ([{"label": "q", "start": 5, "end": 500}], "span_out_of_range", "[5, 500)"),
        ([{"label": "q", "start": -1, "end": 3}], "span_out_of_range", "[-1, 3)"),
        ([{"label": "q", "start": 7, "end": 7}], "span_out_of_range", "non-empty"),
        ([{"label": "q", "start": 9, "end": 7}], "span_out_of_range", "non-empty"),
    ],
)
def test_bad_spans(
    make_manifest: ManifestBuilder, spans: list[dict[str, Any]], code: str, detail: str
) -> None:
    data = b"# Title\n\nBody aaa.\n"
    manifest = make_manifest(
        {"doc.md": data}, documents=[entry(data=data)], span_checks=check(*spans)
    )
    assert detail in refused(manifest, code)


# -- configs and arguments ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "code", "detail"),
    [
        (
            ["index", "--policy", "fixed-char", "--max-chars", "0"],
            "unsupported_chunk_config",
            "max_chars",
        ),
        (
            ["index", "--policy", "heading-aware", "--max-chars", "1000001"],
            "unsupported_chunk_config",
            "max_chars",
        ),
        (
            ["index", "--policy", "paragraph", "--max-chars", "5"],
            "unsupported_chunk_config",
            "paragraph takes max_chars null",
        ),
        (["compare", "--target-chars", "0"], "unsupported_chunk_config", "max_chars"),
        (["compare", "--fixed-chars", "-3"], "unsupported_chunk_config", "max_chars"),
        (["index", "--policy", "sentence-window"], "usage", "invalid choice"),
        (["index"], "usage", "--policy"),
        (["compare", "--fixed-chars", "ten"], "usage", "invalid int value"),
        (["compare", "--max-document-bytes", "0"], "usage", "must be at least 1"),
    ],
)
def test_bad_arguments(
    make_manifest: ManifestBuilder, args: list[str], code: str, detail: str
) -> None:
    manifest = make_manifest({"doc.md": GOOD})
    result = run_cli(args[0], manifest, *args[1:])
    assert result.code == 2
    assert result.err.startswith(f"error: {code}: ")
    assert detail in result.err


def test_no_command_is_a_usage_error() -> None:
    result = run_cli()
    assert result.code == 2 and result.err.startswith("error: usage: ")


# -- several documents ---------------------------------------------------------------------


def test_one_failure_never_hides_the_others(make_manifest: ManifestBuilder) -> None:
    files = {"a.md": GOOD, "b.md": b"# B\n\n\xff\n", "c.md": b"# C\n\nfine\n"}
    docs = [{**entry(n, d), "source_id": n[0]} for n, d in files.items()]
    docs.append({**entry("d.md"), "source_id": "d"})
    manifest = make_manifest(files, documents=docs)
    err = refused(manifest, "not_utf8")
    assert "error: not_utf8: b: " in err
    assert "error: source_not_found: d: " in err
    assert "2 of 4 documents failed" in err

    result = run_cli("compare", manifest, "--skip-failed")
    assert result.code == 0
    report = result.json()
    assert [(d["source_id"], d["status"]) for d in report["documents"]] == [
        ("a", "ok"),
        ("b", "not_utf8"),
        ("c", "ok"),
        ("d", "source_not_found"),
    ]
    assert [d["source_id"] for d in report["indexes"]["paragraph"]["documents"]] == ["a", "c"]
    assert "warning: not_utf8: b: " in result.err


def test_checks_of_a_failed_document_are_reported_as_skipped(
    make_manifest: ManifestBuilder,
) -> None:
    files = {"a.md": GOOD, "b.md": b"# B\n\nno \xff heading\n"}
    docs = [{**entry(n, d), "source_id": n[0]} for n, d in files.items()]
    spans = [{"label": "x", "quote": "no heading"}]
    manifest = make_manifest(
        files, documents=docs, span_checks=[{"id": "c", "source_id": "b", "spans": spans}]
    )
    report = run_cli("compare", manifest, "--skip-failed").json()
    assert report["skipped_checks"] == [
        {"id": "c", "source_id": "b", "reason": "its document did not load (not_utf8)"}
    ]
    assert all(p["checks"] == [] for p in report["policies"])


def test_all_documents_failed_even_when_skipping(make_manifest: ManifestBuilder) -> None:
    manifest = make_manifest({"doc.md": b"# T\n\n\xff\n"})
    result = run_cli("index", manifest, "--policy", "paragraph", "--skip-failed")
    assert result.code == 2
    assert result.err.splitlines()[-1].startswith("error: no_documents: ")


def test_unwritable_output_is_an_io_error(make_manifest: ManifestBuilder, tmp_path: Path) -> None:
    manifest = make_manifest({"doc.md": GOOD})
    result = run_cli("compare", manifest, "--out", tmp_path / "no" / "such" / "dir.json")
    assert result.code == 2
    assert result.err.startswith("error: io_error: cannot write")


def test_a_real_process_prints_no_traceback(make_manifest: ManifestBuilder) -> None:
    manifest = make_manifest({"doc.md": GOOD}, documents=[entry(sha256="0" * 64)])
    process = run_module("compare", manifest)
    assert process.returncode == 2
    assert process.stdout == ""
    assert process.stderr.startswith("error: source_digest_mismatch: doc: ")
    assert "Traceback" not in process.stderr
