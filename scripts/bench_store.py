"""Cold ingest and unchanged re-run of a generated corpus, printed as figures.

    make bench-store    (or: PYTHONPATH=. .venv/bin/python scripts/bench_store.py [N])

Generates N (default 1,000) small Markdown documents in a temporary folder, then times,
in one process: loading (digests verified), a cold ingest into a new index, a re-run of
the same manifest (which should cost little beyond reading and hashing), searches, and
a run that deletes one document (its purge rebuilds the file).
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
import tempfile
import time
from pathlib import Path

from explorer import (
    DirectoryReader,
    ErrorCode,
    ExplorerError,
    load_documents,
    make_config,
    parse_manifest,
)
from explorer.store import Store

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
        documents.append({"source_id": f"doc-{n:05d}", "version": "1", "path": path.name,
                          "sha256": hashlib.sha256(data).hexdigest(),
                          "access_scope": f"tenant-{n % 3}"})  # fmt: skip
    manifest = folder / "manifest.json"
    manifest.write_text(json.dumps({"manifest_version": 1, "documents": documents}), "utf-8")
    return manifest


def timed_run(manifest_path: Path, db: Path) -> tuple[float, str]:
    began = time.perf_counter()
    manifest = parse_manifest(manifest_path.read_bytes())
    load = load_documents(manifest, DirectoryReader(manifest_path.parent))
    with Store(db) as store:
        summary = store.ingest(manifest, load, make_config("heading-aware"))
    return time.perf_counter() - began, summary.line()


def timed_deletion(manifest_path: Path, db: Path) -> tuple[float, str]:
    """Delete the first document: the run's purge (FTS optimize, VACUUM) dominates."""
    raw = json.loads(manifest_path.read_text("utf-8"))
    first = raw["documents"][0]
    raw["documents"] = raw["documents"][1:]
    raw["deleted"] = [{"source_id": first["source_id"], "access_scope": first["access_scope"]}]
    deleting = manifest_path.with_name("manifest-delete.json")
    deleting.write_text(json.dumps(raw), "utf-8")
    return timed_run(deleting, db)


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
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        manifest = generate(folder, count)
        size = sum(p.stat().st_size for p in folder.glob("*.md")) / 1e6
        db = folder / "index.db"
        cold, cold_line = timed_run(manifest, db)
        again, again_line = timed_run(manifest, db)
        began = time.perf_counter()
        load_documents(parse_manifest(manifest.read_bytes()), DirectoryReader(folder))
        load_only = time.perf_counter() - began
        print(f"{count} documents, {size:.2f} MB, heading-aware 220, 3 tenants")
        print(f"cold ingest      {cold:8.3f} s   {cold_line}")
        print(f"unchanged re-run {again:8.3f} s   {again_line}")
        print(f"load and verify  {load_only:8.3f} s   (the floor of any re-run)")
        print(f"re-run / cold    {again / cold:8.3f}")
        print(f"index file       {db.stat().st_size / 1e6:8.2f} MB")
        first, cached, refused = timed_searches(db)
        print(f"search           {first:8.2f} ms first, {cached:.2f} ms cached, "
              f"{refused:.2f} ms to refuse 15,000 words")  # fmt: skip
        deletion, deletion_line = timed_deletion(manifest, db)
        print(f"delete + purge   {deletion:8.3f} s   {deletion_line}")
        print(f"index file       {db.stat().st_size / 1e6:8.2f} MB after the purge")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
