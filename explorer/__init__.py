"""Chunk Boundary Explorer: see how chunking policies cut documents, and prove which keep
what belongs together. Pure functions; the command line and the app only call these."""

from .checks import CheckResult, ResolvedCheck, evaluate_check, evaluate_checks, resolve_check
from .chunk_map import build_chunk_map, check_against, decode_chunk_map
from .config import ChunkConfig
from .digests import digest, sha
from .documents import DocumentRecord
from .errors import ErrorCode, ExplorerError
from .evaluate import (
    Evaluation,
    PlacedQuestion,
    Question,
    QuestionSet,
    columns_of,
    evaluate,
    new_question,
    parse_questions,
    place_questions,
    sweep_columns,
)
from .explore import Column, Exploration, Settings, compare, explore
from .grammar import Section, paragraphs, sections
from .index import ChunkRecord, Index, build_index, document_chunks
from .limits import DEFAULT_LIMITS, Limits
from .loading import (
    DEFAULT_MAX_DOCUMENT_BYTES,
    DirectoryReader,
    DocumentStatus,
    LoadResult,
    MappingReader,
    SourceReader,
    load_documents,
)
from .manifest import Manifest, ManifestDocument, ManifestSpan, SpanCheck, parse_manifest
from .policies import POLICIES, Policy, make_config, parse_config
from .report import Report
from .store import Store
from .validate import check_against_sources, validate_index, validate_index_bytes

__all__ = [
    "DEFAULT_LIMITS",
    "DEFAULT_MAX_DOCUMENT_BYTES",
    "POLICIES",
    "CheckResult",
    "ChunkConfig",
    "ChunkRecord",
    "Column",
    "DirectoryReader",
    "DocumentRecord",
    "DocumentStatus",
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
    "build_chunk_map",
    "build_index",
    "check_against",
    "check_against_sources",
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
    "make_config",
    "new_question",
    "paragraphs",
    "parse_config",
    "parse_manifest",
    "parse_questions",
    "place_questions",
    "resolve_check",
    "sections",
    "sha",
    "sweep_columns",
    "validate_index",
    "validate_index_bytes",
]
