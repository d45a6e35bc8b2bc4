"""The seed's reference algorithm as a whole process, for `make bench` to time.

    python scripts/seed_reference.py MANIFEST POLICY OUT

The chunking and identities below are the seed's own code (shared/seeds/000_…txt,
`digest` … `index_from_documents`), re-indented (the seed text lost its indentation)
and otherwise unchanged. What the seed imports and does not show is written here in its
plainest form: the loader (`load_documents`: read, verify SHA-256, strict UTF-8, drop a
BOM, CRLF/CR to LF), document records as the explorer's (the seed's stricter metadata
check is left out so that the bench's manifests load), and its CLI, which "builds an
in-memory index and writes JSON" (`json.dumps(indent=2)`, as the seed's recorded result).
Standard library only, so the process pays no import but its own.
"""

# mypy: allow-untyped-defs, allow-untyped-calls
from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

CONFIGS: dict[str, dict[str, Any]] = {
    "fixed-char": {"strategy": "fixed-char", "version": 1, "max_chars": 80},
    "paragraph": {"strategy": "paragraph", "version": 1, "max_chars": None},
    "heading-aware": {"strategy": "heading-aware", "version": 1, "max_chars": 220},
}


class IngestionError(Exception):
    pass


# --- the seed, verbatim but for indentation -------------------------------------------


def digest(value):
    return hashlib.sha256(
        json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    ).hexdigest()


def sha(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def config_checked(config):
    try:
        supported = isinstance(config, dict) and any(
            digest(config) == digest(c) for c in CONFIGS.values()
        )
    except (TypeError, ValueError, OverflowError):
        supported = False
    if not supported:
        raise IngestionError("unsupported_chunk_config")
    return dict(config)


def sections(document):
    text = document["text"]
    headings = list(re.finditer(r"^#{1,6} (.+)(?:\n|$)", text, re.MULTILINE))
    if not headings or headings[0].start() != 0:
        raise IngestionError("heading_required")
    for position, heading in enumerate(headings):
        start = heading.end()
        end = headings[position + 1].start() if position + 1 < len(headings) else len(text)
        if text[start:end].strip():
            yield {
                "section_id": digest(
                    {
                        "document_revision": document["document_revision"],
                        "heading_start": heading.start(),
                    }
                ),
                "section_title": heading.group(1),
                "start": start,
                "end": end,
            }


def paragraph_spans(text, start, end):
    spans = []
    cursor = start
    begin = None
    last = None
    for line in text[start:end].splitlines(keepends=True):
        if line.strip():
            if begin is None:
                begin = cursor
            last = cursor + len(line)
        elif begin is not None:
            spans.append((begin, last))
            begin = None
        cursor += len(line)
    if begin is not None:
        spans.append((begin, last))
    return spans


def chunks_for(document, config):
    text = document["text"]
    output: list[dict[str, Any]] = []
    for section in sections(document):
        paragraphs = paragraph_spans(text, section["start"], section["end"])
        if config["strategy"] == "fixed-char":
            spans = [
                (start, min(start + config["max_chars"], section["end"]))
                for start in range(section["start"], section["end"], config["max_chars"])
                if text[start : min(start + config["max_chars"], section["end"])].strip()
            ]
        elif config["strategy"] == "paragraph":
            spans = paragraphs
        else:
            spans = []
            for start, end in paragraphs:
                if spans and end - spans[-1][0] <= config["max_chars"]:
                    spans[-1] = (spans[-1][0], end)
                else:
                    spans.append((start, end))
        for start, end in spans:
            content = text[start:end]
            payload = {
                "source_id": document["source_id"],
                "version": document["version"],
                "document_revision": document["document_revision"],
                "section_id": section["section_id"],
                "section_title": section["section_title"],
                "order": len(output),
                "start": start,
                "end": end,
                "start_line": text.count("\n", 0, start) + 1,
                "end_line": text.count("\n", 0, end - 1) + 1,
                "text": content,
                "text_sha256": sha(content),
            }
            output.append({"chunk_id": digest({"config": config, **payload}), **payload})
    return output


def index_from_documents(documents, config):
    config = config_checked(config)
    documents = sorted(documents, key=lambda d: d["source_id"])
    chunks = [chunk for document in documents for chunk in chunks_for(document, config)]
    body = {
        "schema_version": 1,
        "execution_mode": "offline-synthetic-source-processing",
        "config": config,
        "documents": documents,
        "chunks": chunks,
    }
    return {**body, "index_id": digest(body)}


# --- what the seed imports or runs around it, in its plainest form ---------------------


def load_documents(manifest_path: Path) -> list[dict[str, Any]]:
    manifest = json.loads(manifest_path.read_bytes())
    documents = []
    for entry in manifest["documents"]:
        data = (manifest_path.parent / entry["path"]).read_bytes()
        if hashlib.sha256(data).hexdigest() != entry["sha256"]:
            raise IngestionError("source_digest_mismatch")
        text = data.decode("utf-8")
        text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
        try:
            next(sections({"text": text, "document_revision": ""}), None)
        except IngestionError:
            continue  # refused, as `--skip-failed` leaves it out
        record = {**entry, "text": text, "normalized_text_sha256": sha(text)}
        record["document_revision"] = digest(
            {k: v for k, v in record.items() if k not in ("text", "document_revision")}
        )
        documents.append(record)
    return documents


def main(argv: list[str]) -> int:
    manifest, policy, out = argv
    index = index_from_documents(load_documents(Path(manifest)), CONFIGS[policy])
    Path(out).write_text(json.dumps(index, indent=2, ensure_ascii=False) + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
