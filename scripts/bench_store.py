"""Cold ingest and unchanged re-run of a generated corpus, printed as figures.

    make bench-store    (or: PYTHONPATH=. .venv/bin/python scripts/bench_store.py [N])

Generates N (default 1,000) small Markdown documents in a temporary folder, then times,
in one process: loading WordLlama, loading (digests verified), a cold ingest with
WordLlama into a new index, a re-run of the same manifest (which should cost little
beyond reading and hashing, and embed nothing), a run in which 10 documents each change
one paragraph, searches by each mode, a run that deletes one document (its purge
rebuilds the file), and brute-force cosine over stored vectors at growing sizes.
"""

from __future__ import annotations

import hashlib
import json
import random
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from explorer import (
    DirectoryReader,
    Embedder,
    ErrorCode,
    ExplorerError,
    load_documents,
    load_embedder,
    make_config,
    parse_manifest,
)
from explorer.retrieval.embedding import from_blobs
from explorer.store import SearchMode, Store

WORDS = [
    "refund",
    "delivery",
    "warranty",
    "parcel",
    "express",
    "invoice",
    "support",
    "device",
    "return",
    "policy",
    "customer",
    "label",
    "weight",
    "zone",
    "standard",
    "credit",
    "inspection",
    "warehouse",
    "serial",
    "fault",
    "claim",
]


def generate(folder: Path, count: int) -> Path:
    rng = random.Random(7)
    documents = []
    for n in range(count):
        sections = []
        for s in range(rng.randint(2, 5)):
            paragraphs = [
                " ".join(rng.choice(WORDS) for _ in range(rng.randint(12, 60))) + "."
                for _ in range(rng.randint(1, 4))
            ]
            sections.append(f"## Section {s}\n\n" + "\n\n".join(paragraphs))
        data = (f"# Document {n}\n\n" + "\n\n".join(sections) + "\n").encode()
        path = folder / f"doc-{n:05d}.md"
        path.write_bytes(data)
        documents.append(
            {
                "source_id": f"doc-{n:05d}",
                "version": "1",
                "path": path.name,
                "sha256": hashlib.sha256(data).hexdigest(),
                "access_scope": f"tenant-{n % 3}",
            }
        )
    manifest = folder / "manifest.json"
    manifest.write_text(json.dumps({"manifest_version": 1, "documents": documents}), "utf-8")
    return manifest


def timed_run(manifest_path: Path, db: Path, embedder: Embedder) -> tuple[float, str]:
    began = time.perf_counter()
    manifest = parse_manifest(manifest_path.read_bytes())
    load = load_documents(manifest, DirectoryReader(manifest_path.parent))
    with Store(db) as store:
        summary = store.ingest(manifest, load, make_config("heading-aware"), embedder=embedder)
    return time.perf_counter() - began, f"{summary.line()}; {summary.vectors_line()}"


def one_paragraph_updates(manifest_path: Path, count: int) -> Path:
    """`count` documents whose first paragraph gains a sentence: one chunk each changes."""
    raw = json.loads(manifest_path.read_text("utf-8"))
    for entry in raw["documents"][:count]:
        text = (
            (manifest_path.parent / entry["path"])
            .read_text("utf-8")
            .replace(
                "\n\n## Section 0\n\n", "\n\n## Section 0\n\nA sentence added in the update. ", 1
            )
        )
        entry["path"] = entry["path"].replace(".md", "-v2.md")
        (manifest_path.parent / entry["path"]).write_text(text, "utf-8")
        entry["sha256"] = hashlib.sha256(text.encode()).hexdigest()
        entry["version"] = "2"
    updated = manifest_path.with_name("manifest-updates.json")
    updated.write_text(json.dumps(raw), "utf-8")
    return updated


def timed_modes(db: Path, embedder: Embedder) -> dict[str, float]:
    """Milliseconds per search mode (the first asking of each: nothing cached)."""
    times = {}
    with Store(db) as store:
        for n, mode in enumerate(SearchMode):
            began = time.perf_counter()
            store.search(f"parcel claim inspection {n}", "tenant-0", 10, mode, embedder)
            times[mode.value] = (time.perf_counter() - began) * 1e3
    return times


def brute_force(sizes: tuple[int, ...], dimensions: int = 256) -> list[tuple[int, float, float]]:
    """Per size: milliseconds to read that many float32 blobs from SQLite and to rank them
    by cosine (matrix product and partial sort), as a vector search does."""
    rng = np.random.default_rng(7)
    results = []
    with tempfile.TemporaryDirectory() as scratch:
        for size in sizes:
            path = Path(scratch) / f"v{size}.db"
            with sqlite3.connect(path) as db:
                db.execute("CREATE TABLE vectors (rowid INTEGER PRIMARY KEY, vector BLOB)")
                for begin in range(0, size, 50_000):
                    block = rng.standard_normal((min(50_000, size - begin), dimensions))
                    db.executemany(
                        "INSERT INTO vectors (vector) VALUES (?)",
                        [(row.astype("<f4").tobytes(),) for row in block],
                    )
            query = rng.standard_normal(dimensions).astype(np.float32)
            with sqlite3.connect(path) as db:
                began = time.perf_counter()
                blobs = [row[0] for row in db.execute("SELECT vector FROM vectors")]
                read = time.perf_counter() - began
                began = time.perf_counter()
                scores = from_blobs(blobs, dimensions) @ query
                np.argpartition(-scores, 9)[:10]
                ranked = time.perf_counter() - began
            path.unlink()
            results.append((size, read * 1e3, ranked * 1e3))
    return results


def timed_deletion(manifest_path: Path, db: Path, embedder: Embedder) -> tuple[float, str]:
    """Delete the first document: the run's purge (FTS optimize, VACUUM) dominates."""
    raw = json.loads(manifest_path.read_text("utf-8"))
    first = raw["documents"][0]
    raw["documents"] = raw["documents"][1:]
    raw["deleted"] = [{"source_id": first["source_id"], "access_scope": first["access_scope"]}]
    deleting = manifest_path.with_name("manifest-delete.json")
    deleting.write_text(json.dumps(raw), "utf-8")
    return timed_run(deleting, db, embedder)


def timed_searches(db: Path) -> tuple[float, float, float]:
    """Milliseconds: a first search, the same one answered from the cache, and a query
    of 15,000 distinct words refused at the term limit."""
    with Store(db) as store:
        began = time.perf_counter()
        store.search("refund warranty parcel", "tenant-0", 10)
        cold = time.perf_counter() - began
        began = time.perf_counter()
        store.search("refund warranty parcel", "tenant-0", 10)
        cached = time.perf_counter() - began
        began = time.perf_counter()
        try:
            store.search(" ".join(f"w{n}" for n in range(15_000)), "tenant-0", 10)
        except ExplorerError as error:
            assert error.code is ErrorCode.INVALID_QUERY, error
        else:
            raise SystemExit("a query of 15,000 distinct words was not refused")
        refused = time.perf_counter() - began
    return cold * 1e3, cached * 1e3, refused * 1e3


def main(argv: list[str]) -> int:
    count = int(argv[0]) if argv else 1000
    began = time.perf_counter()
    embedder = load_embedder("wordllama")
    assert embedder is not None
    loaded = time.perf_counter() - began
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        manifest = generate(folder, count)
        size = sum(p.stat().st_size for p in folder.glob("doc-?????.md")) / 1e6
        db = folder / "index.db"
        cold, cold_line = timed_run(manifest, db, embedder)
        again, again_line = timed_run(manifest, db, embedder)
        began = time.perf_counter()
        load_documents(parse_manifest(manifest.read_bytes()), DirectoryReader(folder))
        load_only = time.perf_counter() - began
        print(f"{count} documents, {size:.2f} MB, heading-aware 220, 3 tenants, {embedder.name}")
        print(f"load WordLlama   {loaded:8.3f} s   (import and weights, once per process)")
        print(f"cold ingest      {cold:8.3f} s   {cold_line}")
        print(f"unchanged re-run {again:8.3f} s   {again_line}")
        print(f"load and verify  {load_only:8.3f} s   (the floor of any re-run)")
        print(f"re-run / cold    {again / cold:8.3f}   (goal: at most 0.15)")
        updated = one_paragraph_updates(manifest, 10)
        updates, updates_line = timed_run(updated, db, embedder)
        print(f"10 one-paragraph updates {updates:8.3f} s   {updates_line}")
        print(f"index file       {db.stat().st_size / 1e6:8.2f} MB")
        modes = timed_modes(db, embedder)
        print("search by mode   " + ", ".join(f"{m} {t:.1f} ms" for m, t in modes.items()))
        first, cached, refused = timed_searches(db)
        print(
            f"search           {first:8.2f} ms first, {cached:.2f} ms cached, "
            f"{refused:.2f} ms to refuse 15,000 words"
        )
        deletion, deletion_line = timed_deletion(updated, db, embedder)
        print(f"delete + purge   {deletion:8.3f} s   {deletion_line}")
        print(f"index file       {db.stat().st_size / 1e6:8.2f} MB after the purge")
    for size, read, ranked in brute_force((10_000, 100_000, 300_000)):
        print(
            f"brute-force cosine over {size:>7,} vectors (256-d): read {read:7.1f} ms, "
            f"rank {ranked:6.1f} ms"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
