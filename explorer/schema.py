"""JSON Schemas of the wire formats, generated from the models.

`python -m explorer.schema [DIR]` writes them (default `schemas/`); a test keeps the
checked-in copies current.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, TypeAdapter

from .checking.chunk_map import ChunkMap
from .checking.report import Report
from .chunking.index import Index
from .jsonio import dump_json
from .retrieval.evaluate import EVALUATION
from .retrieval.questions import QuestionSet
from .sources.manifest import Manifest
from .store.wire import DocumentsOutput, HistoryOutput, IngestOutput, SearchOutput

_MODELS: dict[str, type[BaseModel]] = {
    "manifest": Manifest,
    "store-ingest": IngestOutput,
    "store-search": SearchOutput,
    "store-history": HistoryOutput,
    "store-documents": DocumentsOutput,
    "questions": QuestionSet,
}
# Shapes declared as TypedDicts, validated by a TypeAdapter.
_ADAPTERS: dict[str, TypeAdapter[Any]] = {
    "chunk-map": TypeAdapter(ChunkMap),
    "index": TypeAdapter(Index),
    "report": TypeAdapter(Report),
    "evaluation": EVALUATION,
}


def json_schemas() -> dict[str, dict[str, Any]]:
    """File name to schema, for every wire format."""
    schemas = {}
    generators: list[tuple[str, Callable[[], dict[str, Any]]]] = [
        (name, model.model_json_schema) for name, model in _MODELS.items()
    ]
    generators += [(name, adapter.json_schema) for name, adapter in _ADAPTERS.items()]
    for name, generate in generators:
        schema = generate()
        schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        schemas[f"{name}.schema.json"] = schema
    return schemas


def main(argv: list[str]) -> int:
    folder = Path(argv[0] if argv else "schemas")
    folder.mkdir(parents=True, exist_ok=True)
    for name, schema in json_schemas().items():
        (folder / name).write_text(dump_json(schema), encoding="utf-8")
        print(f"wrote {folder / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
