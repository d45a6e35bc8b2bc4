"""The options commands share, and what they turn into: a parser that refuses with a code,
the columns (`--policy` and its sizes), the size and work limits, the questions, the
endpoint and embedder, the engine and `--workers`."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TextIO, TypeAlias, cast

from ..chunking.config import DEFAULT_GRAMMAR, MAX_CHARS_LIMIT, ChunkConfig, ParameterValue
from ..chunking.imports import MAX_CHUNK_FILE_BYTES, ChunkFile
from ..chunking.policies import CHOOSABLE, OWN_POLICIES, SEMANTIC, make_config
from ..errors import ErrorCode, ExplorerError
from ..grammars import GRAMMARS
from ..jsonio import json_or_text
from ..limits import (
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
from ..retrieval.embedding import (
    DEFAULT_API_BATCH,
    DEFAULT_EMBEDDER,
    MAX_BATCH,
    MAX_DIMENSIONS,
    ApiEmbedder,
    Embedder,
    load_embedder,
)
from ..retrieval.endpoint import (
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
from ..retrieval.evaluate import BUDGET_K, DEFAULT_K, MAX_K, parse_budget
from ..retrieval.retrievers import RETRIEVERS
from ..retrieval.vectors import DEFAULT_VECTOR_CACHE
from ..sources.loading import (
    DEFAULT_MAX_DOCUMENT_BYTES,
    DEFAULT_MAX_TOTAL_BYTES,
    MAX_DOCUMENT_BYTES_LIMIT,
    MAX_TOTAL_BYTES_LIMIT,
    DirectoryReader,
)
from ..sources.manifest import parse_manifest, require_unique_source_ids
from ..workers import Spread, cpus
from .files import _read

if TYPE_CHECKING:
    from ..engines.ray import RayRun


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise ExplorerError(ErrorCode.USAGE, f"{message} (see --help)")


# The subcommands of the parser (or of `questions`): each command adds itself to them.
Commands: TypeAlias = "argparse._SubParsersAction[_Parser]"

# What `--embedder` takes where an embedder may be an API's.
EMBEDDER_HELP = (
    f"'{DEFAULT_EMBEDDER}' (default: bundled, offline), 'none', openai:MODEL (an "
    "OpenAI-compatible API) or package.module:factory"
)


def with_manifest(group: Commands, name: str, help_text: str) -> argparse.ArgumentParser:
    """A command of `group` that reads a manifest: its --out, size and work limits, and
    --skip-failed."""
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
        raise argparse.ArgumentTypeError(
            f"{value[:40]!r} is not above 0 and at most {MAX_REQUEST_SECONDS}"
        )
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
    """Where the documents are chunked (explorer/engines/ray.py; docs/cluster.md)."""
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
    from ..engines.ray import RayRun, start_ray

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
