"""The index embeds: an embedding stage between staging and verification, a vector cache
keyed by (embedder, text SHA-256), failures that keep the old version, search by BM25,
vector or both, and the `--json` documents."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from explorer import (
    DirectoryReader,
    ErrorCode,
    ExplorerError,
    load_documents,
    make_config,
    parse_manifest,
)
from explorer.store import Store
from explorer.store.schema import SCHEMA_1, STORE_VERSION
from tests import embedders
from tests.conftest import ROOT, ManifestBuilder, run_cli, sha256_hex
from tests.test_store import RUN1, RUN2

COUNTING = "tests.embedders:counting"
SCHEMAS = ROOT / "schemas"


@pytest.fixture(autouse=True)
def _fresh_record() -> None:
    embedders.EMBEDDED.clear()


def run_json(*args: str | Path) -> dict[str, Any]:
    result = run_cli(*args, "--json")
    assert result.code == 0, result.err
    data: dict[str, Any] = json.loads(result.out)
    return data


def ingest(manifest: Path, db: Path, embedder: str = COUNTING, *extra: str) -> dict[str, Any]:
    return run_json("ingest", manifest, "--db", db, "--embedder", embedder, *extra)


def search(
    db: Path, query: str, mode: str, tenant: str = "acme", embedder: str = COUNTING, k: int = 5
) -> list[dict[str, Any]]:
    found = run_json(
        "search",
        query,
        "--tenant",
        tenant,
        "--db",
        db,
        "--mode",
        mode,
        "--embedder",
        embedder,
        "-k",
        str(k),
    )
    hits: list[dict[str, Any]] = found["hits"]
    return hits


def plain(hit: dict[str, Any]) -> str:
    """A hit's snippet without FTS5's [match] brackets."""
    return str(hit["snippet"]).replace("[", "").replace("]", "")


def paragraphs(*texts: str) -> bytes:
    return ("# Policy\n\n" + "\n\n".join(texts) + "\n").encode()


def manifest_of(make_manifest: ManifestBuilder, files: dict[str, bytes]) -> Path:
    entries = [
        {
            "source_id": Path(name).stem,
            "version": sha256_hex(data)[:6],
            "path": name,
            "sha256": sha256_hex(data),
            "access_scope": "acme",
        }
        for name, data in files.items()
    ]
    return make_manifest(files, documents=entries)


FIVE = [f"Paragraph {n} says alpha{n} about refunds and parcels." for n in range(5)]


def test_an_unchanged_rerun_embeds_nothing(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    first = ingest(RUN1, db)
    distinct = len(set(embedders.EMBEDDED))
    assert first["vectors_computed"] == distinct == len(embedders.EMBEDDED)
    # warranty-copy is warranty's exact text: its chunks reuse warranty's vectors
    assert first["vectors_reused"] == 2
    embedders.EMBEDDED.clear()
    again = ingest(RUN1, db)
    assert (again["unchanged"], again["vectors_computed"], again["vectors_reused"]) == (6, 0, 0)
    assert embedders.EMBEDDED == []


def test_one_changed_paragraph_embeds_only_its_chunk(
    make_manifest: ManifestBuilder, tmp_path: Path
) -> None:
    db = tmp_path / "index.db"

    def ingest_paragraphs(*texts: str) -> dict[str, Any]:
        manifest = manifest_of(make_manifest, {"p.md": paragraphs(*texts)})
        return ingest(manifest, db, COUNTING, "--policy", "paragraph")

    ingest_paragraphs(*FIVE)
    assert len(embedders.EMBEDDED) == 5
    embedders.EMBEDDED.clear()
    run = ingest_paragraphs(*FIVE[:2], "Paragraph 2 now says something entirely new.", *FIVE[3:])
    assert (run["updated"], run["vectors_computed"], run["vectors_reused"]) == (1, 1, 4)
    assert embedders.EMBEDDED == ["Paragraph 2 now says something entirely new.\n"]


def test_a_text_two_tenants_share_is_embedded_once_and_served_per_tenant(
    make_manifest: ManifestBuilder, tmp_path: Path
) -> None:
    db = tmp_path / "index.db"
    text = paragraphs(*FIVE)
    manifest = make_manifest(
        {"acme.md": text, "globex.md": text},
        documents=[
            {
                "source_id": "policy",
                "version": "1",
                "path": f"{tenant}.md",
                "sha256": sha256_hex(text),
                "access_scope": tenant,
            }
            for tenant in ("acme", "globex")
        ],
    )
    run = ingest(manifest, db, COUNTING, "--policy", "paragraph")
    assert (run["added"], run["vectors_computed"], run["vectors_reused"]) == (2, 5, 5)
    with sqlite3.connect(db) as raw:
        assert raw.execute("SELECT count(*) FROM vectors").fetchone() == (5,)
        tenants = raw.execute("SELECT tenant, count(*) FROM chunks GROUP BY tenant").fetchall()
    assert tenants == [("acme", 5), ("globex", 5)]
    for tenant in ("acme", "globex"):
        hits = search(db, "alpha3 refunds", "vector", tenant=tenant)
        assert hits and hits[0]["snippet"].startswith("Paragraph 3")
    assert search(db, "alpha3", "hybrid", tenant="initech") == []


def test_a_failing_embedder_keeps_the_old_version_and_a_retry_resumes(
    make_manifest: ManifestBuilder, tmp_path: Path
) -> None:
    db = tmp_path / "index.db"
    v1 = {"policy.md": paragraphs(*FIVE), "other.md": paragraphs("Other text, version one.")}
    ingest(manifest_of(make_manifest, v1), db, COUNTING, "--policy", "paragraph")
    reworded = [f"Paragraph {n} now reads omega{n} instead." for n in range(5)]
    v2 = {"policy.md": paragraphs(*reworded), "other.md": paragraphs("Other text, version two.")}
    manifest = manifest_of(make_manifest, v2)
    embedders.EMBEDDED.clear()
    failing = "tests.embedders:failing_after_2"
    result = run_cli(
        "ingest", manifest, "--db", db, "--embedder", failing, "--policy", "paragraph", "--json"
    )
    assert result.code == 0, result.err
    failed = json.loads(result.out)
    # The policy failed after 2 of its 5 new vectors; the other document went on.
    assert (failed["updated"], failed["failed"], failed["vectors_computed"]) == (1, 1, 3)
    [status] = [d for d in failed["documents"] if d["source_id"] == "policy"]
    assert status["status"] == ErrorCode.EMBEDDING_FAILED.value
    assert "after 2 of 5 new vectors" in status["detail"] and "quota exceeded" in status["detail"]
    assert "warning: embedding_failed" not in result.err  # --json: the document says it
    # Search serves the old wording, by every mode; the other document's new one.
    for mode in ("bm25", "vector", "hybrid"):
        hits = search(db, "alpha1 omega1 paragraph", mode)
        policy = [hit for hit in hits if hit["source_id"] == "policy"]
        assert policy and all("alpha" in hit["snippet"] for hit in policy), mode
    assert search(db, "version two", "bm25")[0]["source_id"] == "other"
    history = run_json("history", "--db", db)
    [failure] = history["failures"]
    assert (failure["run_id"], failure["source_id"], failure["code"]) == (
        2,
        "policy",
        "embedding_failed",
    )
    assert history["runs"][1]["failed"] == 1
    with sqlite3.connect(db) as raw:
        states = raw.execute(
            "SELECT version, state FROM versions WHERE source_id = 'policy' ORDER BY version_id"
        ).fetchall()
    assert [state for _, state in states] == ["active", "failed"]
    # The retry computes only the three vectors the failed run did not.
    embedders.EMBEDDED.clear()
    retry = ingest(manifest, db, COUNTING, "--policy", "paragraph")
    assert (retry["updated"], retry["vectors_computed"], retry["vectors_reused"]) == (1, 3, 2)
    assert [f"{text}\n" for text in reworded[2:]] == embedders.EMBEDDED
    hits = search(db, "omega1", "bm25")
    assert hits[0]["source_id"] == "policy" and "omega1" in hits[0]["snippet"]


def test_an_embedder_of_the_wrong_shape_fails_the_document_not_the_run(
    make_manifest: ManifestBuilder, tmp_path: Path
) -> None:
    db = tmp_path / "index.db"
    result = run_cli(
        "ingest",
        manifest_of(make_manifest, {"p.md": paragraphs(*FIVE)}),
        "--db",
        db,
        "--embedder",
        "tests.embedders:wrong_shape",
    )
    assert result.code == 0
    assert "warning: embedding_failed: acme/p: " in result.err
    assert "shape (1, 31)" in result.err and "expected (1, 32)" in result.err
    assert (
        result.out.splitlines()[0] == "run 1: added 0, updated 0, unchanged 0, failed 1, deleted 0"
    )
    with Store(db) as store:
        assert store.counts()["chunks"] == 0


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("tests.embedders:nameless", "needs a name"),
        ("tests.embedders:broken_factory", "raised ValueError: no API key configured"),
        ("tests.no_such_module:factory", "cannot import"),
        ("tests.embedders:missing", "has no callable 'missing'"),
        ("https://example.com/embed", "package.module:factory"),
    ],
)
def test_an_unusable_embedder_is_refused_before_the_index_is_touched(
    tmp_path: Path, spec: str, says: str
) -> None:
    db = tmp_path / "index.db"
    result = run_cli("ingest", RUN1, "--db", db, "--embedder", spec)
    assert result.code == 2
    assert result.err.startswith("error: invalid_embedder: ") and says in result.err
    assert not db.exists()


# Questions that share no word with the chunk that answers them.
PARAPHRASES = ["cash reimbursement timeframe", "how long until my money comes"]


@pytest.mark.parametrize("question", PARAPHRASES)
def test_a_paraphrase_is_found_by_vector_and_hybrid_not_bm25(tmp_path: Path, question: str) -> None:
    db = tmp_path / "index.db"
    run_cli("ingest", RUN1, "--db", db)  # WordLlama, the default
    answer = ("refund-policy", "Eligibility")
    assert search(db, question, "bm25", embedder="wordllama") == []
    for mode in ("vector", "hybrid"):
        top = search(db, question, mode, embedder="wordllama", k=3)[0]
        assert (top["source_id"], top["section"]) == answer, mode
        assert "within 30 days" in top["snippet"]
        assert top["version"] == "1" and top["start"] < top["end"] and top["start_line"] >= 1


def test_superseded_and_deleted_chunks_never_come_back_even_from_the_cache(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    ingest(RUN1, db)
    asked = {
        mode: search(db, "refund within 30 days; support hours", mode, k=20)
        for mode in ("bm25", "vector", "hybrid")
    }
    assert any("30 days" in plain(hit) for hit in asked["vector"])
    ingest(RUN2, db)  # the refund policy changes to 14 days, contact is deleted
    for mode in asked:
        hits = search(db, "refund within 30 days; support hours", mode, k=20)
        assert not any("30 days" in plain(hit) for hit in hits), mode
        assert not any(hit["source_id"] == "contact" for hit in hits), mode
        assert {hit["version"] for hit in hits if hit["source_id"] == "refund-policy"} == {"2"}


def test_changing_the_embedder_re_embeds_and_vectors_need_one(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    none = ingest(RUN1, db, "none")
    assert (none["embedder"], none["vectors_computed"]) == (None, 0)
    assert search(db, "refund", "vector") == []  # no chunk has a vector of this embedder
    result = run_cli("search", "refund", "--tenant", "acme", "--db", db, "--embedder", "none")
    assert result.code == 2 and "needs an embedder" in result.err
    switched = ingest(RUN1, db)
    assert (switched["updated"], switched["unchanged"]) == (6, 0)
    assert search(db, "refund", "vector")


def test_the_json_documents_satisfy_their_schemas(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    documents = {
        "store-ingest": ingest(RUN1, db),
        "store-search": run_json(
            "search", "refund", "--tenant", "acme", "--db", db, "--embedder", COUNTING
        ),
    }
    ingest(RUN2, db)
    documents["store-history"] = run_json("history", "--db", db)
    for name, document in documents.items():
        schema = json.loads((SCHEMAS / f"{name}.schema.json").read_text("utf-8"))
        jsonschema.validate(document, schema)
    hit = documents["store-search"]["hits"][0]
    assert set(hit) >= {
        "source_id",
        "version",
        "start",
        "end",
        "start_line",
        "end_line",
        "section",
        "score",
    }
    assert documents["store-search"]["mode"] == "hybrid"
    assert documents["store-history"]["receipts"][0]["source_id"] == "contact"


def test_history_shows_computed_and_reused_vectors(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    ingest(RUN1, db)
    ingest(RUN1, db)
    lines = run_cli("history", "--db", db).out.splitlines()
    assert lines[0].split()[-1] == "vectors"
    assert lines[1].endswith("new, 2 reused") and lines[2].endswith("0 new, 0 reused")


NETWORK_BLOCKED = """
import socket, sys
def refuse(*args, **kwargs):
    raise OSError("network is blocked in this test")
socket.socket.connect = refuse
socket.create_connection = refuse
socket.getaddrinfo = refuse
from explorer.retrieval.embedding import load_embedder, embed_texts
embedder = load_embedder("wordllama")
vectors = embed_texts(embedder, ["Customers may request a refund.", "Parcels ship daily."])
print(embedder.name, vectors.shape)
"""


def test_wordllama_loads_from_its_package_with_the_network_blocked(tmp_path: Path) -> None:
    env = {**os.environ, "HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-c", NETWORK_BLOCKED],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[-2:] == ["(2,", "256)"]
    assert result.stdout.startswith("wordllama-")
    assert not (tmp_path / ".cache" / "wordllama").exists()  # nothing cached, nothing fetched


def test_a_version_1_store_is_migrated_on_open(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    with sqlite3.connect(db) as raw:
        raw.executescript(SCHEMA_1)  # as store version 1 made its files
        raw.executescript(
            "INSERT INTO meta VALUES ('app', 'chunk-boundary-explorer'), ('store_version', '1');"
            "INSERT INTO runs (run_id, started, finished, config, added, documents_before, "
            " chunks_before, documents_after, chunks_after) "
            " VALUES (1, '2026-01-01T00:00:00+00:00', '2026-01-01T00:00:01+00:00', '{}', 1, "
            " 0, 0, 1, 1);"
            "INSERT INTO versions VALUES (1, 'acme', 'old', '1', 'rev', 'cfg', 'active', 1, 1);"
            "INSERT INTO documents VALUES ('acme', 'old', 1);"
            "INSERT INTO chunks VALUES (1, 'key', 1, 'acme', 'old', 'cid', 0, 4, 24, 3, 3, "
            " 'Kept through the move', 'sha');"
            "INSERT INTO chunks_fts (rowid, text) VALUES (1, 'Kept through the move');"
            "INSERT INTO search_cache VALUES ('acme', 'x', 5, '[]');"
        )
    hits = search(db, "kept move", "bm25")
    assert [(hit["source_id"], hit["section"], hit["start"]) for hit in hits] == [("old", "", 4)]
    with sqlite3.connect(db) as raw:
        assert raw.execute("SELECT value FROM meta WHERE key = 'store_version'").fetchone() == (
            STORE_VERSION,
        )
        assert raw.execute("SELECT count(*) FROM search_cache WHERE query = 'x'").fetchone() == (0,)
    history = run_json("history", "--db", db)
    assert history["runs"][0]["embedder"] is None and history["runs"][0]["added"] == 1
    run = ingest(RUN1, db)  # the new code writes into the migrated file
    assert run["added"] == 6 and run["vectors_computed"] > 0
    with Store(db) as store:
        assert store.integrity() == "ok"


def test_verification_refuses_a_staged_version_whose_vector_went_missing(
    make_manifest: ManifestBuilder, tmp_path: Path
) -> None:
    """The vectors are read back before the switch: one lost between the embedding stage
    and verification stops the run, and the old version stays served."""
    db = tmp_path / "index.db"
    ingest(manifest_of(make_manifest, {"p.md": paragraphs(*FIVE)}), db, COUNTING)
    manifest_path = manifest_of(make_manifest, {"p.md": paragraphs("Entirely new words.")})
    manifest = parse_manifest(manifest_path.read_bytes())
    load = load_documents(manifest, DirectoryReader(manifest_path.parent))

    def lose_a_vector(point: str) -> None:
        if point == "embedded-batch":
            with sqlite3.connect(db) as other:
                other.execute("DELETE FROM vectors WHERE rowid = (SELECT max(rowid) FROM vectors)")

    with Store(db) as store, pytest.raises(ExplorerError) as refused:
        store.ingest(
            manifest,
            load,
            make_config("heading-aware"),
            embedder=embedders.counting(),
            checkpoint=lose_a_vector,
        )
    assert refused.value.code is ErrorCode.INVALID_STORE
    assert "did not verify" in refused.value.detail
    hits = search(db, "alpha2 refunds", "bm25")
    assert hits and hits[0]["version"] == sha256_hex(paragraphs(*FIVE))[:6]
