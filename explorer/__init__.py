"""Chunk Boundary Explorer: see how chunking policies cut documents, and prove which keep
what belongs together.

The names exported here are the public API, in the order of the work:

- a manifest and its documents: `parse_manifest`, `load_documents` (each file checked
  against the SHA-256 the manifest pins, through a `DirectoryReader` or `MappingReader`),
  giving a `LoadResult` of `DocumentRecord`s and a `DocumentStatus` per document;
- chunking: the policy registry `POLICIES`, `make_config` / `parse_config` (a
  `ChunkConfig`), grammar v1's `sections` and `paragraphs`, `build_index` and
  `document_chunks` (an `Index` of `ChunkRecord`s), and `chunk_texts` (one text's
  chunks, outside any manifest: what `export --snippet` calls);
- other pipelines: live columns that call a chunking library (`LIBRARY_POLICIES`), and
  chunk files another pipeline wrote (`ChunkFile`, placed in the documents by `place`);
- proving: `validate_index` (an index is exactly what its own documents and config
  give; `validate_index_file` proves a file of any size without holding its chunks),
  `check_against_sources` (and what its pinned files give), chunk maps
  (`build_chunk_map`, `decode_chunk_map`, `check_against`);
- comparing: `explore` and `compare` (every policy's `Column` and the `Report`), span
  checks (`resolve_check`, `evaluate_checks`), and retrieval measured on questions
  (`evaluate`);
- the persistent, incremental index: `Store`, and the `Embedder` that gives its chunks
  vectors (`load_embedder`: WordLlama, none, or `package.module:factory`);
- identities and refusals: `digest`, `sha`, and `ExplorerError` with its `ErrorCode`.

The core does no I/O but reading sources through a `SourceReader` and the SQLite file of
a `Store`. Every other module is an implementation detail; the two front ends
(`explorer.cli`, `app.py`) also use the presentation helpers in `explorer.render`,
`explorer.display` and `explorer.uploads`. docs/contract.md states what all of it
promises. Where code says "the seed" it means the chunking exercise this project was
started from, whose fixture and recorded ids (`fixtures/aster/`) the core reproduces.
"""

from .checking.checks import (
    CheckResult,
    ResolvedCheck,
    evaluate_check,
    evaluate_checks,
    resolve_check,
)
from .checking.chunk_map import build_chunk_map, check_against, decode_chunk_map
from .checking.report import Report
from .checking.validate import (
    ValidatedFile,
    check_against_sources,
    validate_index,
    validate_index_bytes,
    validate_index_file,
)
from .chunking.config import ChunkConfig
from .chunking.imports import ChunkFile, Placement, place
from .chunking.index import ChunkRecord, Index, build_index, chunk_texts, document_chunks
from .chunking.policies import LIBRARY_POLICIES, POLICIES, Policy, make_config, parse_config
from .digests import digest, sha
from .errors import ErrorCode, ExplorerError
from .grammars.v1 import Section, paragraphs, sections
from .limits import DEFAULT_LIMITS, Limits
from .pipeline import Column, Exploration, Settings, compare, explore
from .retrieval.embedding import Embedder, load_embedder
from .retrieval.evaluate import Evaluation, columns_of, evaluate, sweep_columns
from .retrieval.questions import (
    PlacedQuestion,
    Question,
    QuestionSet,
    new_question,
    parse_questions,
    place_questions,
)
from .sources.documents import DocumentRecord
from .sources.loading import (
    DEFAULT_MAX_DOCUMENT_BYTES,
    DirectoryReader,
    DocumentStatus,
    LoadResult,
    MappingReader,
    SourceReader,
    load_documents,
)
from .sources.manifest import Manifest, ManifestDocument, ManifestSpan, SpanCheck, parse_manifest
from .store import Store

__all__ = [
    "DEFAULT_LIMITS",
    "DEFAULT_MAX_DOCUMENT_BYTES",
    "LIBRARY_POLICIES",
    "POLICIES",
    "CheckResult",
    "ChunkConfig",
    "ChunkFile",
    "ChunkRecord",
    "Column",
    "DirectoryReader",
    "DocumentRecord",
    "DocumentStatus",
    "Embedder",
    "ErrorCode",
    "Evaluation",
    "Exploration",
    "ExplorerError",
    "Index",
    "Limits",
    "LoadResult",
    "Manifest",
    "ManifestDocument",
    "ManifestSpan",
    "MappingReader",
    "PlacedQuestion",
    "Placement",
    "Policy",
    "Question",
    "QuestionSet",
    "Report",
    "ResolvedCheck",
    "Section",
    "Settings",
    "SourceReader",
    "SpanCheck",
    "Store",
    "ValidatedFile",
    "build_chunk_map",
    "build_index",
    "check_against",
    "check_against_sources",
    "chunk_texts",
    "columns_of",
    "compare",
    "decode_chunk_map",
    "digest",
    "document_chunks",
    "evaluate",
    "evaluate_check",
    "evaluate_checks",
    "explore",
    "load_documents",
    "load_embedder",
    "make_config",
    "new_question",
    "paragraphs",
    "parse_config",
    "parse_manifest",
    "parse_questions",
    "place",
    "place_questions",
    "resolve_check",
    "sections",
    "sha",
    "sweep_columns",
    "validate_index",
    "validate_index_bytes",
    "validate_index_file",
]
