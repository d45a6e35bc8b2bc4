"""`--engine ray` (explorer/engine_ray.py) on a local Ray, started once for the module:
the same bytes, ids, statuses and refusals as the one process; a killed worker loses
no document."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.chunking.index import chunk_id_prefix, chunk_stream, write_index
from explorer.chunking.policies import make_config
from explorer.engines.ray import (
    DocumentPiece,
    IndexFold,
    RayRun,
    ShardPieces,
    index_shard,
    ray_evaluate,
    ray_write_index,
    shards,
    spool_part,
    start_ray,
)
from explorer.errors import ErrorCode, ExplorerError
from explorer.grammars import V1_GRAMMAR
from explorer.limits import DEFAULT_LIMITS
from explorer.retrieval.evaluate import evaluate
from explorer.retrieval.questions import parse_questions
from explorer.sources.documents import document_record
from explorer.sources.loading import (
    DEFAULT_MAX_DOCUMENT_BYTES,
    DEFAULT_MAX_TOTAL_BYTES,
    DirectoryReader,
    DocumentStatus,
    load_documents,
)
from explorer.sources.manifest import parse_manifest
from tests.conftest import MANIFEST, ROOT, ManifestBuilder, run_cli, sha256_hex
from tests.documents import HTML_FAQ, docx_bytes, pdf_bytes, scanned_pdf_bytes

MARKDOWN_DOCS = ROOT / "fixtures" / "markdown-docs" / "manifest.json"
MARKDOWN = ("--policy", "heading-aware", "--grammar", "markdown")


@pytest.fixture(scope="module", autouse=True)
def ray_cluster() -> Iterator[Any]:
    """One local Ray for the module: the CLI's runs in this process join it."""
    ray = start_ray(None)
    yield ray
    ray.shutdown()


def both_engines(tmp_path: Path, *args: str | Path) -> tuple[Any, Any, bytes, bytes]:
    """`index` run by each engine: both results, and both files (b"" when not written)."""
    results, files = [], []
    for engine in ("local", "ray"):
        out = tmp_path / f"{engine}.json"
        results.append(run_cli("index", *args, "--out", out, "--engine", engine))
        files.append(out.read_bytes() if out.exists() else b"")
    return results[0], results[1], files[0], files[1]


@pytest.mark.parametrize(
    "args",
    [
        (MARKDOWN_DOCS, *MARKDOWN),
        (MARKDOWN_DOCS, "--policy", "fixed-char", "--max-chars", "300", "--overlap", "40",
         "--grammar", "markdown"),
        (MANIFEST, "--policy", "heading-aware", "--max-chars", "220"),
        (MANIFEST, "--policy", "paragraph"),
    ],
    ids=["markdown-heading-aware", "markdown-fixed-overlap", "aster-heading", "aster-paragraph"],
)  # fmt: skip
def test_the_same_index_bytes_as_one_process(tmp_path: Path, args: tuple[str, ...]) -> None:
    local, ray, local_file, ray_file = both_engines(tmp_path, *args)
    assert (local.code, ray.code) == (0, 0), ray.err
    assert ray_file == local_file
    assert b'"index_id":"' in ray_file


def test_the_index_streams_to_standard_output_too() -> None:
    local = run_cli("index", MANIFEST, "--policy", "paragraph")
    ray = run_cli("index", MANIFEST, "--policy", "paragraph", "--engine", "ray")
    assert ray.code == 0 and ray.out == local.out


def test_any_shard_size_gives_the_same_bytes(ray_cluster: Any) -> None:
    """Shards of one and two documents: every boundary between shards is crossed."""
    config = make_config("heading-aware", 300, grammar="markdown")
    local = io.BytesIO()
    load = load_documents(parse_manifest(MARKDOWN_DOCS.read_bytes()), reader(MARKDOWN_DOCS))
    write_index(load.documents, config, local.write)
    for size in (1, 2):
        ray = io.BytesIO()
        ray_write_index(ray_run(ray_cluster, MARKDOWN_DOCS, size), config, False, print, ray.write)
        assert ray.getvalue() == local.getvalue()


def reader(manifest: Path) -> DirectoryReader:
    return DirectoryReader(manifest.parent)


def ray_run(ray: Any, manifest: Path, shard_documents: int) -> RayRun:
    return RayRun(
        ray,
        parse_manifest(manifest.read_bytes()),
        reader(manifest),
        DEFAULT_MAX_DOCUMENT_BYTES,
        DEFAULT_MAX_TOTAL_BYTES,
        shard_documents=shard_documents,
    )


def failing_manifest(make_manifest: ManifestBuilder) -> Path:
    """Five documents: two load, one is missing, one's digest is wrong, one is not UTF-8."""
    good = b"# A\n\nBody one.\n"
    files = {"a.md": good, "b.md": b"# B\n\nBody two.\n", "c.md": good, "bad.md": b"# X\n\n\xff\n"}
    entries = [
        {"source_id": "zeta", "version": "1", "path": "a.md", "sha256": sha256_hex(good)},
        {"source_id": "gone", "version": "1", "path": "missing.md", "sha256": "0" * 64},
        {"source_id": "alpha", "version": "1", "path": "c.md", "sha256": "1" * 64},
        {"source_id": "mid", "version": "1", "path": "bad.md",
         "sha256": sha256_hex(files["bad.md"])},
        {"source_id": "beta", "version": "1", "path": "b.md",
         "sha256": sha256_hex(files["b.md"])},
    ]  # fmt: skip
    return make_manifest(files, documents=entries)


def test_failed_documents_get_the_same_statuses_and_refusal(
    make_manifest: ManifestBuilder, tmp_path: Path
) -> None:
    manifest = failing_manifest(make_manifest)
    local, ray, local_file, ray_file = both_engines(tmp_path, manifest, "--policy", "paragraph")
    assert (local.code, ray.code) == (2, 2)
    assert ray.err == local.err
    assert "error: source_not_found: 3 of 5 documents failed to load" in ray.err
    for code in ("source_not_found", "source_digest_mismatch", "not_utf8"):
        assert f"error: {code}: " in ray.err
    assert local_file == ray_file == b""


def test_skip_failed_leaves_out_the_same_documents(
    make_manifest: ManifestBuilder, tmp_path: Path
) -> None:
    manifest = failing_manifest(make_manifest)
    args = (manifest, "--policy", "paragraph", "--skip-failed")
    local, ray, local_file, ray_file = both_engines(tmp_path, *args)
    assert (local.code, ray.code) == (0, 0)
    assert ray.err == local.err and ray.err.count("warning: ") == 3
    assert ray_file == local_file


def test_limits_refuse_as_one_process_does(make_manifest: ManifestBuilder, tmp_path: Path) -> None:
    manifest = make_manifest({"doc.md": b"# T\n\n" + b"word " * 400 + b"\n"})
    for limit in (("--max-document-chunks", "3"), ("--max-chunks", "3")):
        args = (manifest, "--policy", "fixed-char", "--max-chars", "50", *limit)
        local, ray, _, ray_file = both_engines(tmp_path, *args)
        assert (local.code, ray.code) == (2, 2)
        assert ray.err == local.err and "error: too_many_chunks: " in ray.err
        assert ray_file == b""
    local, ray, _, _ = both_engines(tmp_path, manifest, "--policy", "paragraph",
                                    "--max-total-bytes", "10")  # fmt: skip
    assert ray.err == local.err and "error: document_too_large: " in ray.err


def test_chunk_files_are_refused_on_ray() -> None:
    result = run_cli("index", MANIFEST, "--chunks", "x=y.json", "--engine", "ray")
    assert result.code == 2 and "error: usage: --engine ray indexes a --policy" in result.err


def test_without_ray_installed_the_error_names_the_requirements() -> None:
    code = (
        "import sys; sys.modules['ray'] = None\n"
        "from explorer.cli import main\n"
        f"sys.exit(main(['index', {str(MANIFEST)!r}, '--policy', 'paragraph', '--engine', 'ray']))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert result.returncode == 2
    assert result.stderr.startswith("error: engine_unavailable: ")
    assert "requirements-ray.txt" in result.stderr and "Traceback" not in result.stderr


COLUMNS = ("--policy", "heading-aware", "--policy", "fixed-char", "--max-chars", "300",
           "--overlap", "50", "--policy", "paragraph")  # fmt: skip


@pytest.mark.parametrize(
    ("fixture", "retriever", "columns"),
    [
        ("markdown-docs", "bm25", COLUMNS),
        ("library", "bm25", COLUMNS),
        ("library", "embedding", COLUMNS),
        ("markdown-docs", "embedding", ("--policy", "heading-aware")),
        ("markdown-docs", "bm25", (*COLUMNS, "--budget", "600t", "--seed", "3")),
        ("library", "bm25", (*COLUMNS, "--budget", "300", "--decide-by", "precision_omega")),
    ],
)
def test_evaluate_gives_the_same_file(
    tmp_path: Path, fixture: str, retriever: str, columns: tuple[str, ...]
) -> None:
    folder = ROOT / "fixtures" / fixture
    files = []
    for engine in ("local", "ray"):
        out = tmp_path / f"{engine}.json"
        args = ("evaluate", folder / "manifest.json", "--questions", folder / "questions.json")
        result = run_cli(*args, *columns, "--retriever", retriever, "--engine", engine,
                         "--out", out)  # fmt: skip
        assert result.code == 0, result.err
        files.append(out.read_bytes())
    assert files[0] == files[1]
    assert json.loads(files[1])["policies"][0]["summary"]["recall"] > 0


def test_evaluate_across_small_shards_merges_top_k_as_one_process(ray_cluster: Any) -> None:
    """Shards of three documents: each question's top k comes from several shards."""
    folder = ROOT / "fixtures" / "markdown-docs"
    manifest = folder / "manifest.json"
    questions = parse_questions((folder / "questions.json").read_bytes())
    columns = [("h", make_config("heading-aware", 400)), ("p", make_config("paragraph"))]
    load = load_documents(parse_manifest(manifest.read_bytes()), reader(manifest))
    local = evaluate(load, questions, columns, "bm25", 10)
    run = ray_run(ray_cluster, manifest, 3)
    assert ray_evaluate(run, questions, columns, "bm25", 10, V1_GRAMMAR, False, print) == local


def test_evaluate_refuses_as_one_process_does(tmp_path: Path) -> None:
    folder = ROOT / "fixtures" / "markdown-docs"
    questions = json.loads((folder / "questions.json").read_text("utf-8"))
    questions["questions"][3]["source_id"] = "nowhere"
    bad = tmp_path / "questions.json"
    bad.write_text(json.dumps(questions))
    results = [
        run_cli("evaluate", folder / "manifest.json", "--questions", bad, "--engine", engine)
        for engine in ("local", "ray")
    ]
    assert results[0].code == results[1].code == 2
    assert results[0].err == results[1].err
    assert "error: invalid_questions: " in results[1].err
    hybrid = run_cli("evaluate", folder / "manifest.json", "--questions", bad, "--engine", "ray",
                     "--retriever", "hybrid")  # fmt: skip
    assert hybrid.code == 2 and "error: usage: --engine ray evaluates with" in hybrid.err


def lost_piece(position: int, source_id: str) -> DocumentPiece:
    status = DocumentStatus(source_id, f"{source_id}.md", ErrorCode.WORKER_LOST, "worker died")
    return DocumentPiece(position, status, 0, ())


def test_documents_of_a_lost_worker_are_named_one_by_one(tmp_path: Path) -> None:
    """A shard whose retries ran out: its documents are reported, each by name, and the
    run is refused unless --skip-failed."""
    config = make_config("paragraph")
    first = shards(parse_manifest(MANIFEST.read_bytes()), 1)[0]
    loaded = index_shard(*first, reader(MANIFEST), config, 10**6, DEFAULT_LIMITS, str(tmp_path))
    fold = IndexFold((config,), DEFAULT_LIMITS, 10**6, tmp_path)
    fold.add(loaded)
    fold.add(ShardPieces(1, [lost_piece(2, "c"), lost_piece(1, "b")], ()))
    notes: list[str] = []
    with pytest.raises(ExplorerError) as refused:
        fold.check_loaded(False, notes.append, "chunk")
    assert refused.value.code is ErrorCode.WORKER_LOST
    assert "2 of 3 documents" in refused.value.detail
    assert notes == ["error: worker_lost: b: worker died", "error: worker_lost: c: worker died"]


def test_shards_spooled_by_workers_or_returned_fold_into_the_same_file(tmp_path: Path) -> None:
    """A worker that reaches the spool folder writes its shard's bytes there and returns
    none; one that does not (another machine) returns them, and the driver writes them
    there: either way, and mixed, the file and `index_id` are one process's."""
    config = make_config("heading-aware", 220)
    manifest = parse_manifest(MARKDOWN_DOCS.read_bytes())
    local = io.BytesIO()
    load = load_documents(manifest, reader(MARKDOWN_DOCS))
    summary = write_index(load.documents, config, local.write)
    spool, elsewhere = tmp_path / "spool", str(tmp_path / "not-on-this-machine")
    spool.mkdir()
    fold = IndexFold((config,), DEFAULT_LIMITS, DEFAULT_MAX_TOTAL_BYTES, spool)
    numbered = shards(manifest, 3)
    assert len(numbered) > 4
    for number, entries in numbered:
        folder = str(spool) if number % 2 else elsewhere
        args = (reader(MARKDOWN_DOCS), config, DEFAULT_MAX_DOCUMENT_BYTES, DEFAULT_LIMITS)
        shard = index_shard(number, entries, *args, folder)
        if number % 2:
            assert shard.returned == () and spool_part(spool, number, 1).stat().st_size > 0
        else:
            assert len(shard.returned) == 2 and b'"chunk_id"' in shard.returned[1]
            assert not spool_part(spool, number, 0).exists()
        fold.add(shard)
    fold.check_loaded(False, print, "chunk")
    ray = io.BytesIO()
    assert fold.write(ray.write) == summary
    assert ray.getvalue() == local.getvalue()
    assert not Path(elsewhere).exists()


def test_the_spool_folder_is_removed_after_success_and_refusals(
    ray_cluster: Any, make_manifest: ManifestBuilder, tmp_path: Path, monkeypatch: Any
) -> None:
    """The spool is made in the temporary folder (TMPDIR) and removed on every exit: a
    written index, a refusal after every shard is in, and one while shards are still in
    flight (their tasks cancelled before the folder goes)."""
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    spools: list[list[str]] = []
    real_add = IndexFold.add

    def add(fold: IndexFold, shard: ShardPieces) -> None:
        real_add(fold, shard)
        spools.append(os.listdir(fold.folder))

    monkeypatch.setattr(IndexFold, "add", add)
    out = tmp_path / "index.json"
    args = ("index", MARKDOWN_DOCS, "--policy", "paragraph", "--engine", "ray")
    assert run_cli(*args, "--out", out).code == 0 and out.stat().st_size > 0
    assert any(name.endswith("-1") for names in spools for name in names)  # written by workers
    assert os.listdir(temporary) == []
    spools.clear()
    folder = ROOT / "fixtures" / "markdown-docs"
    evaluated = run_cli("evaluate", folder / "manifest.json", "--questions",
                        folder / "questions.json", "--engine", "ray", "--policy", "paragraph",
                        "--policy", "heading-aware")  # fmt: skip
    assert evaluated.code == 0, evaluated.err
    assert spools and all(name.endswith("-0") for names in spools for name in names)  # hashed
    assert os.listdir(temporary) == []
    refused = run_cli(*args, "--max-chunks", "3")
    assert refused.code == 2 and "error: too_many_chunks: " in refused.err
    assert os.listdir(temporary) == []
    failing = run_cli("index", failing_manifest(make_manifest), "--policy", "paragraph",
                      "--engine", "ray")  # fmt: skip
    assert failing.code == 2 and "error: source_not_found: " in failing.err
    assert os.listdir(temporary) == []
    manifest = many_documents(tmp_path, 60)
    spools.clear()
    run = RayRun(ray_cluster, parse_manifest(manifest.read_bytes()), reader(manifest),
                 DEFAULT_MAX_DOCUMENT_BYTES, 20_000, shard_documents=1)  # fmt: skip
    with pytest.raises(ExplorerError) as too_large:
        ray_write_index(run, make_config("paragraph"), False, print, io.BytesIO().write)
    assert too_large.value.code is ErrorCode.DOCUMENT_TOO_LARGE
    assert len(spools) == 1  # refused in the second shard, the next ones in flight
    assert os.listdir(temporary) == []


def many_documents(folder: Path, count: int) -> Path:
    """`count` documents of a few kilobytes each, and their manifest."""
    entries = []
    for n in range(count):
        data = (
            f"# Document {n}\n\n".encode()
            + (f"Paragraph {n} of text. " * 40 + "\n\n").encode() * 12
        )
        path = folder / f"d{n:05d}.md"
        path.write_bytes(data)
        entries.append({"source_id": f"d{n:05d}", "version": "1", "path": path.name,
                        "sha256": sha256_hex(data)})  # fmt: skip
    manifest = folder / "manifest.json"
    manifest.write_text(json.dumps({"manifest_version": 1, "documents": entries}))
    return manifest


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (Ray's raylet and its workers are the driver's)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def busy_worker(pid: int) -> int | None:
    """A Ray worker below `pid` that is running a shard (Ray names it after its task)."""
    for child in descendants(pid):
        try:
            command = Path(f"/proc/{child}/cmdline").read_bytes()
        except OSError:
            continue
        if command.startswith(b"ray::index_shard"):
            return child
    return None


def test_a_worker_killed_mid_run_loses_no_document(tmp_path: Path) -> None:
    manifest = many_documents(tmp_path, 800)
    local = tmp_path / "local.json"
    assert run_cli("index", manifest, "--policy", "paragraph", "--out", local).code == 0
    out = tmp_path / "ray.json"
    command = [sys.executable, "-m", "explorer", "index", str(manifest), "--policy", "paragraph",
               "--engine", "ray", "--out", str(out)]  # fmt: skip
    process = subprocess.Popen(command, cwd=ROOT, stderr=subprocess.PIPE, text=True)
    killed = None
    deadline = time.monotonic() + 60
    while killed is None and process.poll() is None and time.monotonic() < deadline:
        killed = busy_worker(process.pid)
        time.sleep(0.02)
    if killed is not None:
        os.kill(killed, signal.SIGKILL)
    _, err = process.communicate(timeout=120)
    assert killed is not None, "the run ended before a worker could be killed"
    assert process.returncode == 0, err
    assert out.read_bytes() == local.read_bytes()


def test_pdf_word_and_html_give_the_same_bytes_pages_and_refusals(
    make_manifest: ManifestBuilder, tmp_path: Path
) -> None:
    files = {
        "guide.pdf": pdf_bytes(),
        "handbook.docx": docx_bytes(),
        "faq.html": HTML_FAQ.encode(),
        "scan.pdf": scanned_pdf_bytes(),
    }
    manifest = make_manifest(files)
    args = (manifest, "--policy", "paragraph", "--skip-failed")
    local, ray, local_file, ray_file = both_engines(tmp_path, *args)
    assert (local.code, ray.code) == (0, 0) and ray.err == local.err
    assert "warning: no_text_layer: scan: " in ray.err
    assert ray_file == local_file and b'"pages":[2]' in ray_file
    local, ray, _, _ = both_engines(tmp_path, *args, "--max-pages", "2")
    assert ray.err == local.err and "warning: too_many_pages: guide: " in ray.err


def test_evaluate_names_a_pdf_chunks_pages_on_ray(
    make_manifest: ManifestBuilder, tmp_path: Path
) -> None:
    manifest = make_manifest({"guide.pdf": pdf_bytes()})
    questions = tmp_path / "questions.json"
    question = {"id": "wind", "question": "When must lifting stop?", "source_id": "guide",
                "references": [{"quote": "Stop lifting when the wind gusts"}]}  # fmt: skip
    questions.write_text(json.dumps({"questions_version": 1, "questions": [question]}))
    files = []
    for engine in ("local", "ray"):
        out = tmp_path / f"{engine}.json"
        result = run_cli("evaluate", manifest, "--questions", questions, "--engine", engine,
                         "--out", out)  # fmt: skip
        assert result.code == 0, result.err
        files.append(out.read_bytes())
    assert files[0] == files[1]
    retrieved = json.loads(files[1])["policies"][0]["questions"][0]["retrieved"]
    assert [hit.get("pages") for hit in retrieved][:1] == [[2]]


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200), st.text(max_size=40))
def test_json_has_no_newline(body: str, title: str) -> None:
    """A worker joins a document's chunks with ",\\n" and the driver hashes them joined
    with "," by dropping every newline: no chunk's canonical JSON may hold one."""
    text = f"# {title.replace(chr(10), ' ')}\n\n{body}\n"
    record = document_record(
        {"source_id": "a\nb", "version": "1\n", "path": "a.md", "sha256": "0" * 64}, text
    )
    config = make_config("fixed-char", 16, grammar="markdown")
    for _, encoded in chunk_stream(record, config, chunk_id_prefix(config), DEFAULT_LIMITS):
        assert b"\n" not in encoded
