"""The one exception type of the core, with stable machine codes (docs/contract.md §11;
the README's table says what each means)."""

from __future__ import annotations

from enum import StrEnum


class ErrorCode(StrEnum):
    """Stable codes: scripts and tests match on these, people read the detail."""

    # Manifest (docs/contract.md §2)
    INVALID_MANIFEST = "invalid_manifest"
    PATH_OUTSIDE_MANIFEST = "path_outside_manifest"
    SPAN_QUOTE_NOT_FOUND = "span_quote_not_found"
    SPAN_QUOTE_AMBIGUOUS = "span_quote_ambiguous"
    SPAN_OUT_OF_RANGE = "span_out_of_range"
    # Loading a document (docs/contract.md §3), in the order they are checked
    SOURCE_NOT_FOUND = "source_not_found"
    DOCUMENT_TOO_LARGE = "document_too_large"
    SOURCE_DIGEST_MISMATCH = "source_digest_mismatch"
    NOT_UTF8 = "not_utf8"
    NUL_BYTE = "nul_byte"
    EMPTY_DOCUMENT = "empty_document"
    # Grammar (docs/contract.md §4)
    HEADING_REQUIRED = "heading_required"
    # Policies and indexes (docs/contract.md §5-6)
    UNSUPPORTED_CHUNK_CONFIG = "unsupported_chunk_config"
    INVALID_CHUNK_INDEX = "invalid_chunk_index"
    INVALID_CHUNK_MAP = "invalid_chunk_map"
    # Imported chunk files (docs/contract.md §5c)
    INVALID_CHUNK_FILE = "invalid_chunk_file"
    CHUNK_NOT_FOUND = "chunk_not_found"
    # Limits: a request that asks for more work than allowed (explorer/limits.py)
    TOO_MANY_CHUNKS = "too_many_chunks"
    TOO_MANY_SPAN_CHECKS = "too_many_span_checks"
    # A text the tokenizer cannot count (explorer/chunking/tokens.py)
    UNCOUNTABLE_TEXT = "uncountable_text"
    # The persistent index (extensions)
    INVALID_STORE = "invalid_store"
    DELETE_UNKNOWN_DOCUMENT = "delete_unknown_document"
    STORE_BUSY = "store_busy"
    INVALID_QUERY = "invalid_query"
    NOT_ALLOWED = "not_allowed"
    INVALID_EMBEDDER = "invalid_embedder"
    EMBEDDING_FAILED = "embedding_failed"
    # Measuring retrieval (explorer/retrieval/)
    INVALID_QUESTIONS = "invalid_questions"
    INVALID_GENERATOR = "invalid_generator"
    GENERATION_FAILED = "generation_failed"
    # Deciding between columns (explorer/retrieval/decide.py, `evaluate`'s options)
    INVALID_BUDGET = "invalid_budget"
    INVALID_BOOTSTRAP = "invalid_bootstrap"
    UNKNOWN_METRIC = "unknown_metric"
    REPORT_FOLDER_MISSING = "report_folder_missing"
    # An OpenAI-compatible API (explorer/retrieval/endpoint.py)
    ENDPOINT_UNAUTHORIZED = "endpoint_unauthorized"
    ENDPOINT_FAILED = "endpoint_failed"
    # Running on a cluster (explorer/engines/ray.py)
    ENGINE_UNAVAILABLE = "engine_unavailable"
    WORKER_LOST = "worker_lost"
    # Calling a chunking library (explorer/chunking/policies/libraries.py)
    UNSAFE_PARAMETER = "unsafe_parameter"
    LIBRARY_TIMEOUT = "library_timeout"
    LIBRARY_FAILED = "library_failed"
    # The app's scratch indexes (explorer/store/scratch.py)
    SCRATCH_FULL = "scratch_full"
    # Converting a document (PDF, Word, HTML: explorer/sources/convert/)
    ENCRYPTED_DOCUMENT = "encrypted_document"
    NO_TEXT_LAYER = "no_text_layer"
    CORRUPT_DOCUMENT = "corrupt_document"
    NOT_A_DOCX = "not_a_docx"
    TOO_MANY_PAGES = "too_many_pages"
    # Anything else the command line or the app is given
    NO_DOCUMENTS = "no_documents"
    INVALID_UPLOAD = "invalid_upload"
    IO_ERROR = "io_error"
    USAGE = "usage"
    # The command stopped by Ctrl-C, or by a plugin raising KeyboardInterrupt: exit 130
    INTERRUPTED = "interrupted"


class ExplorerError(Exception):
    """A refusal with a stable `code` and a one-sentence human `detail`."""

    def __init__(self, code: ErrorCode, detail: str) -> None:
        super().__init__(f"{code.value}: {detail}")
        self.code = code
        self.detail = detail


def io_error(doing: str, path: object, error: OSError) -> ExplorerError:
    """An operating system's refusal (`OSError`) as `io_error`: what was being done to
    which path, and the system's reason, without a traceback."""
    return ExplorerError(
        ErrorCode.IO_ERROR, f"cannot {doing} {str(path)!r}: {error.strerror or error}"
    )
