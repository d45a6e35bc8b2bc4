"""`python -m explorer compare | index | validate` (docs/contract.md §8).

Exit 0 on success, 1 when `validate` refuses, 2 for any other error, always with
`error: <code>: <detail>` on standard error and never a traceback.
"""

from __future__ import annotations

import argparse
import os
import stat
import sys
import tempfile
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TextIO, TypeVar, cast
from urllib.parse import quote

from .checking.chunk_map import (
    LOGICAL_FILE,
    check_against,
    chunk_maps,
    decode_chunk_map,
    write_chunk_maps,
)
from .checking.validate import check_against_sources, validate_index_file
from .chunking.config import (
    DEFAULT_GRAMMAR,
    MAX_CHARS_LIMIT,
    ChunkConfig,
    ParameterValue,
    loading_grammar,
)
from .chunking.export import EXPORT_FORMATS
from .chunking.imports import MAX_CHUNK_FILE_BYTES, ChunkFile, place
from .chunking.index import build_index, readable, write_index
from .chunking.policies import CHOOSABLE, OWN_POLICIES, SEMANTIC, make_config
from .chunking.policies.semantic import curve_json, document_curve
from .chunking.snippet import snippet, snippet_refusal
from .errors import ErrorCode, ExplorerError, io_error
from .grammars import GRAMMARS
from .jsonio import dump_json, json_or_text
from .limits import (
    DEFAULT_CONVERTED_CHARS,
    DEFAULT_LIBRARY_SECONDS,
    DEFAULT_LIMITS,
    MAX_CHUNKS_LIMIT,
    MAX_CONVERTED_CHARS_LIMIT,
    MAX_LIBRARY_SECONDS,
    MAX_PAGES_LIMIT,
    MAX_SCORES_HELD_LIMIT,
    MAX_SPAN_CHECK_WORK_LIMIT,
    Limits,
)
from .pipeline import Settings, explore, write_comparison, write_export
from .retrieval.decide import DEFAULT_RESAMPLES, DEFAULT_SEED, MAX_RESAMPLES, require_resamples
from .retrieval.drafting import (
    DEFAULT_DRAFTS,
    api_generator,
    boundary_passages,
    choose,
    draft_asked,
    draft_questions,
    load_generator,
)
from .retrieval.embedding import (
    DEFAULT_API_BATCH,
    DEFAULT_EMBEDDER,
    EMBEDDER_FAILURES,
    MAX_BATCH,
    MAX_DIMENSIONS,
    NO_EMBEDDER,
    ApiEmbedder,
    Embedder,
    load_embedder,
)
from .retrieval.endpoint import (
    BASE_URL_ENV,
    DEFAULT_BASE_URL,
    DEFAULT_KEY_ENV,
    DEFAULT_REQUEST_SECONDS,
    DEFAULT_RETRIES,
    MAX_REQUEST_SECONDS,
    MAX_RETRIES,
    PREFIX,
    EndpointOptions,
)
from .retrieval.evaluate import (
    BUDGET_K,
    DEFAULT_K,
    MAX_K,
    METRICS,
    Evaluation,
    Judging,
    curve,
    evaluate,
    parse_budget,
    require_metric,
    sweep_columns,
    with_embedder,
)
from .retrieval.flips import Diff, Measured, diff_columns, require_pair, summary_text
from .retrieval.questions import MAX_QUESTIONS, parse_questions, questions_json
from .retrieval.retrievers import RETRIEVERS, Embed
from .retrieval.vectors import DEFAULT_VECTOR_CACHE, VectorCache
from .sources.documents import DocumentRecord
from .sources.drafts import document_files_under, draft_manifest
from .sources.loading import (
    DEFAULT_MAX_DOCUMENT_BYTES,
    DEFAULT_MAX_TOTAL_BYTES,
    MAX_DOCUMENT_BYTES_LIMIT,
    MAX_TOTAL_BYTES_LIMIT,
    DirectoryReader,
    LoadResult,
    failure_lines,
    load_documents,
    read_at_most,
    require_loaded,
)
from .sources.manifest import Manifest, parse_manifest, require_unique_source_ids
from .sources.uploads import manifest_json
from .store import DEFAULT_DB, Failure, Receipt, RunRow, SearchMode, Store
from .store.wire import documents_output, history_output, ingest_output, search_output
from .view.evaluation_page import evaluation_page
from .workers import Spread, cpus

if TYPE_CHECKING:
    from .engines.ray import RayRun

MAX_INPUT_FILE_BYTES = 512 * 1024 * 1024
T = TypeVar("T")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise ExplorerError(ErrorCode.USAGE, f"{message} (see --help)")


def _positive(value: str, maximum: int = 1_000_000_000) -> int:
    """A whole number from 1 to `maximum`: every size or count given has a ceiling."""
    digits = value.strip().removeprefix("+")
    if not digits.isdigit() or not digits.isascii():
        raise argparse.ArgumentTypeError(f"{value[:40]!r} is not a whole number")
    number = int(digits) if len(digits) <= len(str(maximum)) else maximum + 1
    if number < 1:
        raise argparse.ArgumentTypeError(f"{value!r} must be at least 1")
    if number > maximum:
        raise argparse.ArgumentTypeError(f"{value[:40]!r} is more than the maximum, {maximum:,}")
    return number


def _whole(value: str, maximum: int) -> int:
    """A whole number from 0 to `maximum`."""
    digits = value.strip().removeprefix("+")
    if digits.isascii() and digits.isdigit() and not digits.strip("0"):
        return 0
    return _positive(value, maximum)


def _resamples(value: str) -> int:
    """--bootstrap's B: refused with its own code when not a whole number in range."""
    text = value.strip().removeprefix("+")
    number = text.removeprefix("-")
    if not (number.isascii() and number.isdigit()) or len(number) > 12:
        raise ExplorerError(
            ErrorCode.INVALID_BOOTSTRAP,
            f"--bootstrap takes a whole number of resamples, not {value[:40]!r}",
        )
    resamples = -int(number) if text.startswith("-") else int(number)
    require_resamples(resamples)
    return resamples


def _size_options(sub: argparse.ArgumentParser) -> None:
    """How many bytes of sources a manifest may have read, and how many pages a PDF."""
    sub.add_argument(
        "--max-document-bytes",
        type=partial(_positive, maximum=MAX_DOCUMENT_BYTES_LIMIT),
        default=DEFAULT_MAX_DOCUMENT_BYTES,
        help="refuse larger source files (default: 1 MiB, at most 64 MiB)",
    )
    sub.add_argument(
        "--max-total-bytes",
        type=partial(_positive, maximum=MAX_TOTAL_BYTES_LIMIT),
        default=DEFAULT_MAX_TOTAL_BYTES,
        help="refuse sources that hold more together (default: 256 MiB, at most 4 GiB)",
    )
    sub.add_argument(
        "--max-pages",
        type=partial(_positive, maximum=MAX_PAGES_LIMIT),
        default=DEFAULT_LIMITS.pages_per_document,
        help=f"refuse a PDF of more pages (default: {DEFAULT_LIMITS.pages_per_document:,}, "
        f"at most {MAX_PAGES_LIMIT:,})",
    )
    sub.add_argument(
        "--max-converted-chars",
        type=partial(_positive, maximum=MAX_CONVERTED_CHARS_LIMIT),
        default=DEFAULT_CONVERTED_CHARS,
        help="refuse a PDF, Word or HTML file that converts to more characters of text "
        f"(default: {DEFAULT_CONVERTED_CHARS:,}, at most {MAX_CONVERTED_CHARS_LIMIT:,})",
    )


def _limit_options(sub: argparse.ArgumentParser) -> None:
    """The options that raise the work limits (`explorer.limits`)."""
    chunks = partial(_positive, maximum=MAX_CHUNKS_LIMIT)
    sub.add_argument(
        "--max-chunks",
        type=chunks,
        default=DEFAULT_LIMITS.chunks_per_index,
        help=f"refuse an index of more chunks (default: {DEFAULT_LIMITS.chunks_per_index:,})",
    )
    sub.add_argument(
        "--max-document-chunks",
        type=chunks,
        default=DEFAULT_LIMITS.chunks_per_document,
        help=f"refuse a document of more chunks (default: {DEFAULT_LIMITS.chunks_per_document:,})",
    )
    sub.add_argument(
        "--max-span-check-work",
        type=partial(_positive, maximum=MAX_SPAN_CHECK_WORK_LIMIT),
        default=DEFAULT_LIMITS.span_check_work,
        help=f"refuse more span checks times chunks (default: {DEFAULT_LIMITS.span_check_work:,})",
    )
    sub.add_argument(
        "--max-scores-held",
        type=partial(_positive, maximum=MAX_SCORES_HELD_LIMIT),
        default=DEFAULT_LIMITS.scores_held,
        help="evaluate: retrieval scores (questions times chunks) held at once, 8 bytes each; "
        f"questions are ranked in blocks under it (default: {DEFAULT_LIMITS.scores_held:,})",
    )
    sub.add_argument(
        "--library-seconds",
        type=partial(_positive, maximum=MAX_LIBRARY_SECONDS),
        default=DEFAULT_LIBRARY_SECONDS,
        help="stop a live column's library call on one document after this many seconds "
        f"(default: {DEFAULT_LIBRARY_SECONDS}, at most {MAX_LIBRARY_SECONDS:,})",
    )


def _columns(namespace: argparse.Namespace, starts: bool) -> list[dict[str, object]]:
    """The columns named so far, a new one at the end when `starts` (or when none is)."""
    columns: list[dict[str, object]] = list(getattr(namespace, "columns", None) or [])
    if starts or not columns:
        columns.append({})
    namespace.columns = columns
    return columns


class _ColumnOption(argparse.Action):
    """`--policy NAME` starts a column; a size option describes the column named by the
    `--policy` before it (or after it, when the size comes first)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        value: object,
        *_: object,
    ) -> None:
        named = getattr(namespace, "columns", None)
        if self.dest == "grammar" and not any("policy" in column for column in named or []):
            # before the first --policy: every column's grammar, unless it gives its own
            if getattr(namespace, "grammar", None) is not None:
                parser.error("--grammar is given twice before the first --policy")
            namespace.grammar = value
            return
        starts = self.dest == "policy" and (not named or "policy" in named[-1])
        columns = _columns(namespace, starts)
        if self.dest in columns[-1]:
            parser.error(f"{self.option_strings[0]} is given twice for one policy")
        columns[-1][self.dest] = value


class _Parameter(argparse.Action):
    """`--param KEY=VALUE`, repeatable: a library's keyword for the live column named by
    the `--policy` before it. VALUE is JSON (`true`, `24`, `["\\n\\n", "\\n"]`) or else
    a plain string."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        value: object,
        *_: object,
    ) -> None:
        columns = _columns(namespace, starts=False)
        key, equals, raw = str(value).partition("=")
        if not key or not equals:
            parser.error(f"--param takes KEY=VALUE, not {str(value)[:40]!r}")
        parameters = columns[-1].setdefault("parameters", {})
        assert isinstance(parameters, dict)
        parameters[key] = json_or_text(raw)


def _percentile(raw: str) -> int | float:
    """A whole number as an int; anything else numeric as given, for `make_config` to
    refuse with its sentence."""
    value = float(raw)
    return int(value) if value.is_integer() else value


def _embedder_option(sub: argparse.ArgumentParser) -> None:
    sub.add_argument(
        "--embedder",
        default=DEFAULT_EMBEDDER,
        help=f"what a semantic column embeds its windows with: '{DEFAULT_EMBEDDER}' "
        "(default: bundled, offline) or package.module:factory",
    )


def _column_options(sub: argparse.ArgumentParser, repeatable: bool, embedder: bool = True) -> None:
    """The one way every command names a policy and its size (and, unless the command
    has its own, the `--embedder` of a semantic column)."""
    known = ", ".join(CHOOSABLE)
    sub.add_argument(
        "--policy",
        action=_ColumnOption,
        choices=CHOOSABLE,
        dest="policy",
        help=f"{known}; repeat it to compare several" if repeatable else known,
    )
    sub.add_argument(
        "--max-chars",
        action=_ColumnOption,
        type=int,  # a config out of range is refused as unsupported_chunk_config
        help="the size of the policy named before it, in characters",
    )
    sub.add_argument(
        "--max-tokens",
        action=_ColumnOption,
        type=int,
        help="instead of --max-chars: the size in cl100k_base tokens (counted offline)",
    )
    sub.add_argument(
        "--overlap",
        action=_ColumnOption,
        type=int,
        help="how much of a chunk the next one of its section repeats, in the size's unit "
        "(fixed-char and heading-aware; default 0)",
    )
    sub.add_argument(
        "--breakpoint-percentile",
        action=_ColumnOption,
        type=_percentile,
        metavar="P",
        help="semantic: a gap is a breakpoint when its distance is above the P-th percentile "
        "of the document's distances (a whole number from 0 to 100; default 95)",
    )
    sub.add_argument(
        "--window",
        action=_ColumnOption,
        type=int,
        metavar="W",
        help="semantic: sentences embedded on each side of a gap (1 to 20; default 2)",
    )
    if embedder:
        _embedder_option(sub)
    sub.add_argument(
        "--grammar",
        action=_ColumnOption,
        choices=list(GRAMMARS),
        help="v1 (default: '#' headings, blank lines) or markdown (CommonMark blocks; "
        "a document needs no leading heading); before the first --policy, every column's",
    )
    sub.add_argument(
        "--param",
        action=_Parameter,
        metavar="KEY=VALUE",
        help="a keyword of the library a live column calls (e.g. langchain-recursive's "
        "separators), as JSON or a string; repeat it for several",
    )
    sub.set_defaults(columns=None, grammar=None)


def _at_least_zero(value: str) -> int:
    """A whole number from 0 (a tolerance, in characters)."""
    digits = value.strip().removeprefix("+")
    if digits.startswith("-"):
        raise argparse.ArgumentTypeError(f"{value[:40]!r} is below 0")
    if digits and digits.isascii() and set(digits) == {"0"}:
        return 0
    return _positive(value, maximum=MAX_CHARS_LIMIT)


def _question_options(sub: argparse.ArgumentParser, required: bool, embedder_help: str) -> None:
    """How `evaluate` (and `diff --questions`) measure retrieval."""
    sub.add_argument("--questions", type=Path, required=required, help="a questions file")
    sub.add_argument(
        "--k",
        type=partial(_positive, maximum=MAX_K),
        help=f"chunks retrieved per question (default {DEFAULT_K}; {BUDGET_K} with --budget, "
        "which then keeps those that fit)",
    )
    sub.add_argument(
        "--budget",
        type=parse_budget,
        metavar="N|Nt",
        help="each question keeps its best chunks while their sizes add up to at most N "
        "characters (Nt: cl100k_base tokens); the first is always kept",
    )
    sub.add_argument("--retriever", choices=RETRIEVERS, default="bm25")
    sub.add_argument(
        "--embedder",
        default=DEFAULT_EMBEDDER,
        help=f"{embedder_help}; what --retriever embedding and hybrid embed with, and a "
        "semantic column's windows ('none' refuses them)",
    )
    _endpoint_options(sub, embeds=True)
    sub.add_argument(
        "--vector-cache",
        default=str(DEFAULT_VECTOR_CACHE),
        metavar="PATH|none",
        help=f"vectors kept by (embedder, text SHA-256) for the next run (default: "
        f"{DEFAULT_VECTOR_CACHE} in the working directory; 'none' keeps none)",
    )


def _depth(args: argparse.Namespace) -> int:
    """The chunks retrieved per question: --k, else `BUDGET_K` with --budget, else
    `DEFAULT_K`."""
    k: int = args.k or (BUDGET_K if args.budget is not None else DEFAULT_K)
    return k


def _configs(args: argparse.Namespace) -> list[ChunkConfig]:
    """The configs the `--policy` options and their sizes name, in the order given; a
    semantic column's embedder is `--embedder`, loaded before any document is read."""
    configs = []
    columns = args.columns or []
    embedder = None
    if any(column.get("policy") == SEMANTIC.name for column in columns):
        embedder = load_embedder(args.embedder)
        if embedder is None:
            raise ExplorerError(
                ErrorCode.USAGE, f"a {SEMANTIC.name} column embeds: --embedder none embeds nothing"
            )
    for column in columns:
        if "policy" not in column:
            raise ExplorerError(ErrorCode.USAGE, "a size option needs a --policy (see --help)")
        policy = str(column["policy"])
        semantic = policy == SEMANTIC.name
        shared = _grammar(args) if policy in OWN_POLICIES else DEFAULT_GRAMMAR  # a library has none
        configs.append(
            make_config(
                policy,
                _int_or_none(column.get("max_chars")),
                max_tokens=_int_or_none(column.get("max_tokens")),
                overlap=_int_or_none(column.get("overlap")) or 0,
                grammar=str(column.get("grammar", shared)),
                parameters=cast("dict[str, ParameterValue] | None", column.get("parameters")),
                breakpoint_percentile=cast("int | None", column.get("breakpoint_percentile")),
                window=_int_or_none(column.get("window")),
                embedder=embedder if semantic else None,
            )
        )
    return configs


def _grammar(args: argparse.Namespace) -> str:
    """The grammar of every column of ours that names none: `--grammar` given before the
    first `--policy`, else v1."""
    return str(args.grammar or DEFAULT_GRAMMAR)


def _int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) else None


def _one_config(args: argparse.Namespace, default: str | None = None) -> ChunkConfig:
    configs = _configs(args)
    if not configs and default is not None:
        return make_config(default, grammar=_grammar(args))
    if len(configs) != 1:
        raise ExplorerError(ErrorCode.USAGE, f"{args.command} takes one --policy (see --help)")
    return configs[0]


def _settings(args: argparse.Namespace) -> Settings:
    """`compare`'s columns: the policies named, or every registered policy, whose sizes
    `--fixed-chars` and `--target-chars` may set in short."""
    configs = _configs(args)
    shorthand = {"fixed-char": args.fixed_chars, "heading-aware": args.target_chars}
    given = {name: size for name, size in shorthand.items() if size is not None}
    if configs and given:
        raise ExplorerError(
            ErrorCode.USAGE,
            "give sizes with --max-chars after each --policy, or in short with "
            "--fixed-chars and --target-chars, not both",
        )
    settings = Settings.from_sizes(given, _grammar(args)) if not configs else None
    return Settings(settings.configs if settings else tuple(configs), _chunk_files(args))


def _chunk_files(args: argparse.Namespace) -> tuple[ChunkFile, ...]:
    """The `--chunks NAME=FILE` columns, read (each at most `MAX_CHUNK_FILE_BYTES`)."""
    files = []
    for given in args.chunks:
        name, equals, path = given.partition("=")
        if not equals or not path:
            raise ExplorerError(ErrorCode.USAGE, f"--chunks takes NAME=FILE, not {given[:60]!r}")
        data = _read(Path(path), "chunk file", MAX_CHUNK_FILE_BYTES)
        files.append(ChunkFile(name, data, skip_failed=args.skip_failed))
    return tuple(files)


class _ChunkColumn(argparse._AppendAction):
    """`--chunks NAME=FILE` where the order of columns matters (`diff`): each file also
    records how many `--policy` columns were declared before it."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        value: str | Sequence[Any] | None,
        option: str | None = None,
    ) -> None:
        super().__call__(parser, namespace, value, option)
        after = list(getattr(namespace, "chunks_after", None) or [])
        namespace.chunks_after = [*after, len(getattr(namespace, "columns", None) or [])]


def _chunk_options(sub: argparse.ArgumentParser, ordered: bool = False) -> None:
    sub.add_argument(
        "--chunks",
        action=_ChunkColumn if ordered else "append",
        default=[],
        metavar="NAME=FILE",
        help="another pipeline's chunks as a column NAME: a JSON list or JSON Lines of "
        "LangChain Documents, LlamaIndex nodes, Chonkie chunks or {source_id, text, start, "
        "end}; --skip-failed leaves out chunks that cannot be placed",
    )


def _seconds(value: str) -> float:
    """A number of seconds above 0, at most `MAX_REQUEST_SECONDS`."""
    try:
        seconds = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value[:40]!r} is not a number") from None
    if not 0 < seconds <= MAX_REQUEST_SECONDS:
        raise argparse.ArgumentTypeError(f"{value[:40]!r} is not from 0 to {MAX_REQUEST_SECONDS}")
    return seconds


def _retries(value: str) -> int:
    return 0 if value.strip() == "0" else _positive(value, maximum=MAX_RETRIES)


def _endpoint_options(sub: argparse.ArgumentParser, embeds: bool) -> None:
    """Where `openai:MODEL` is served and how long to wait for it; None: not given."""
    sub.add_argument(
        "--base-url",
        help=f"the API's URL (default: ${BASE_URL_ENV}, else {DEFAULT_BASE_URL})",
    )
    sub.add_argument(
        "--api-key-env",
        metavar="NAME",
        help=f"the environment variable holding the key (default {DEFAULT_KEY_ENV})",
    )
    if embeds:
        sub.add_argument(
            "--embed-batch",
            type=partial(_positive, maximum=MAX_BATCH),
            help=f"inputs a request (default {DEFAULT_API_BATCH})",
        )
        sub.add_argument(
            "--dimensions",
            type=partial(_positive, maximum=MAX_DIMENSIONS),
            help="ask the model for this many dimensions (default: the model's)",
        )
    sub.add_argument(
        "--request-seconds",
        type=_seconds,
        help=f"seconds a request may take (default {DEFAULT_REQUEST_SECONDS})",
    )
    sub.add_argument(
        "--max-retries",
        type=_retries,
        help=f"retries of a failed request (default {DEFAULT_RETRIES}, at most {MAX_RETRIES})",
    )


_ENDPOINT_OPTIONS = (
    "base_url", "api_key_env", "embed_batch", "dimensions", "request_seconds", "max_retries"
)  # fmt: skip


def _endpoint(args: argparse.Namespace, spec: str, option: str) -> EndpointOptions:
    """The endpoint options given, for `openai:MODEL`; refused (`usage`) for anything else."""
    given = [name for name in _ENDPOINT_OPTIONS if getattr(args, name, None) is not None]
    if given and not spec.startswith(PREFIX):
        flag = "--" + given[0].replace("_", "-")
        raise ExplorerError(ErrorCode.USAGE, f"{flag} is for {option} openai:MODEL")
    defaults = EndpointOptions()
    return EndpointOptions(
        base_url=args.base_url,
        api_key_env=args.api_key_env or defaults.api_key_env,
        request_seconds=args.request_seconds or defaults.request_seconds,
        max_retries=defaults.max_retries if args.max_retries is None else args.max_retries,
    )


def _print_usage(stderr: TextIO, embedder: Embedder | None) -> None:
    """What an API was asked, and the tokens it says it read."""
    if isinstance(embedder, ApiEmbedder):
        print(
            f"usage: {embedder.requests} request(s), {embedder.input_tokens} input token(s) "
            f"(embedder {embedder.name!r})",
            file=stderr,
        )


def _embedder(args: argparse.Namespace) -> Embedder | None:
    """`--embedder` with its endpoint options; refused before any work."""
    options = _endpoint(args, args.embedder, "--embedder")
    batch = args.embed_batch or DEFAULT_API_BATCH
    return load_embedder(args.embedder, options, batch, args.dimensions)


def _engine_options(sub: argparse.ArgumentParser) -> None:
    """Where the documents are chunked (explorer/engine_ray.py; README "Running on a cluster")."""
    sub.add_argument(
        "--engine",
        choices=["local", "ray"],
        default="local",
        help="local (default): this process; ray: Ray tasks, the same output "
        "(needs requirements-ray.txt)",
    )
    sub.add_argument(
        "--address",
        metavar="ADDR",
        help="with --engine ray: join the Ray cluster at ADDR (default: start one on this machine)",
    )


# Each worker holds a batch or two and the pages it writes of what it shares with the
# command: more of them than CPUs gains nothing, and this many bounds their memory.
MAX_WORKERS = 64


def _workers_option(sub: argparse.ArgumentParser, doing: str) -> None:
    sub.add_argument(
        "--workers",
        type=partial(_positive, maximum=MAX_WORKERS),
        metavar="N",
        help=f"processes that {doing} on this machine, batch by batch, at most "
        f"{MAX_WORKERS} (default: its CPUs, {cpus()} here; 1: this process alone); the same "
        "bytes whatever N",
    )


def _spread(args: argparse.Namespace) -> Spread:
    """`--workers`, by default the CPUs this process may use (up to `MAX_WORKERS`)."""
    return Spread(args.workers or min(cpus(), MAX_WORKERS))


def _ray_run(args: argparse.Namespace) -> RayRun:
    """`--engine ray`'s run of the manifest; Ray is imported only now."""
    from .engines.ray import RayRun, start_ray

    manifest = parse_manifest(_read(args.manifest, "manifest"))
    require_unique_source_ids(manifest)
    reader = DirectoryReader(args.manifest.parent.resolve())
    return RayRun(
        start_ray(args.address),
        manifest,
        reader,
        args.max_document_bytes,
        args.max_total_bytes,
        _limits(args),
    )


def _limits(args: argparse.Namespace) -> Limits:
    return Limits(
        args.max_document_chunks,
        args.max_chunks,
        args.max_span_check_work,
        args.max_scores_held,
        library_seconds=args.library_seconds,
        pages_per_document=args.max_pages,
        converted_chars_per_document=args.max_converted_chars,
    )


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m explorer", description="Compare chunking policies.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def with_manifest(name: str, help_text: str, group: Any = commands) -> argparse.ArgumentParser:
        sub: argparse.ArgumentParser = group.add_parser(name, help=help_text, description=help_text)
        where = "manifest.json; paths are relative to it"
        if name == "chunk-map":  # --check needs no manifest
            sub.add_argument("manifest", type=Path, nargs="?", help=where)
        else:
            sub.add_argument("manifest", type=Path, help=where)
        sub.add_argument("--out", type=Path, help="write JSON here instead of standard output")
        _size_options(sub)
        if name != "ingest":  # the store chunks with the default limits
            _limit_options(sub)
        sub.add_argument(
            "--skip-failed", action="store_true", help="leave out documents that fail to load"
        )
        return sub

    comp = with_manifest("compare", "Build every policy's index and run the span checks.")
    _column_options(comp, repeatable=True)
    _chunk_options(comp)
    comp.add_argument("--fixed-chars", type=int, help="in short: fixed-char's max_chars (80)")
    comp.add_argument("--target-chars", type=int, help="in short: heading-aware's max_chars (220)")

    one = with_manifest("index", "Build one policy's index, or a chunk file's (--chunks).")
    _column_options(one, repeatable=False)
    _chunk_options(one)
    _engine_options(one)
    _workers_option(one, "cut the documents")

    draft = commands.add_parser(
        "manifest",
        help="Write a manifest for a folder's .md, .txt, .pdf, .docx and .html files, each "
        "pinned to its SHA-256.",
    )
    draft.add_argument("folder", type=Path, help="the folder; paths are relative to it")
    draft.add_argument(
        "--out",
        type=Path,
        help="write the manifest here, not to standard output (put it in the folder: its "
        "paths are relative to the folder)",
    )
    draft.add_argument(
        "--max-document-bytes",
        type=_positive,
        default=DEFAULT_MAX_DOCUMENT_BYTES,
        help="refuse a file larger than this (default 1 MiB)",
    )

    check = commands.add_parser("validate", help="Check an index file; exit 1 if refused.")
    check.add_argument("file", type=Path)
    check.add_argument(
        "--manifest",
        type=Path,
        help="also check each document against its source file, as this manifest pins it",
    )
    _size_options(check)
    _limit_options(check)
    _workers_option(check, "rebuild the index's chunks")
    _embedder_option(check)

    ingest = with_manifest("ingest", "Ingest the manifest as a run into a persistent index.")
    ingest.add_argument("--db", type=Path, default=DEFAULT_DB, help=f"default: {DEFAULT_DB}")
    _column_options(ingest, repeatable=False, embedder=False)
    embedder_help = (
        f"'{DEFAULT_EMBEDDER}' (default: bundled, offline), 'none', openai:MODEL (an "
        "OpenAI-compatible API) or package.module:factory"
    )
    ingest.add_argument("--embedder", default=DEFAULT_EMBEDDER, help=embedder_help)
    _endpoint_options(ingest, embeds=True)
    ingest.add_argument("--json", action="store_true", help="print the run as one JSON document")

    find = commands.add_parser("search", help="Search one tenant's active chunks, with citations.")
    find.add_argument("query")
    find.add_argument("--tenant", required=True, help="the access_scope to search within")
    find.add_argument("--db", type=Path, default=DEFAULT_DB)
    find.add_argument("-k", type=_positive, default=5, help="how many hits (default 5)")
    find.add_argument(
        "--mode",
        choices=[mode.value for mode in SearchMode],
        default=SearchMode.HYBRID.value,
        help="bm25, vector, or hybrid (default: both, fused by reciprocal rank)",
    )
    find.add_argument("--embedder", default=DEFAULT_EMBEDDER, help=embedder_help)
    _endpoint_options(find, embeds=True)
    find.add_argument("--json", action="store_true", help="print the hits as one JSON document")

    served = commands.add_parser(
        "documents",
        help="What the index serves to one tenant: each document's active version.",
    )
    served.add_argument("--tenant", required=True, help="the access_scope to list")
    served.add_argument("--db", type=Path, default=DEFAULT_DB)
    served.add_argument("--json", action="store_true", help="print them as one JSON document")

    runs = commands.add_parser("history", help="Runs before and after, and deletion receipts.")
    runs.add_argument("--db", type=Path, default=DEFAULT_DB)
    runs.add_argument("--json", action="store_true", help="print the history as one JSON document")

    measure = with_manifest(
        "evaluate", "Measure retrieval: each policy's top-k chunks against known answers."
    )
    _question_options(measure, required=True, embedder_help=embedder_help)
    _column_options(measure, repeatable=True, embedder=False)
    measure.add_argument(
        "--bootstrap",
        type=_resamples,
        default=DEFAULT_RESAMPLES,
        metavar="B",
        help=f"resamples of the questions for 95 %% intervals and verdicts (default "
        f"{DEFAULT_RESAMPLES}; 0: none; at most {MAX_RESAMPLES:,})",
    )
    measure.add_argument(
        "--seed",
        type=partial(_whole, maximum=2**63 - 1),
        default=DEFAULT_SEED,
        help=f"the bootstrap's seed (default {DEFAULT_SEED}): the same seed, the same file",
    )
    measure.add_argument(
        "--decide-by",
        type=require_metric,
        default="recall",
        metavar="METRIC",
        help=f"the metric the decision is made on: {', '.join(METRICS)} (default recall)",
    )
    measure.add_argument(
        "--report",
        type=Path,
        metavar="FILE.html",
        help="also write one self-contained HTML page of the run (opens offline)",
    )
    _chunk_options(measure)
    measure.add_argument(
        "--sweep",
        metavar="NAME:FROM:TO:STEP",
        help="measure a sized policy (ours or a library's) at every size from FROM to TO, "
        "both included (e.g. heading-aware:100:1000:100; in tokens heading-aware:64t:512t:64t), "
        "and print the curve; one --policy NAME with its --grammar, --overlap and --param "
        "gives the column to sweep",
    )
    _engine_options(measure)

    asking = commands.add_parser("questions", help="Questions for evaluate: draft them.")
    asking_commands = asking.add_subparsers(
        dest="questions_command", required=True, parser_class=_Parser
    )
    drafting = with_manifest(
        "draft",
        "Draft questions whose answers cross a chunk boundary of one policy: a questions "
        "file for evaluate, its texts written by --generator or left for you to write.",
        asking_commands,
    )
    _column_options(drafting, repeatable=False)
    drafting.add_argument(
        "--n",
        type=partial(_positive, maximum=MAX_QUESTIONS),
        default=DEFAULT_DRAFTS,
        help=f"how many questions (default {DEFAULT_DRAFTS}; fewer when fewer boundaries)",
    )
    drafting.add_argument(
        "--seed", type=partial(_positive, maximum=2**31), default=1, help="which ones (default 1)"
    )
    drafting.add_argument(
        "--generator",
        metavar="openai:MODEL|package.module:factory",
        help="a chat model behind an OpenAI-compatible API, or an object with a name and "
        "generate(passage) -> question text; without it each question's text is empty, "
        "to write",
    )
    _endpoint_options(drafting, embeds=False)

    differ = with_manifest(
        "diff",
        "Where two columns cut differently (the first declared is A, the reference), and "
        "with --questions which questions one hits and the other misses.",
    )
    _column_options(differ, repeatable=True, embedder=False)
    _chunk_options(differ, ordered=True)
    differ.add_argument(
        "--tolerance",
        type=_at_least_zero,
        default=0,
        metavar="N",
        help="boundaries at most N characters apart match (default 0)",
    )
    _question_options(differ, required=False, embedder_help=embedder_help)
    differ.add_argument("--json", action="store_true", help="print the diff as JSON, not a summary")

    out = with_manifest(
        "export",
        "One column's chunks for another framework, one JSON object per line (LangChain "
        "Documents, LlamaIndex TextNodes or the explorer's chunk records), or --snippet: "
        "Python that cuts a text as the column does.",
    )
    _column_options(out, repeatable=False)
    _chunk_options(out)
    out.add_argument(
        "--format",
        choices=EXPORT_FORMATS,
        help="langchain ({page_content, metadata}), llamaindex ({id_, text, start_char_idx, "
        "end_char_idx, metadata}) or jsonl (the explorer's chunk record and its metadata)",
    )
    out.add_argument(
        "--snippet",
        action="store_true",
        help="print Python defining chunk(text: str) -> list[str] that reproduces the column "
        "(a library's own call, or the explorer's for our policies) instead (to --out if given)",
    )

    maps = with_manifest(
        "chunk-map",
        "Write each document's chunk map (no content), or --check one; exit 1 if refused.",
    )
    _column_options(maps, repeatable=False)
    maps.add_argument("--check", type=Path, metavar="FILE", help="a chunk-map.json to check")

    drawn = with_manifest(
        "curve",
        "A semantic column's curve for one document: its sentences, each gap's windows and "
        "distance, the threshold and the breakpoints.",
    )
    drawn.add_argument("--source-id", required=True, metavar="ID", help="the document")
    _column_options(drawn, repeatable=False)
    drawn.add_argument("--json", action="store_true", help="print the curve as one JSON document")
    return parser


def _read(path: Path, what: str, limit: int = MAX_INPUT_FILE_BYTES) -> bytes:
    try:
        with path.open("rb") as handle:
            data = read_at_most(handle, limit)
    except OSError as error:
        raise io_error(f"read {what}", path, error) from None
    if data is None:
        raise ExplorerError(
            ErrorCode.IO_ERROR, f"{what} {str(path)!r} is larger than {limit // 2**20} MiB"
        )
    return data


def _load(args: argparse.Namespace, err: TextIO) -> tuple[Manifest, LoadResult]:
    """The manifest's documents, loaded once for every column (whether a column's
    grammar reads each is the column's own question: `readable`)."""
    manifest = parse_manifest(_read(args.manifest, "manifest"))
    if args.command != "ingest":  # one index keyed by source_id
        require_unique_source_ids(manifest)
    reader = DirectoryReader(args.manifest.parent)
    load = load_documents(
        manifest,
        reader,
        args.max_document_bytes,
        args.max_total_bytes,
        args.max_pages,
        args.max_converted_chars,
    )
    # A persistent index records failures and keeps serving the old version: no refusal.
    proceed = args.skip_failed or args.command == "ingest"
    for line in failure_lines(load.failures, proceed):
        print(line, file=err)
    if not proceed:
        require_loaded(load.failures, len(load.statuses))
    return manifest, load


# Writes JSON bytes, piece by piece, to the `write` it is given.
Producer = Callable[[Callable[[bytes], object]], object]


def _mode_to_keep(path: Path) -> int | None:
    """The permissions of the regular file at `path`, None if nothing is there; anything
    else (a device such as /dev/null, a link such as one to /dev/stdout, a folder, a pipe)
    is refused rather than silently replaced by a regular file."""
    try:
        status = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise io_error("write", path, error) from None
    if stat.S_ISREG(status.st_mode):
        return stat.S_IMODE(status.st_mode)
    kind = (
        "a symbolic link"
        if stat.S_ISLNK(status.st_mode)
        else "a folder"
        if stat.S_ISDIR(status.st_mode)
        else "a device, pipe or socket"
    )
    raise ExplorerError(
        ErrorCode.IO_ERROR,
        f"will not write {str(path)!r}: it exists and is {kind}, not a regular file",
    )


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _write_atomically(path: Path, content: str | Producer) -> None:
    """Either the whole file appears, or nothing does. A new file gets 0666 less the
    umask, as `open` would give it; a replaced regular file keeps its permissions."""
    mode = _mode_to_keep(path)
    try:
        fd, temporary = tempfile.mkstemp(
            dir=path.parent or ".", prefix=f".{path.name}.", suffix=".tmp"
        )
    except OSError as error:
        raise io_error("write", path, error) from None
    try:
        os.fchmod(fd, 0o666 & ~_umask() if mode is None else mode)
        with os.fdopen(fd, "wb", buffering=1024 * 1024) as handle:
            if isinstance(content, str):
                handle.write(content.encode("utf-8"))
            else:
                content(handle.write)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except OSError as error:
        Path(temporary).unlink(missing_ok=True)
        raise io_error("write", path, error) from None
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _emit(produce: Producer, out: Path | None, stdout: TextIO) -> None:
    """Bytes go out as they are produced: to `out` atomically, else to standard output
    (its binary buffer when it has one)."""
    if out is not None:
        _write_atomically(out, produce)
        return
    buffer = getattr(stdout, "buffer", None)
    if buffer is None:
        produce(lambda piece: stdout.write(piece.decode("utf-8")))
        return
    try:
        stdout.flush()
        produce(buffer.write)
        buffer.flush()
    except BrokenPipeError:
        # The reader left (`| head`): nothing more can go there, and Python's own flush at
        # exit must not fail on what is still buffered.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, buffer.fileno())
        os.close(devnull)
        raise ExplorerError(
            ErrorCode.IO_ERROR, "standard output was closed before all the JSON was written"
        ) from None


def _chunk_maps(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    if args.check is not None:
        payload = decode_chunk_map(_read(args.check, "chunk map"), _limits(args))
        if args.manifest is not None:
            _, load = _load(args, stderr)
            document = next(
                (d for d in load.documents if d["source_id"] == payload["source_id"]), None
            )
            if document is None:
                raise ExplorerError(
                    ErrorCode.INVALID_CHUNK_MAP,
                    f"the manifest has no loaded document {payload['source_id']!r}",
                )
            check_against(payload, document, _limits(args))
        print(f"valid {payload['plan_digest']}", file=stdout)
        return 0
    if args.manifest is None or not args.columns:
        raise ExplorerError(ErrorCode.USAGE, "give MANIFEST and --policy, or --check FILE")
    config = _one_config(args)
    _, load = _load(args, stderr)
    documents = _readable(load, config, stderr, whole=not args.skip_failed)
    limits = _limits(args)
    if args.out is None:
        _emit(partial(write_chunk_maps, documents, config, limits=limits), None, stdout)
        return 0
    # Every map is built before a folder is written: a refusal leaves none half written.
    for payload in list(chunk_maps(documents, config, limits)):
        folder = args.out / _folder_name(payload["source_id"])
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise io_error("create", folder, error) from None
        _write_atomically(folder / LOGICAL_FILE, dump_json(payload))
        print(f"wrote {folder / LOGICAL_FILE}", file=stdout)
    return 0


def _folder_name(source_id: str) -> str:
    """A source id as one safe folder name ('/' and the like percent-encoded)."""
    name = quote(source_id, safe="")
    return name.replace(".", "%2E") if set(name) == {"."} else name


def _existing_store(path: Path) -> Store:
    return Store(path, create=False)


def _compare(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    settings = _settings(args)
    manifest, load = _load(args, stderr)
    notes = partial(_print_notes, stderr)
    produce = partial(
        write_comparison, load, manifest.span_checks, settings, limits=_limits(args), notes=notes
    )
    _emit(produce, args.out, stdout)
    return 0


def _readable(
    load: LoadResult, config: ChunkConfig, stderr: TextIO, whole: bool = False
) -> list[DocumentRecord]:
    """The documents one column cuts (`readable`), what it leaves out said on stderr.
    `whole` (an index file, chunk maps): a document the column cannot read refuses the
    command, as one that does not load does, unless --skip-failed."""
    cut = readable(load.documents, config, config.strategy)
    if whole:
        cut.whole()
    documents = cut.required()
    _print_notes(stderr, config.strategy, cut.notes)
    return documents


def _print_notes(stderr: TextIO, name: str, notes: Sequence[str]) -> None:
    """What placing a chunk file's chunks had to say, as the report says it too."""
    for note in notes:
        print(f"note: {name}: {note}", file=stderr)


def _index(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    if args.engine == "ray":
        return _index_on_ray(args, stdout, stderr)
    chunk_files = _chunk_files(args)
    if chunk_files:
        if len(chunk_files) > 1 or args.columns:
            raise ExplorerError(
                ErrorCode.USAGE, "index takes one --policy or one --chunks (see --help)"
            )
        _, load = _load(args, stderr)
        placement = place(chunk_files[0], load.documents, _limits(args))
        _print_notes(stderr, chunk_files[0].name, placement.notes)
        config, given = placement.config, placement.spans
    else:
        config, given = _one_config(args), None
        _, load = _load(args, stderr)
    documents = _readable(load, config, stderr, whole=not args.skip_failed)
    limits, spread = _limits(args), _spread(args)
    write = partial(write_index, documents, config, limits=limits, given=given, spread=spread)
    _emit(write, args.out, stdout)
    return 0


def _index_on_ray(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    from .engines.ray import ray_write_index

    if args.chunks:
        raise ExplorerError(ErrorCode.USAGE, "--engine ray indexes a --policy, not --chunks")
    if args.workers is not None:
        raise ExplorerError(
            ErrorCode.USAGE,
            "--workers is for --engine local; on Ray the cluster's CPUs are the workers",
        )
    config = _one_config(args)  # refused before Ray starts
    notes = partial(print, file=stderr)
    write = partial(ray_write_index, _ray_run(args), config, args.skip_failed, notes)
    _emit(write, args.out, stdout)
    return 0


def _validate(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    if args.embedder != DEFAULT_EMBEDDER:  # a semantic index's plug-in, found by its name
        load_embedder(args.embedder)
    try:
        with args.file.open("rb") as handle:
            documents = max(MAX_INPUT_FILE_BYTES, 2 * args.max_total_bytes)
            index = validate_index_file(
                handle, _limits(args), MAX_INPUT_FILE_BYTES, documents, _spread(args)
            )
    except OSError as error:
        raise io_error("read index file", args.file, error) from None
    if args.manifest is not None:
        manifest = parse_manifest(_read(args.manifest, "manifest"))
        require_unique_source_ids(manifest)  # an index is keyed by source_id
        reader = DirectoryReader(args.manifest.parent)
        load = load_documents(
            manifest,
            reader,
            args.max_document_bytes,
            args.max_total_bytes,
            args.max_pages,
            args.max_converted_chars,
        )
        cut = readable(load.documents, index.config, "the index").documents
        check_against_sources(index.documents, LoadResult(load.statuses, tuple(cut)))
    print(f"valid {index.index_id}", file=stdout)
    return 0


def _curve(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    """`curve`: one document's curve under one semantic column."""
    args.columns = args.columns or [{}]
    args.columns[0].setdefault("policy", SEMANTIC.name)  # the policy may be left out
    config = _one_config(args)
    if config.strategy != SEMANTIC.name:
        raise ExplorerError(
            ErrorCode.USAGE, f"curve draws a {SEMANTIC.name} column's curve, not {config.strategy}"
        )
    _, load = _load(args, stderr)
    document = next((d for d in load.documents if d["source_id"] == args.source_id), None)
    if document is None:
        raise ExplorerError(
            ErrorCode.USAGE, f"the manifest has no loaded document {args.source_id[:200]!r}"
        )
    drawn = document_curve(document["text"], config)
    if args.json:
        payload = {"source_id": args.source_id, "config": config.as_json(), **curve_json(drawn)}
        content = dump_json(payload).encode("utf-8")
        _emit(lambda write: write(content), args.out, stdout)
        return 0
    lines = [f"threshold {drawn.threshold}"]
    marked = set(drawn.breakpoints)
    for gap, distance in enumerate(drawn.distances.tolist()):
        mark = " breakpoint" if gap in marked else ""
        lines.append(f"{drawn.offset(gap):>9} {distance:.6f}{mark}")
    text = "\n".join(lines) + "\n"
    _emit(lambda write: write(text.encode("utf-8")), args.out, stdout)
    return 0


def _manifest(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    manifest = draft_manifest(document_files_under(args.folder, args.max_document_bytes))
    content = manifest_json(manifest).encode("utf-8")
    _emit(lambda write: write(content), args.out, stdout)
    print(f"{len(manifest.documents)} documents", file=stderr)
    return 0


def _ingest(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    config = _one_config(args, default="heading-aware")
    manifest, load = _load(args, stderr)
    embedder = _embedder(args)  # refused before the index is touched
    with Store(args.db) as store:
        try:
            summary = store.ingest(
                manifest,
                load,
                config,
                embedder=embedder,
                on_wait=lambda message: print(message, file=stderr),
            )
        finally:
            _print_usage(stderr, embedder)
        statuses = store.document_statuses(summary.run_id)
    if args.json:
        stdout.write(dump_json(ingest_output(summary, statuses).model_dump(mode="json")))
        return 0
    print(summary.line(), file=stdout)
    print(summary.vectors_line(), file=stdout)
    for row in statuses:
        if row.status in EMBEDDER_FAILURES:  # load failures were warned about already
            print(f"warning: {row.status}: {row.tenant}/{row.source_id}: {row.detail}", file=stderr)
    return 0


def _search(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    mode = SearchMode(args.mode)
    embedder = None if mode is SearchMode.BM25 else _embedder(args)
    with _existing_store(args.db) as store:
        try:
            hits = store.search(args.query, args.tenant, args.k, mode, embedder)
        finally:
            _print_usage(stderr, embedder)
    if args.json:
        name = embedder.name if embedder is not None else None
        found = search_output(args.query, args.tenant, mode, name, args.k, hits)
        stdout.write(dump_json(found.model_dump(mode="json")))
        return 0
    for hit in hits:
        cells = hit.cells()
        pages = f" {cells['Pages']}" if cells["Pages"] else ""
        print(
            f"{hit.source_id} v{hit.version} lines {cells['Lines']}{pages} {cells['Offsets']} "
            f"{cells['Chunk']} {cells['Score']} §{cells['Section']!r}  {cells['Snippet']}",
            file=stdout,
        )
    return 0


def _documents(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    with _existing_store(args.db) as store:
        documents = store.documents(args.tenant)
    if args.json:
        stdout.write(dump_json(documents_output(args.tenant, documents).model_dump(mode="json")))
        return 0
    stdout.write(_table([document.cells() for document in documents], _DOCUMENT_WIDTHS))
    if not documents:
        print(f"the index serves no document to tenant {args.tenant!r}", file=stderr)
    return 0


_DOCUMENT_WIDTHS = {
    "Source": -24,
    "Version": -10,
    "Revision": -12,
    "Chunks": 7,
    "Embedder": -20,
    "Run": 4,
}


def _table(rows: list[dict[str, str]], widths: dict[str, int]) -> str:
    """Rows of cells as aligned columns under a header of their names (a negative width
    aligns left)."""

    def row(cells: dict[str, str]) -> str:
        return " ".join(
            cells[name].ljust(-width) if width < 0 else cells[name].rjust(width)
            for name, width in widths.items()
        ).rstrip()

    return "\n".join([row({name: name.lower() for name in widths}), *map(row, rows)]) + "\n"


def _history(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    with _existing_store(args.db) as store:
        runs, failures, receipts = store.history(), store.failures(), store.receipts()
    if args.json:
        stdout.write(dump_json(history_output(runs, failures, receipts).model_dump(mode="json")))
        return 0
    stdout.write(_history_table(runs, failures, receipts))
    return 0


def _history_table(runs: list[RunRow], failures: list[Failure], receipts: list[Receipt]) -> str:
    """Before and after per run (the cells the app shows too), then every document a
    run did not write, then every receipt."""
    widths = {
        "Run": 4,
        "Started": -25,
        "Added": 6,
        "Updated": 8,
        "Unchanged": 10,
        "Failed": 7,
        "Deleted": 8,
        "Documents": 18,
        "Chunks": 18,
        "Vectors": 22,
    }

    lines = [_table([run.cells() for run in runs], widths)]
    lines += [failure.line() + "\n" for failure in failures]
    lines += [receipt.line() + "\n" for receipt in receipts]
    return "".join(lines)


def require_report_folder(path: Path) -> None:
    """A report goes into a folder that exists: refused before any work otherwise."""
    if not path.parent.is_dir():
        raise ExplorerError(
            ErrorCode.REPORT_FOLDER_MISSING,
            f"no folder {str(path.parent)!r} to write the report {path.name!r} in; create it first",
        )


def _require_embedder(args: argparse.Namespace) -> None:
    """A retriever that embeds needs an embedder (refused before any work)."""
    if args.retriever != "bm25" and args.embedder == NO_EMBEDDER:
        raise ExplorerError(
            ErrorCode.USAGE,
            f"--retriever {args.retriever} embeds; give --embedder wordllama or "
            "package.module:factory, not none",
        )


def _measure(
    args: argparse.Namespace, stderr: TextIO, measure: Callable[[LoadResult, Embed | None], T]
) -> tuple[T, Embedder | None]:
    """`measure` of the manifest's documents and what `--retriever` embeds with: the
    embedder (None for bm25) loaded before any document is read, its vectors kept in
    `--vector-cache` (what the cache did, and an API's usage, said on stderr)."""
    if args.retriever == "bm25":
        _, load = _load(args, stderr)
        return measure(load, None), None
    embedder = _embedder(args)  # refused before any document is read
    assert embedder is not None
    _, load = _load(args, stderr)
    cache = VectorCache.open(args.vector_cache)
    try:
        return measure(load, partial(cache.vectors, embedder)), embedder
    finally:
        print(cache.said(embedder.name), file=stderr)
        _print_usage(stderr, embedder)
        cache.close()


def _export(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    """The chunks to --out (else standard output) as they are cut, or --snippet."""
    configs, chunk_files = _configs(args), _chunk_files(args)
    if len(configs) + len(chunk_files) != 1:
        raise ExplorerError(
            ErrorCode.USAGE,
            "export takes one column (--policy … or --chunks NAME=FILE), not "
            f"{len(configs) + len(chunk_files)}",
        )
    settings = Settings(tuple(configs), chunk_files)
    if args.snippet:
        if args.format is not None:
            raise ExplorerError(ErrorCode.USAGE, "give --format or --snippet, not both")
        if chunk_files:  # refused before anything is read
            raise snippet_refusal(chunk_files[0].name)
        code = snippet(settings.names[0], configs[0]).encode("utf-8")
        _emit(lambda write: write(code), args.out, stdout)
        return 0
    if args.format is None:
        raise ExplorerError(
            ErrorCode.USAGE, "export needs --format langchain|llamaindex|jsonl, or --snippet"
        )
    _, load = _load(args, stderr)
    notes = partial(_print_notes, stderr)
    _emit(
        partial(write_export, load, settings, args.format, limits=_limits(args), notes=notes),
        args.out,
        stdout,
    )
    return 0


def _diff(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    """JSON to --out and, with --json, to standard output; else a summary there."""
    configs, chunk_files = _configs(args), _chunk_files(args)
    require_pair([*configs, *chunk_files])
    settings = Settings(tuple(configs), chunk_files)  # the same column twice is refused
    # The exploration holds the configs' columns first; A is the column declared first.
    swap = bool(configs) and bool(chunk_files) and args.chunks_after[0] == 0
    questions = parse_questions(_read(args.questions, "questions file")) if args.questions else None
    limits = _limits(args)

    def run(load: LoadResult, embed: Embed | None) -> Diff:
        exploration = explore(load, (), settings, limits)
        for column in exploration.columns:
            _print_notes(stderr, column.name, column.result.get("notes", []))
        first, second = exploration.columns
        a, b = (second, first) if swap else (first, second)
        measured = None
        if questions is not None:
            measured = Measured(questions, args.retriever, _depth(args), embed, args.budget)
        return diff_columns(exploration, a, b, args.tolerance, measured, limits)

    if questions is None:
        _, load = _load(args, stderr)
        diff = run(load, None)
    else:
        _require_embedder(args)
        diff, _ = _measure(args, stderr, run)
    if args.out is not None:
        _write_atomically(args.out, dump_json(diff))
    stdout.write(dump_json(diff) if args.json and args.out is None else summary_text(diff))
    return 0


def _evaluate(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    """JSON to --out (else standard output); with --sweep, the curve is printed and the
    JSON goes only to --out."""
    if args.report is not None:
        require_report_folder(args.report)  # refused before any work
    k = _depth(args)
    judging = Judging(args.budget, args.bootstrap, args.seed, args.decide_by)
    questions = parse_questions(_read(args.questions, "questions file"))
    chunk_files = _chunk_files(args)
    if args.sweep is not None:  # `--grammar G` alone names the sweep's grammar
        given = args.columns or []
        if len(given) > 1:
            raise ExplorerError(
                ErrorCode.USAGE,
                "--sweep takes at most one --policy, the column it sweeps: give --sweep or "
                "several --policy columns, not both",
            )
        grammar_name = str(given[0].get("grammar", _grammar(args))) if given else _grammar(args)
        like = _configs(args)[0] if given and set(given[0]) - {"grammar"} else None
        columns = sweep_columns(args.sweep, grammar_name, like)
    else:  # compare's columns: the policies named (else every one), then the chunk files
        configs = _configs(args)
        base = Settings(tuple(configs)) if configs else Settings.from_sizes({}, _grammar(args))
        settings = Settings(base.configs, chunk_files)
        columns = list(zip(settings.config_names, settings.configs, strict=True))
    grammar = loading_grammar(config for _, config in columns)
    _require_embedder(args)
    if args.engine == "ray":
        from .engines.ray import ray_evaluate, require_shardable

        require_shardable(args.retriever)  # refused before Ray starts
        if chunk_files or (args.retriever != "bm25" and args.embedder != DEFAULT_EMBEDDER):
            raise ExplorerError(
                ErrorCode.USAGE,
                "--engine ray measures --policy columns with the default embedder; "
                "--chunks and --embedder run on the local engine",
            )
        notes = partial(print, file=stderr)
        evaluation = ray_evaluate(
            _ray_run(args), questions, columns, args.retriever, k, grammar,
            args.skip_failed, notes, judging,
        )  # fmt: skip
    else:
        limits = _limits(args)

        def measure(load: LoadResult, embed: Embed | None) -> Evaluation:
            return evaluate(
                load, questions, columns, args.retriever, k, limits, embed, chunk_files, judging
            )

        evaluation, embedder = _measure(args, stderr, measure)
        if isinstance(embedder, ApiEmbedder):
            evaluation = with_embedder(evaluation, embedder.usage())
    for policy in evaluation["policies"]:
        _print_notes(stderr, policy["name"], policy.get("notes", []))
    if args.out is not None:
        _write_atomically(args.out, dump_json(evaluation))
    if args.report is not None:
        _write_atomically(args.report, evaluation_page(evaluation, sweep=args.sweep is not None))
    if args.sweep is not None or args.out is not None:
        stdout.write(curve(evaluation))
    else:
        stdout.write(dump_json(evaluation))
    decision = evaluation["decision"]
    if decision is not None:
        print(f"decision: {decision['choice']}: {decision['why']}", file=stderr)
    return 0


def _questions(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    """`questions draft`: the only subcommand of `questions`."""
    config = _one_config(args)
    spec = args.generator or ""
    options = _endpoint(args, spec, "--generator")  # all refused before any work
    asker = api_generator(spec, options, args.seed) if spec.startswith(PREFIX) else None
    generator = load_generator(spec) if spec and asker is None else None
    _, load = _load(args, stderr)
    documents = _readable(load, config, stderr)
    index = build_index(documents, config, _limits(args))
    texts = {document["source_id"]: document["text"] for document in documents}
    passages = boundary_passages(texts, index["chunks"])
    chosen = choose(passages, args.n, args.seed)
    drafted = draft_asked(chosen, asker) if asker else draft_questions(chosen, generator)
    if len(chosen) < args.n:
        print(
            f"note: {len(passages)} passage(s) cross a boundary of {config.label()}; "
            f"drafting {len(chosen)}",
            file=stderr,
        )
    _emit(lambda write: write(questions_json(drafted).encode()), args.out, stdout)
    if drafted.draft is not None:
        report = drafted.draft
        print(
            f"drafted: {report.asked} asked, {report.kept} kept, {report.left_out} left out; "
            f"usage: {asker.endpoint.requests if asker else 0} request(s)",
            file=stderr,
        )
        for left in report.reasons:
            print(f"note: left out {left.source_id} at {left.start}: {left.reason}", file=stderr)
    if generator is None and asker is None:
        print(
            f"note: {len(chosen)} question(s) to write: fill in each `question` before evaluate",
            file=stderr,
        )
    return 0


Handler = Callable[[argparse.Namespace, TextIO, TextIO], int]
# One handler per subcommand, by the name it is called with.
HANDLERS: dict[str, Handler] = {
    "compare": _compare,
    "index": _index,
    "validate": _validate,
    "manifest": _manifest,
    "chunk-map": _chunk_maps,
    "ingest": _ingest,
    "search": _search,
    "history": _history,
    "documents": _documents,
    "evaluate": _evaluate,
    "diff": _diff,
    "export": _export,
    "questions": _questions,
    "curve": _curve,
}


def main(
    argv: Sequence[str] | None = None, stdout: TextIO | None = None, stderr: TextIO | None = None
) -> int:
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    try:
        args = _parser().parse_args(argv)
        return HANDLERS[args.command](args, stdout, stderr)
    except ExplorerError as error:
        print(f"error: {error.code.value}: {error.detail}", file=stderr)
        refused = (ErrorCode.INVALID_CHUNK_INDEX, ErrorCode.INVALID_CHUNK_MAP)
        return 1 if error.code in refused else 2
