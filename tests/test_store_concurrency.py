"""The persistent index under concurrent runs, killed runs, a full disk, and readers
beside a writer. Every process is real (`python -m explorer …`), every wait bounded."""

from __future__ import annotations

import hashlib
import json
import os
import resource
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.conftest import ROOT, ManifestBuilder, run_cli
from tests.test_store import RUN1, RUN2, ingest, integrity, search

# Runs an ingest whose checkpoint stops at the point named in argv[3] (after saying so),
# so a test can kill it there: the injected checkpoint, not an environment variable.
PAUSING_INGEST = """
import sys, time
from pathlib import Path
from explorer import DirectoryReader, load_documents, make_config, parse_manifest
from explorer.retrieval.embedding import load_embedder
from explorer.store import Store

manifest_path, db, point = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]

def checkpoint(name: str) -> None:
    if name == point:
        print(f"paused at {name}", flush=True)
        time.sleep(300)

manifest = parse_manifest(manifest_path.read_bytes())
load = load_documents(manifest, DirectoryReader(manifest_path.parent))
with Store(db) as store:
    store.ingest(manifest, load, make_config("heading-aware"), checkpoint=checkpoint,
                 embedder=load_embedder("wordllama"))
"""


def start_python(*args: str | Path) -> subprocess.Popen[str]:
    """Python in the project folder, its output read as text."""
    return subprocess.Popen(
        [sys.executable, *(str(a) for a in args)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@contextmanager
def paused_ingest(manifest: Path, db: Path, point: str) -> Iterator[subprocess.Popen[str]]:
    """An ingest stopped at `point`; killed (SIGKILL) when the block ends."""
    process = start_python("-c", PAUSING_INGEST, manifest, db, point)
    try:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == f"paused at {point}"
        yield process
    finally:
        process.kill()
        process.wait(timeout=30)


def start_cli(*args: str | Path) -> subprocess.Popen[str]:
    return start_python("-m", "explorer", *args)


def corpus(folder: Path, variant: int, count: int = 12) -> Path:
    """`count` documents; each variant words them differently (another version)."""
    folder.mkdir(parents=True, exist_ok=True)
    entries = []
    for n in range(count):
        data = (
            f"# Doc {n}\n\n## Part\n\nVariant {variant} of document {n}: "
            + " ".join(f"word{variant}x{i}" for i in range(60))
            + "\n"
        ).encode()
        name = f"doc-{n}-v{variant}.md"
        (folder / name).write_bytes(data)
        digest = hashlib.sha256(data).hexdigest()
        entries.append(
            {
                "source_id": f"doc-{n}",
                "version": str(variant),
                "path": name,
                "sha256": digest,
                "access_scope": "t",
            }
        )
    manifest = folder / f"manifest-v{variant}.json"
    manifest.write_text(json.dumps({"manifest_version": 1, "documents": entries}), "utf-8")
    return manifest


def assert_served_once(db: Path) -> None:
    """Integrity holds, every document has exactly one active version, its pointer names
    it, and only active versions have chunks."""
    with sqlite3.connect(db) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        active = raw.execute(
            "SELECT tenant, source_id, count(*) FROM versions WHERE state = 'active' "
            "GROUP BY tenant, source_id"
        ).fetchall()
        assert all(n == 1 for _, _, n in active), active
        pointers = raw.execute(
            "SELECT d.tenant, d.source_id, v.state FROM documents d "
            "LEFT JOIN versions v ON v.version_id = d.active_version"
        ).fetchall()
        assert {(t, s) for t, s, _ in pointers} == {(t, s) for t, s, _ in active}
        assert {state for _, _, state in pointers} <= {"active"}
        stray = raw.execute(
            "SELECT count(*) FROM chunks JOIN versions USING (version_id) "
            "WHERE versions.state != 'active'"
        ).fetchone()
        assert stray == (0,)


def test_concurrent_ingests_serve_every_document_in_exactly_one_version(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    manifests = [corpus(tmp_path / "docs", variant) for variant in range(4)]
    ingest(manifests[0], db)
    for round_ in range(3):
        processes = [start_cli("ingest", manifests[(round_ + n) % 3], "--db", db) for n in range(3)]
        for process in processes:
            out, err = process.communicate(timeout=120)
            assert process.returncode == 0, err
            assert out.startswith("run ") and "Traceback" not in err
        assert_served_once(db)
    # The next lone run (a variant none of them wrote) completes, every document as asked.
    assert ingest(manifests[3], db).endswith(
        "added 0, updated 12, unchanged 0, failed 0, deleted 0"
    )
    assert_served_once(db)
    with sqlite3.connect(db) as raw:
        assert set(raw.execute("SELECT version FROM versions WHERE state = 'active'")) == {("3",)}


def test_a_second_run_waits_for_the_first_and_says_so(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    ingest(RUN1, db)
    with paused_ingest(RUN2, db, "staged"):
        second = start_cli("ingest", RUN2, "--db", db)
        assert second.stderr is not None
        assert second.stderr.readline().startswith(f"waiting for another ingest into '{db}'")
    out, _ = second.communicate(timeout=60)
    assert second.returncode == 0
    assert out.splitlines()[0].endswith("added 0, updated 1, unchanged 4, failed 0, deleted 1")
    assert_served_once(db)


def test_two_first_runs_on_a_new_path_both_complete(tmp_path: Path) -> None:
    for attempt in range(4):
        db = tmp_path / f"new-{attempt}" / "index.db"
        processes = [start_cli("ingest", RUN1, "--db", db) for _ in range(3)]
        results = [(p.communicate(timeout=120), p.returncode) for p in processes]
        assert [code for _, code in results] == [0, 0, 0], [err for (_, err), _ in results]
        lines = sorted(out.splitlines()[0] for (out, _), _ in results)
        assert lines[0] == "run 1: added 6, updated 0, unchanged 0, failed 0, deleted 0"
        assert all(line.endswith("unchanged 6, failed 0, deleted 0") for line in lines[1:])
        assert integrity(db) == "ok"


@pytest.mark.parametrize("point", ["mid-stage", "staged", "embedded-batch"])
def test_an_interrupted_import_leaves_the_old_version_whole(tmp_path: Path, point: str) -> None:
    db = tmp_path / "index.db"
    ingest(RUN1, db)
    with paused_ingest(RUN2, db, point) as process:
        pass
    assert process.returncode == -signal.SIGKILL
    assert integrity(db) == "ok"
    hits = search(db, "refund within days")
    assert any("refund-policy v1" in line and "30 days" in line for line in hits)
    assert not any("14 days" in line for line in search(db, "14 days"))
    assert any(line.startswith("contact ") for line in search(db, "support hours"))
    # The next run completes the change, reusing the vectors committed before the kill.
    assert "updated 1" in ingest(RUN2, db)
    vectors = run_cli("history", "--db", db).out.splitlines()[-2]
    assert vectors.endswith("0 new, 2 reused" if point == "embedded-batch" else "2 new, 0 reused")
    assert any("14 days" in line for line in search(db, "refund within days"))
    with sqlite3.connect(db) as raw:
        staged = raw.execute("SELECT count(*) FROM versions WHERE state = 'staged'")
        assert staged.fetchone() == (0,)
    assert_served_once(db)


def test_history_shows_a_killed_run_as_interrupted(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    ingest(RUN1, db)
    with paused_ingest(RUN2, db, "staged"):
        running = start_cli("history", "--db", db).communicate(timeout=60)[0]
    assert "6 → running" in running.splitlines()[2]
    table = start_cli("history", "--db", db).communicate(timeout=60)[0]
    [_, first, second] = table.splitlines()
    assert "0 → 6" in first
    assert "6 → interrupted" in second and "→ 0 " not in second


def test_search_answers_while_an_ingest_writes(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    ingest(RUN1, db)
    with sqlite3.connect(db, isolation_level=None) as writer:
        writer.execute("BEGIN IMMEDIATE")
        writer.execute("DELETE FROM search_cache")  # a writer holds the lock
        process = start_cli("search", "refund within days", "--tenant", "acme", "--db", db)
        out, err = process.communicate(timeout=60)
        writer.execute("ROLLBACK")
    assert process.returncode == 0, err
    assert out.startswith("refund-policy v1 ")
    with sqlite3.connect(db) as raw:  # the answer was not cached: the writer held the lock
        assert raw.execute("SELECT count(*) FROM search_cache").fetchone() == (0,)


def _limit_file_size() -> None:
    """In the child: writes past 64 KiB of any file fail (EFBIG), as on a full disk. The
    WAL index (32 KiB) fits; a large staged version does not."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))


def test_a_full_disk_is_an_io_error_and_the_old_version_stays(
    make_manifest: ManifestBuilder, tmp_path: Path
) -> None:
    db = tmp_path / "index.db"
    ingest(make_manifest({"big.md": b"# Big\n\nThe small first version.\n"}), db)
    paragraphs = "\n\n".join(f"Paragraph {n} of the large second version." for n in range(8000))
    large = make_manifest({"big.md": f"# Big\n\n{paragraphs}\n".encode()})
    result = subprocess.run(
        [sys.executable, "-m", "explorer", "ingest", str(large), "--db", str(db)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_limit_file_size,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert result.returncode == 2
    assert result.stderr.startswith(f"error: io_error: the index '{db}' could not be written")
    assert "rollback" not in result.stderr
    assert_served_once(db)
    assert search(db, "small first version", tenant="default")[0].startswith("big v1.0 ")
    assert search(db, "paragraph large", tenant="default") == []
    assert ingest(large, db).startswith("run 3: added 0, updated 1")
