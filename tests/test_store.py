"""The persistent index: idempotent runs, whole-version switches, deletions, tenants."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from pathlib import Path

import pytest

from explorer import ErrorCode, ExplorerError
from explorer.retrieval.vectors import transaction
from explorer.store import Store, queries
from explorer.store.schema import storage_error
from tests.conftest import ROOT, ManifestBuilder, run_cli, sha256_hex

LIBRARY = ROOT / "fixtures" / "library"
RUN1, RUN2 = LIBRARY / "manifest.json", LIBRARY / "manifest-run2.json"
STATE_TABLES = ("documents", "versions", "chunks", "chunks_fts", "search_cache", "receipts")


def ingest(manifest: Path, db: Path, *extra: str) -> str:
    """The run's first line (counts); the second says what was embedded."""
    result = run_cli("ingest", manifest, "--db", db, *extra)
    assert result.code == 0, result.err
    return result.out.splitlines()[0]


def search(db: Path, query: str, tenant: str = "acme", k: int = 5) -> list[str]:
    """BM25 hit lines, with the snippets' [match] brackets taken out for easy reading."""
    result = run_cli(
        "search", query, "--tenant", tenant, "--db", db, "-k", str(k), "--mode", "bm25"
    )
    assert result.code == 0, result.err
    return [line.replace("[", "").replace("]", "") for line in result.out.splitlines()]


def counts(db: Path) -> dict[str, int]:
    with Store(db) as store:
        return store.counts()


def integrity(db: Path) -> str:
    with Store(db) as store:
        return store.integrity()


def test_rerunning_an_unchanged_manifest_adds_no_rows(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    assert ingest(RUN1, db) == "run 1: added 6, updated 0, unchanged 0, failed 0, deleted 0"
    search(db, "warranty")  # fills the search cache
    before = counts(db)
    assert ingest(RUN1, db) == "run 2: added 0, updated 0, unchanged 6, failed 0, deleted 0"
    after = counts(db)
    for table in STATE_TABLES:
        assert after[table] == before[table], table
    # The run itself is logged: one run row and one status row per document.
    assert after["runs"] == before["runs"] + 1
    assert after["document_status"] == before["document_status"] + 6
    assert integrity(db) == "ok"


def test_the_exact_duplicate_is_its_own_document(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    ingest(RUN1, db)
    hits = search(db, "serial number fault")
    assert {line.split()[0] for line in hits} == {"warranty", "warranty-copy"}
    ids = {line.split()[6] for line in hits}  # source, version, "lines", a-b, start, end, id
    assert len(ids) == 2  # the same text under two source ids: two chunk ids


def test_an_updated_policy_serves_only_its_new_wording(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    ingest(RUN1, db)
    assert any("within 30 days" in line for line in search(db, "refund within days"))
    assert ingest(RUN2, db) == "run 2: added 0, updated 1, unchanged 4, failed 0, deleted 1"
    hits = search(db, "refund within days")
    assert any("refund-policy v2" in line and "within 14 days" in line for line in hits)
    assert not any("30 days" in line for line in search(db, "30 days"))
    assert not any("Store credit is offered" in line for line in search(db, "store credit offered"))
    with sqlite3.connect(db) as raw:
        states = raw.execute(
            "SELECT version, state FROM versions "
            "WHERE source_id = 'refund-policy' ORDER BY version_id"
        ).fetchall()
    assert states == [("1", "superseded"), ("2", "active")]


def test_a_deletion_clears_every_store_and_leaves_a_receipt(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    ingest(RUN1, db)
    assert any(line.startswith("contact ") for line in search(db, "support hours"))
    with Store(db) as store:
        assert store.counts()["search_cache"] == 1
    summary = ingest(RUN2, db)
    assert summary == "run 2: added 0, updated 1, unchanged 4, failed 0, deleted 1"
    with Store(db) as store:
        assert store.counts()["search_cache"] == 0  # the cached answer naming contact is gone
    assert not any(line.startswith("contact ") for line in search(db, "support hours"))
    with sqlite3.connect(db) as raw:
        assert raw.execute(
            "SELECT count(*) FROM chunks WHERE source_id = 'contact'"
        ).fetchone() == (0,)
        assert raw.execute(
            "SELECT count(*) FROM documents WHERE source_id = 'contact'"
        ).fetchone() == (0,)
        fts = raw.execute("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'Escalation'")
        assert fts.fetchone() == (0,)
    with Store(db) as store:
        [receipt] = store.receipts()
        history = store.history()
    assert receipt.source_id == "contact" and receipt.chunk_count == 2
    assert receipt.stores == ("chunks", "chunks_fts", "search_cache", "documents", "vectors")
    assert receipt.retention.startswith("purged at ")
    assert (history[-1].documents_before, history[-1].documents_after) == (6, 5)
    table = run_cli("history", "--db", db).out
    assert "deleted acme/contact in run 2" in table
    assert integrity(db) == "ok"


def test_complete_manifest_deletes_what_it_does_not_list(
    make_manifest: ManifestBuilder, tmp_path: Path
) -> None:
    files = {"a.md": b"# A\n\nalpha text\n", "b.md": b"# B\n\nbeta text\n"}
    db = tmp_path / "index.db"
    ingest(make_manifest(files), db)
    entry = {
        "source_id": "a",
        "version": "1.0",
        "path": "a.md",
        "sha256": hashlib.sha256(files["a.md"]).hexdigest(),
    }
    raw = json.dumps({"manifest_version": 1, "documents": [entry], "complete": True}).encode()
    assert ingest(make_manifest(files, raw=raw), db).endswith("deleted 1")
    assert search(db, "beta", tenant="default") == []
    assert len(search(db, "alpha", tenant="default")) == 1


def tenant_manifest(tmp_path: Path) -> Path:
    shared = b"# Shared\n\nThe same sentence in two tenants.\n"
    secret = b"# Secret\n\nOnly tenant B knows the launch code.\n"
    for name, data in (("shared.md", shared), ("secret.md", secret)):
        (tmp_path / name).write_bytes(data)

    def entry(source_id: str, path: str, data: bytes, scope: str) -> dict[str, str]:
        return {
            "source_id": source_id,
            "version": "1",
            "path": path,
            "sha256": hashlib.sha256(data).hexdigest(),
            "access_scope": scope,
        }

    # Two manifest entries may not share a path, so tenant B's copy is its own file.
    (tmp_path / "shared-b.md").write_bytes(shared)
    manifest = {
        "manifest_version": 1,
        "documents": [
            entry("shared-a", "shared.md", shared, "tenant-a"),
            entry("shared-b", "shared-b.md", shared, "tenant-b"),
            entry("secret", "secret.md", secret, "tenant-b"),
        ],
    }
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(manifest), "utf-8")
    return path


def test_search_never_crosses_tenants(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    ingest(tenant_manifest(tmp_path), db)
    assert search(db, "launch code", tenant="tenant-a") == []
    assert [line.split()[0] for line in search(db, "launch code", tenant="tenant-b")] == ["secret"]
    assert [line.split()[0] for line in search(db, "same sentence", tenant="tenant-a")] == [
        "shared-a"
    ]
    assert [line.split()[0] for line in search(db, "same sentence", tenant="tenant-b")] == [
        "shared-b"
    ]
    with sqlite3.connect(db) as raw:
        keys = raw.execute(
            "SELECT tenant, chunk_key FROM chunks WHERE source_id LIKE 'shared-%'"
        ).fetchall()
    assert len({key for _, key in keys}) == 2 and {t for t, _ in keys} == {"tenant-a", "tenant-b"}


def test_a_failed_document_is_recorded_and_its_old_version_stays(
    make_manifest: ManifestBuilder, tmp_path: Path
) -> None:
    db = tmp_path / "index.db"
    good = {"a.md": b"# A\n\nalpha text\n", "b.md": b"# B\n\nbeta text\n"}
    ingest(make_manifest(good), db)
    broken = {"a.md": b"# A\n\nalpha text\n", "b.md": b"   \n"}
    result = run_cli("ingest", make_manifest(broken), "--db", db)
    assert result.code == 0
    assert "warning: empty_document: b: " in result.err
    assert result.out.splitlines()[0] == (
        "run 2: added 0, updated 0, unchanged 1, failed 1, deleted 0"
    )
    assert len(search(db, "beta", tenant="default")) == 1
    with Store(db) as store:
        statuses = store.document_statuses(2)
    failed = [(row.tenant, row.source_id, row.status) for row in statuses if row.status != "ok"]
    assert failed == [("default", "b", ErrorCode.EMPTY_DOCUMENT)]
    not_utf8 = {"a.md": b"# A\n\nalpha text\n", "b.md": b"# B\n\n\xff\n"}
    assert "failed 1" in run_cli("ingest", make_manifest(not_utf8), "--db", db).out


def test_deleting_an_unknown_document_writes_nothing(
    make_manifest: ManifestBuilder, tmp_path: Path
) -> None:
    db = tmp_path / "index.db"
    files = {"a.md": b"# A\n\nalpha text\n"}
    ingest(make_manifest(files), db)
    before = counts(db)
    entry = {
        "source_id": "a",
        "version": "2.0",
        "path": "a.md",
        "sha256": hashlib.sha256(files["a.md"]).hexdigest(),
    }
    raw = json.dumps(
        {"manifest_version": 1, "documents": [entry], "deleted": [{"source_id": "ghost"}]}
    )
    result = run_cli("ingest", make_manifest(files, raw=raw.encode()), "--db", db)
    assert result.code == 2
    assert result.err.startswith("error: delete_unknown_document: the manifest deletes 'ghost'")
    assert counts(db) == before
    assert integrity(db) == "ok"


A = b"# A\n\nx\n"
TWO_COPIES = {"a.md": A, "b.md": A}


def entry_a(**more: str) -> dict[str, str]:
    """Document 'a' as a manifest lists it (its text `A`, at `a.md` unless told)."""
    return {"source_id": "a", "version": "1", "path": "a.md", "sha256": sha256_hex(A), **more}


def test_duplicate_ids_are_refused_before_the_index_is_touched(
    make_manifest: ManifestBuilder, tmp_path: Path
) -> None:
    db = tmp_path / "index.db"
    twice = make_manifest(TWO_COPIES, documents=[entry_a(), entry_a(path="b.md")])
    result = run_cli("ingest", twice, "--db", db)
    assert result.code == 2 and result.err.startswith("error: invalid_manifest: ")
    assert not db.exists()


@pytest.mark.parametrize("kind", ["garbage", "foreign"])
def test_a_corrupt_or_foreign_database_is_refused(tmp_path: Path, kind: str) -> None:
    db = tmp_path / "index.db"
    if kind == "garbage":
        db.write_bytes(b"this is not an SQLite database, just bytes" * 100)
    else:
        with sqlite3.connect(db) as other:
            other.execute("CREATE TABLE customers (id INTEGER)")
    before = db.read_bytes()
    result = run_cli("ingest", RUN1, "--db", db)
    assert result.code == 2
    assert result.err.startswith("error: invalid_store: ")
    assert db.read_bytes() == before
    assert run_cli("search", "x", "--tenant", "acme", "--db", db).err.startswith(
        "error: invalid_store: "
    )


def test_search_and_history_need_an_index(tmp_path: Path) -> None:
    result = run_cli("history", "--db", tmp_path / "none.db")
    assert result.code == 2 and result.err.startswith("error: io_error: no index at")


def test_a_locked_index_is_a_clear_error(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    ingest(RUN1, db)
    with sqlite3.connect(db, timeout=0) as holder:
        holder.execute("BEGIN EXCLUSIVE")
        result = run_cli("ingest", RUN2, "--db", db)
        holder.rollback()
    assert result.code == 2
    assert result.err.splitlines()[-1].startswith("error: store_busy: the index")
    assert "locked" in result.err
    assert integrity(db) == "ok"


@pytest.mark.parametrize(
    "setup",
    ["PRAGMA user_version = 7", "PRAGMA application_id = 1234", "CREATE TABLE t (x); DROP TABLE t"],
)
def test_an_empty_sqlite_file_of_another_application_is_refused(tmp_path: Path, setup: str) -> None:
    db = tmp_path / "other.db"
    with sqlite3.connect(db) as other:
        other.executescript(setup)
    before = db.read_bytes()
    result = run_cli("ingest", RUN1, "--db", db)
    assert (result.code, result.err) == (
        2,
        f"error: invalid_store: '{db}' is an SQLite file of something else\n",
    )
    assert db.read_bytes() == before


def test_a_zero_byte_file_becomes_an_index(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    db.touch()
    assert ingest(RUN1, db).startswith("run 1: added 6")


def test_k_is_bounded(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    ingest(RUN1, db)
    result = run_cli("search", "refund", "--tenant", "acme", "--db", db, "-k", "101")
    assert (result.code, result.err) == (
        2,
        "error: invalid_query: k must be from 1 to 100, not 101\n",
    )
    with Store(db) as store, pytest.raises(ExplorerError) as refused:
        store.search("refund", "acme", 99999999999999999999999)
    assert refused.value.code is ErrorCode.INVALID_QUERY
    assert len(search(db, "refund", k=100)) >= 1


def test_query_words_are_deduplicated_and_capped(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    ingest(RUN1, db)
    began = time.perf_counter()
    same = " ".join(["Refund", "refund"] * 6_000)  # 12,000 words, one term
    assert search(db, same, k=1) == search(db, "refund", k=1)
    words = " ".join(f"w{n}" for n in range(5_000))  # 5,000 distinct words
    result = run_cli("search", words, "--tenant", "acme", "--db", db)
    assert (result.code, result.err) == (
        2,
        "error: invalid_query: the query has 5,000 distinct words; the limit is 64\n",
    )
    too_long = run_cli("search", "a " * 50_001, "--tenant", "acme", "--db", db)
    assert too_long.err == (
        "error: invalid_query: the query has 100,002 characters; the limit is 100,000\n"
    )
    assert time.perf_counter() - began < 10
    with Store(db) as store:
        assert store.counts()["search_cache"] == 1


def test_the_search_cache_keeps_only_the_newest_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(queries, "CACHE_ROWS", 3)
    db = tmp_path / "index.db"
    ingest(RUN1, db)
    for word in ("refund", "warranty", "parcel", "support", "serial"):
        search(db, word)
    with sqlite3.connect(db) as raw:
        kept = raw.execute("SELECT query FROM search_cache ORDER BY rowid").fetchall()
    assert kept == [('"parcel"',), ('"support"',), ('"serial"',)]


DELETED_TEXT = b"Urgent safety issues can be reported by phone"


def file_bytes(db: Path) -> bytes:
    """The index file and whatever WAL sits beside it."""
    wal = db.with_name(db.name + "-wal")
    return db.read_bytes() + (wal.read_bytes() if wal.exists() else b"")


def test_a_deletion_purges_the_text_from_the_file(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    ingest(RUN1, db)
    search(db, "urgent safety phone")  # the answer is cached too
    assert DELETED_TEXT in file_bytes(db)
    ingest(RUN2, db)
    assert DELETED_TEXT not in file_bytes(db)
    with Store(db) as store:
        [receipt] = store.receipts()
    assert receipt.retention.startswith("purged at ")
    assert "FTS optimize" in receipt.retention and "VACUUM" in receipt.retention


def test_a_receipt_stays_pending_while_a_reader_holds_the_old_pages(
    make_manifest: ManifestBuilder, tmp_path: Path
) -> None:
    db = tmp_path / "index.db"
    ingest(RUN1, db)
    with sqlite3.connect(db, isolation_level=None) as reader:
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM chunks").fetchone()  # an open read snapshot
        ingest(RUN2, db)
        with Store(db) as store:
            [receipt] = store.receipts()
        assert receipt.retention.startswith("purge pending: ")
        reader.execute("ROLLBACK")
    other = make_manifest({"a.md": b"# A\n\nalpha text\n"})
    assert ingest(other, db).endswith("added 1, updated 0, unchanged 0, failed 0, deleted 0")
    with Store(db) as store:
        [receipt] = store.receipts()
    assert receipt.retention.startswith("purged at ")
    assert DELETED_TEXT not in file_bytes(db)


def test_one_source_id_in_two_tenants_is_two_documents(
    make_manifest: ManifestBuilder, tmp_path: Path
) -> None:
    files = {"one.md": b"# A\n\nalpha for tenant one\n", "two.md": b"# A\n\nalpha for tenant two\n"}
    entries = [
        {
            "source_id": "a",
            "version": "1",
            "path": name,
            "sha256": hashlib.sha256(data).hexdigest(),
            "access_scope": scope,
        }
        for (name, data), scope in zip(files.items(), ("t1", "t2"), strict=True)
    ]
    db = tmp_path / "index.db"
    both = make_manifest(files, documents=entries)
    assert ingest(both, db) == "run 1: added 2, updated 0, unchanged 0, failed 0, deleted 0"
    assert [line.split()[-1] for line in search(db, "alpha", tenant="t1")] == ["one"]
    assert [line.split()[-1] for line in search(db, "alpha", tenant="t2")] == ["two"]
    raw = {
        "manifest_version": 1,
        "documents": entries[1:],
        "deleted": [{"source_id": "a", "access_scope": "t1"}],
    }
    assert ingest(make_manifest(files, raw=json.dumps(raw).encode()), db).endswith("deleted 1")
    assert search(db, "alpha", tenant="t1") == []
    assert len(search(db, "alpha", tenant="t2")) == 1
    # One index keyed by source_id cannot hold both: compare and index refuse, and say why.
    both = make_manifest(files, documents=entries)
    for command in (("compare",), ("index", "--policy", "paragraph")):
        result = run_cli(*command, both)
        assert (result.code, result.err) == (
            2,
            "error: invalid_manifest: source_id 'a' is listed in access_scopes 't1' and 't2'; "
            "only ingest keys documents by access_scope, so give each its own source_id here\n",
        )


def test_a_source_id_repeated_in_one_tenant_or_checked_in_two_is_refused(
    make_manifest: ManifestBuilder,
) -> None:
    same = [entry_a(access_scope="t1"), entry_a(path="b.md", access_scope="t1")]
    result = run_cli("ingest", make_manifest(TWO_COPIES, documents=same))
    assert result.err.startswith("error: invalid_manifest: ")
    assert "duplicate source_id 'a' in access_scope 't1'" in result.err
    two_tenants = [entry_a(access_scope="t1"), entry_a(path="b.md", access_scope="t2")]
    check = {"id": "c", "source_id": "a", "spans": [{"label": "x", "quote": "x"}]}
    result = run_cli(
        "ingest", make_manifest(TWO_COPIES, documents=two_tenants, span_checks=[check])
    )
    assert result.err.startswith("error: invalid_manifest: ")
    assert "span check 'c' names source_id 'a', which more than one access_scope lists" in (
        result.err
    )


def test_a_full_disk_inside_a_transaction_is_reported_not_a_failed_rollback() -> None:
    """SQLite rolls a transaction back by itself when the disk fills; the ROLLBACK after
    that must not replace the disk error with `cannot rollback`."""
    db = sqlite3.connect(":memory:", isolation_level=None)
    db.execute("CREATE TABLE t (x)")
    db.execute("PRAGMA max_page_count = 3")  # a disk with room for three pages
    with pytest.raises(sqlite3.OperationalError) as full, transaction(db):
        db.execute("INSERT INTO t VALUES (zeroblob(100000))")
    assert str(full.value) == "database or disk is full"
    assert not db.in_transaction
    error = storage_error(full.value, Path("index.db"))
    assert (error.code, error.detail) == (
        ErrorCode.IO_ERROR,
        "the index 'index.db' could not be written or read: database or disk is full",
    )


def test_the_deletion_preview_shows_only_the_visitors_tenants(tmp_path: Path) -> None:
    """`complete: true` deletes, per tenant a run may see, what it does not list; the
    preview of it never names another tenant's documents."""
    from explorer.sources.manifest import parse_manifest

    db = tmp_path / "index.db"
    ingest(LIBRARY / "manifest.json", db, "--embedder", "none")
    raw = json.loads((LIBRARY / "manifest.json").read_text())
    whole = parse_manifest(
        json.dumps(
            {"manifest_version": 1, "documents": raw["documents"][:1], "complete": True}
        ).encode()
    )
    with Store(db) as store:
        everyone = store.would_delete(whole)
        default_only = store.would_delete(whole, frozenset({"default"}))
        acme = store.would_delete(whole, frozenset({"acme"}))
    kept = raw["documents"][0]["source_id"]
    assert {source for _, source in everyone} == {
        d["source_id"] for d in raw["documents"][1:]
    } and kept not in {source for _, source in everyone}
    assert default_only == []
    assert acme == everyone
