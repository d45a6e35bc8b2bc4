"""The one pipeline: documents, checks and settings in; validated indexes, check results
and a report out. The command line, the report and the app all go through `explore`.

Settings name their columns from the policy registry, so a policy added there shows up
in every command and in the app without touching them. A column may also be an imported
chunk file (explorer/imports.py), placed in the documents and then indexed, validated and
checked like the others.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import groupby

import orjson

from .checking.checks import CheckResult, ResolvedCheck, evaluate_checks, resolve_check
from .checking.flags import document_flags, flag_counts, index_flags
from .checking.report import (
    REPORT_VERSION,
    DocumentStatusEntry,
    FlagCounts,
    PolicyResult,
    Report,
    SkippedCheck,
)
from .checking.validate import validate_index
from .chunking.config import (
    DEFAULT_GRAMMAR,
    DEFAULT_PERCENTILE,
    DEFAULT_WINDOW,
    MAX_CHARS_LIMIT,
    MAX_WINDOW,
    ChunkConfig,
    ParameterValue,
    loading_grammar,
)
from .chunking.export import ExportFormat, export_lines
from .chunking.imports import ChunkFile, place
from .chunking.index import (
    ChunkRecord,
    GivenSpans,
    Index,
    IndexSummary,
    build_index,
    readable,
    write_index,
)
from .chunking.policies import (
    LIBRARY_POLICIES,
    OWN_POLICIES,
    POLICIES,
    SEMANTIC,
    make_config,
    require_stoppable,
    resized,
)
from .errors import ErrorCode, ExplorerError
from .grammars import GRAMMARS, V1_GRAMMAR, Grammar
from .jsonio import json_or_text
from .limits import DEFAULT_LIMITS, Limits
from .memo import derived_once
from .sources.documents import DocumentRecord
from .sources.loading import DEFAULT_MAX_DOCUMENT_BYTES, LoadResult, decode_source
from .sources.manifest import Manifest, SpanCheck

# Older links name the two sized policies by these keys; they are still read.
_QUERY_ALIASES = {"fixed": "fixed-char", "target": "heading-aware"}


MAX_COLUMNS = 8
MAX_OWN_COLUMNS = 4  # columns of our policies a link or the app shows
COLUMNS_KEY = "columns"
GRAMMAR_KEY = "grammar"
# A semantic column's curve in a link: its percentile and window.
PERCENTILE_KEY = "semantic.p"
WINDOW_KEY = "semantic.w"


@dataclass(frozen=True)
class Settings:
    """The columns to compare: one config per column, in the order they are shown, then
    the imported chunk files, each by its own name."""

    configs: tuple[ChunkConfig, ...]
    chunk_files: tuple[ChunkFile, ...] = ()

    def __post_init__(self) -> None:
        count = len(self.configs) + len(self.chunk_files)
        if not 1 <= count <= MAX_COLUMNS:
            raise ExplorerError(ErrorCode.USAGE, f"compare 1 to {MAX_COLUMNS} columns, not {count}")
        if len(set(self.configs)) < len(self.configs):
            raise ExplorerError(ErrorCode.USAGE, "the same policy and size is given twice")
        names = self.names
        repeated = next((name for name in names if names.count(name) > 1), None)
        if repeated is not None:
            raise ExplorerError(
                ErrorCode.USAGE, f"two columns are named {repeated!r}: name each chunk file apart"
            )

    @property
    def names(self) -> list[str]:
        """Every column's name, the configs' and then the chunk files'."""
        return [*self.config_names, *(chunk_file.name for chunk_file in self.chunk_files)]

    @property
    def config_names(self) -> list[str]:
        """Each config's column name: its policy; `policy@size` (`policy@256t` in tokens)
        where the policy repeats; its whole label where even that repeats (another
        overlap or grammar)."""
        strategies = [config.strategy for config in self.configs]
        short = [
            config.strategy
            if strategies.count(config.strategy) == 1
            else f"{config.strategy}@{_size(config) if config.sized else 'none'}"
            for config in self.configs
        ]
        return [
            name if short.count(name) == 1 else config.label()
            for name, config in zip(short, self.configs, strict=True)
        ]

    @classmethod
    def default(cls) -> Settings:
        """Every registered policy at its default size, in registry order."""
        return cls.from_sizes({})

    @classmethod
    def from_sizes(
        cls, sizes: Mapping[str, int | None], grammar: str = DEFAULT_GRAMMAR
    ) -> Settings:
        """Every registered policy under `grammar`; `sizes` maps a sized policy's name to
        its max_chars."""
        unknown = sorted(set(sizes) - set(POLICIES))
        if unknown:
            raise ExplorerError(
                ErrorCode.UNSUPPORTED_CHUNK_CONFIG,
                f"unknown policy {unknown[0]!r}; known: {', '.join(POLICIES)}",
            )
        return cls(tuple(make_config(name, sizes.get(name), grammar=grammar) for name in POLICIES))

    @classmethod
    def from_query(
        cls, query: Mapping[str, str], high: int = MAX_CHARS_LIMIT
    ) -> tuple[Settings, list[str]]:
        """Settings from a link's parameters, and a sentence for each value ignored.

        A bad value never stops the page: it is named, and the default is used instead.
        `high` is the largest size the reader offers. Our policies' columns are either
        `columns=POLICY[:SIZE];…` (any policy, any size, in order) or, for the default
        layout, one `POLICY=MAX_CHARS` per sized policy; `grammar=markdown` applies to
        every column.
        """
        notes: list[str] = []
        grammar = query.get(GRAMMAR_KEY, DEFAULT_GRAMMAR)
        if grammar not in GRAMMARS:
            notes.append(
                f"Ignored grammar={_shown(grammar)} from the link: "
                f"the grammar is one of {', '.join(GRAMMARS)}."
            )
            grammar = DEFAULT_GRAMMAR
        own = (
            _own_columns(query[COLUMNS_KEY], high, grammar, notes, _curve_settings(query, notes))
            if COLUMNS_KEY in query
            else ()
        )
        sizes: dict[str, int] = {}
        live: list[ChunkConfig] = []
        for key, raw in query.items():
            name = _QUERY_ALIASES.get(key, key)
            if name in LIBRARY_POLICIES:
                try:
                    parameters = _parameters(name, query)
                    if LIBRARY_POLICIES[name].default_max_chars is None:  # it takes no size
                        config = make_config(name, parameters=parameters)
                    else:
                        config = _column_config(name, raw, high, parameters=parameters)
                    require_stoppable(config)  # a link is someone else's: no regex
                    if len(live) + (len(own) or len(POLICIES)) == MAX_COLUMNS:
                        raise ExplorerError(
                            ErrorCode.USAGE, f"a page shows at most {MAX_COLUMNS} columns"
                        )
                except ExplorerError as error:
                    notes.append(f"Ignored the {name} column from the link: {error.detail}.")
                    continue
                live.append(config)
                continue
            policy = POLICIES.get(name)
            if own or policy is None or policy.default_max_chars is None:
                continue
            size = _whole_number(raw, 1, high)
            if size is None:
                notes.append(
                    f"Ignored {key}={_shown(raw)} from the link: the max_chars of {name} must "
                    f"be a whole number from 1 to {high:,}."
                )
            else:
                sizes[name] = size
        if not own:
            own = tuple(make_config(name, sizes.get(name), grammar=grammar) for name in POLICIES)
        return cls(own + tuple(live)), notes

    def to_query(self) -> dict[str, str]:
        """The link parameters that `from_query` reads back into these settings: our
        columns (each sized policy's max_chars when they are the default layout, else
        `columns`), a live column's size (`500`, `500,50` with overlap, `256t` in tokens)
        and each parameter not at the library's default as `NAME.KEY=JSON`, and the
        grammar when it is not v1."""
        query: dict[str, str] = {}
        own = [config for config in self.configs if config.library is None]
        if _default_layout(own):
            query.update((c.strategy, str(c.max_chars)) for c in own if c.max_chars is not None)
        else:
            query[COLUMNS_KEY] = ";".join(
                f"{c.strategy}:{_size_spec(c)}" if c.sized else c.strategy for c in own
            )
        for config in own:
            if config.semantic is not None:  # the first semantic column's
                query.setdefault(PERCENTILE_KEY, str(config.semantic.breakpoint_percentile))
                query.setdefault(WINDOW_KEY, str(config.semantic.window))
        for config in self.configs:
            if config.library is not None:
                query.setdefault(config.strategy, _size_spec(config) if config.sized else "on")
                defaults = LIBRARY_POLICIES[config.strategy].default_parameters()
                for key, value in config.library.parameters.items():
                    if value != defaults[key]:
                        query.setdefault(f"{config.strategy}.{key}", json.dumps(value))
        grammars = {config.grammar for config in own} - {None}
        if grammars:
            query[GRAMMAR_KEY] = grammars.pop() or DEFAULT_GRAMMAR
        return query

    @property
    def grammar(self) -> Grammar:
        """The grammar the documents load under (`loading_grammar`): a chunk file's
        column, or a library's, never asks for grammar v1."""
        return loading_grammar(self.configs)

    def config_for(self, name: str) -> ChunkConfig:
        """The first column's config of policy `name`, or that policy's default."""
        return next((c for c in self.configs if c.strategy == name), None) or make_config(name)


def _shown(raw: str) -> str:
    return repr(raw if len(raw) <= 40 else raw[:40] + "…")


def _default_layout(own: Sequence[ChunkConfig]) -> bool:
    """Whether our columns are the default ones but for their sizes in characters: every
    registered policy once, in registry order, without overlap."""
    return [c.strategy for c in own] == list(POLICIES) and all(
        c.unit is None and c.overlap is None for c in own
    )


def _size(config: ChunkConfig) -> str:
    """A sized column's size in short: `SIZE` in characters, `SIZEt` in tokens."""
    return f"{config.size()}{'t' if config.unit is not None else ''}"


def _size_spec(config: ChunkConfig) -> str:
    """A column's size in a link: its `_size`, then `,OVERLAP` when it has one."""
    return _size(config) + (f",{config.overlap}" if config.overlap else "")


def _curve_settings(query: Mapping[str, str], notes: list[str]) -> tuple[int, int]:
    """A link's semantic percentile and window (`semantic.p`, `semantic.w`), each its
    default when absent or not a whole number in range (with a note)."""
    chosen = []
    for key, default, low, high in (
        (PERCENTILE_KEY, DEFAULT_PERCENTILE, 0, 100),
        (WINDOW_KEY, DEFAULT_WINDOW, 1, MAX_WINDOW),
    ):
        raw = query.get(key)
        value = None if raw is None else _whole_number(raw, low, high)
        if raw is not None and value is None:
            notes.append(
                f"Ignored {key}={_shown(raw)} from the link: it is a whole number from "
                f"{low} to {high}."
            )
        chosen.append(default if value is None else value)
    return chosen[0], chosen[1]


def _own_columns(
    raw: str,
    high: int,
    grammar: str,
    notes: list[str],
    curve: tuple[int, int] = (DEFAULT_PERCENTILE, DEFAULT_WINDOW),
) -> tuple[ChunkConfig, ...]:
    """`columns=POLICY[:SIZE];…` of a link: our policies' columns in order, each sized one
    with `SIZE[t][,OVERLAP]` (its default size when left out); () when none can be read,
    with a note for each item ignored. A semantic column takes `curve`, its percentile
    and window, and WordLlama."""
    configs: list[ChunkConfig] = []
    for item in raw.split(";")[: MAX_OWN_COLUMNS + 1]:
        name, _, size = item.strip().partition(":")
        policy = OWN_POLICIES.get(name)
        try:
            if policy is None:
                raise ExplorerError(
                    ErrorCode.USAGE, f"{_shown(name)} is not one of {', '.join(OWN_POLICIES)}"
                )
            if name == SEMANTIC.name:
                config = make_config(
                    name, grammar=grammar, breakpoint_percentile=curve[0], window=curve[1]
                )
                if size:
                    sized = _column_config("heading-aware", size, high)  # SIZE or SIZEt
                    if sized.overlap:
                        raise ExplorerError(ErrorCode.USAGE, f"{name} takes no overlap")
                    config = resized(config, sized.size(), sized.unit is not None)
            elif size and policy.default_max_chars is not None:
                config = _column_config(name, size, high, grammar)
            else:
                config = make_config(name, grammar=grammar)
            if config in configs:
                raise ExplorerError(ErrorCode.USAGE, "it repeats a column before it")
            if len(configs) == MAX_OWN_COLUMNS:
                raise ExplorerError(ErrorCode.USAGE, f"at most {MAX_OWN_COLUMNS} are shown")
        except ExplorerError as error:
            notes.append(f"Ignored the column {_shown(item)} from the link: {error.detail}.")
            continue
        configs.append(config)
    return tuple(configs)


def _parameters(name: str, query: Mapping[str, str]) -> dict[str, ParameterValue]:
    """A live column's parameters in a link, `NAME.KEY=VALUE`, each JSON or else text."""
    prefix = name + "."
    return {
        key.removeprefix(prefix): json_or_text(value)
        for key, value in query.items()
        if key.startswith(prefix)
    }


def _column_config(
    name: str,
    raw: str,
    high: int,
    grammar: str = DEFAULT_GRAMMAR,
    parameters: Mapping[str, ParameterValue] | None = None,
) -> ChunkConfig:
    """A sized column from a link: `SIZE[,OVERLAP]`, `SIZEt` in tokens (a library's
    column cuts whole documents: it takes no grammar)."""
    size_part, _, overlap_part = raw.partition(",")
    tokens = size_part.strip().endswith("t")
    size = _whole_number(size_part.strip().removesuffix("t"), 1, high)
    overlap = _whole_number(overlap_part, 1, high) if overlap_part else 0
    if size is None or overlap is None:
        raise ExplorerError(
            ErrorCode.USAGE,
            f"{_shown(raw)} is not SIZE or SIZE,OVERLAP (SIZEt in tokens) of whole numbers "
            f"from 1 to {high:,}",
        )
    if tokens:
        return make_config(
            name, max_tokens=size, overlap=overlap, grammar=grammar, parameters=parameters
        )
    return make_config(name, size, overlap=overlap, grammar=grammar, parameters=parameters)


def _whole_number(raw: str, low: int, high: int) -> int | None:
    """`raw` as an int in [low, high], or None; ASCII digits only, and never a huge parse."""
    digits = raw.strip()
    if not digits or len(digits) > len(str(high)) or not (digits.isascii() and digits.isdigit()):
        return None
    value = int(digits)
    return value if low <= value <= high else None


@dataclass(frozen=True)
class Column:
    """One policy's validated index over all documents, and its span checks."""

    config: ChunkConfig
    result: PolicyResult
    index: Index

    @property
    def name(self) -> str:
        return self.result["name"]

    def chunks_of(self, source_id: str) -> list[ChunkRecord]:
        """One document's chunks, in order."""
        return [c for c in self.index["chunks"] if c["source_id"] == source_id]


@dataclass(frozen=True)
class Exploration:
    """Everything one view of the documents shows, and the report that records it."""

    load: LoadResult
    checks: tuple[ResolvedCheck, ...]
    skipped: tuple[SkippedCheck, ...]
    columns: tuple[Column, ...]
    _texts: dict[str, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        texts = {d["source_id"]: d["text"] for d in self.load.documents}
        object.__setattr__(self, "_texts", texts)

    @property
    def source_ids(self) -> list[str]:
        return list(self._texts)

    def text(self, source_id: str) -> str:
        return self._texts[source_id]

    def document(self, source_id: str) -> DocumentRecord:
        return next(d for d in self.load.documents if d["source_id"] == source_id)

    @cached_property
    def report(self) -> Report:
        return assemble_report(self.load, self.skipped, self.columns)


def resolve_checks(
    load: LoadResult, checks: Sequence[SpanCheck]
) -> tuple[tuple[ResolvedCheck, ...], tuple[SkippedCheck, ...]]:
    """Place every check's spans in its document; a failed document's checks are skipped
    (and said so), never evaluated against nothing."""
    texts = {d["source_id"]: d["text"] for d in load.documents}
    status = {s.source_id: s for s in load.statuses}
    resolved: list[ResolvedCheck] = []
    skipped: list[SkippedCheck] = []
    for check in checks:
        text = texts.get(check.source_id)
        if text is None:
            reason = f"its document did not load ({status[check.source_id].status})"
            skipped.append({"id": check.id, "source_id": check.source_id, "reason": reason})
        else:
            resolved.append(resolve_check(check, text))
    return tuple(resolved), tuple(skipped)


def _require_documents(load: LoadResult) -> None:
    if not load.documents:
        raise ExplorerError(
            ErrorCode.NO_DOCUMENTS, "no document loaded, so there is nothing to chunk"
        )


def _policy_result(
    name: str,
    config: ChunkConfig,
    index_id: str,
    chunk_count: int,
    checks: list[CheckResult],
    notes: Sequence[str] = (),
    *,
    flags: FlagCounts,
) -> PolicyResult:
    result: PolicyResult = {
        "name": name,
        "config": config.as_json(),
        "index_id": index_id,
        "chunk_count": chunk_count,
        "checks": checks,
        "flags": flags,
    }
    if notes:
        result["notes"] = list(notes)
    return result


def run_column(
    name: str,
    documents: Sequence[DocumentRecord],
    checks: Sequence[ResolvedCheck],
    config: ChunkConfig,
    limits: Limits = DEFAULT_LIMITS,
) -> Column:
    """One policy's index over the documents it can read (`readable`), validated, and
    its span checks."""
    cut = readable(documents, config, name)
    documents, notes = cut.required(), cut.notes
    with derived_once():  # the validation rebuilds from the sections the build found
        index = validate_index(build_index(documents, config, limits), limits)
    results = evaluate_checks(checks, index["chunks"], limits)
    flags = _flags(documents, index["chunks"], config)
    result = _policy_result(
        name, config, index["index_id"], len(index["chunks"]), results, notes, flags=flags
    )
    return Column(config, result, index)


def _flags(
    documents: Sequence[DocumentRecord], chunks: Sequence[ChunkRecord], config: ChunkConfig
) -> FlagCounts:
    """The report's count of each quality flag over a column's chunks (docs/contract.md §12)."""
    texts = {document["source_id"]: document["text"] for document in documents}
    return flag_counts(index_flags(texts, chunks, config))


def import_column(
    chunk_file: ChunkFile,
    documents: Sequence[DocumentRecord],
    checks: Sequence[ResolvedCheck],
    limits: Limits = DEFAULT_LIMITS,
) -> Column:
    """An imported chunk file's index over the documents, validated, and its span checks."""
    placement = place(chunk_file, documents, limits)
    built = build_index(documents, placement.config, limits, placement.spans)
    index = validate_index(built, limits)
    results = evaluate_checks(checks, index["chunks"], limits)
    result = _policy_result(
        chunk_file.name,
        placement.config,
        index["index_id"],
        len(index["chunks"]),
        results,
        placement.notes,
        flags=_flags(documents, index["chunks"], placement.config),
    )
    return Column(placement.config, result, index)


# How `explore` builds one column, and one chunk file's; the app passes cached ones.
ColumnRunner = Callable[
    [str, Sequence[DocumentRecord], Sequence[ResolvedCheck], ChunkConfig, Limits], Column
]
ImportRunner = Callable[
    [ChunkFile, Sequence[DocumentRecord], Sequence[ResolvedCheck], Limits], Column
]


def explore(
    load: LoadResult,
    checks: Sequence[SpanCheck],
    settings: Settings,
    limits: Limits = DEFAULT_LIMITS,
    run: ColumnRunner = run_column,
    run_import: ImportRunner = import_column,
) -> Exploration:
    """The pipeline: resolve the checks, build and validate each column, run the checks.
    Each grammar parses a document once for all the columns (`derived_once`)."""
    _require_documents(load)
    resolved, skipped = resolve_checks(load, checks)
    with derived_once():
        columns = tuple(
            run(name, load.documents, resolved, config, limits)
            for name, config in zip(settings.config_names, settings.configs, strict=True)
        )
        imported = tuple(
            run_import(chunk_file, load.documents, resolved, limits)
            for chunk_file in settings.chunk_files
        )
    return Exploration(load, resolved, skipped, columns + imported)


def document_entries(load: LoadResult) -> list[DocumentStatusEntry]:
    return [
        {"source_id": s.source_id, "status": s.status, "detail": s.detail} for s in load.statuses
    ]


def assemble_report(
    load: LoadResult, skipped: Sequence[SkippedCheck], columns: Sequence[Column]
) -> Report:
    return {
        "report_version": REPORT_VERSION,
        "policies": [column.result for column in columns],
        "documents": document_entries(load),
        "skipped_checks": list(skipped),
        "indexes": {column.name: column.index for column in columns},
    }


def compare(
    load: LoadResult,
    checks: Sequence[SpanCheck],
    settings: Settings | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> Report:
    """The comparison report of `explore`, every registered policy by default."""
    return explore(load, checks, settings or Settings.default(), limits).report


# A column as `write_comparison` writes it: its name, config, given spans, notes, and
# the documents it cuts.
_Planned = tuple[str, ChunkConfig, GivenSpans | None, Sequence[str], Sequence[DocumentRecord]]


def _planned(
    load: LoadResult,
    settings: Settings,
    limits: Limits,
    notes: Callable[[str, Sequence[str]], object] | None,
) -> list[_Planned]:
    """Each column as it is written: every chunk file placed first (a refusal leaves
    nothing half written), and what placing it, or a grammar, left out said to `notes`."""
    placements = [place(chunk_file, load.documents, limits) for chunk_file in settings.chunk_files]
    if notes is not None:
        for chunk_file, placement in zip(settings.chunk_files, placements, strict=True):
            notes(chunk_file.name, placement.notes)
    columns: list[_Planned] = []
    for name, config in zip(settings.config_names, settings.configs, strict=True):
        cut = readable(load.documents, config, name)
        readable_documents = cut.required()
        if notes is not None:
            notes(name, cut.notes)
        columns.append((name, config, None, cut.notes, readable_documents))
    columns += [
        (chunk_file.name, placement.config, placement.spans, placement.notes, load.documents)
        for chunk_file, placement in zip(settings.chunk_files, placements, strict=True)
    ]
    return columns


def write_export(
    load: LoadResult,
    settings: Settings,
    shape: ExportFormat,
    write: Callable[[bytes], object],
    limits: Limits = DEFAULT_LIMITS,
    notes: Callable[[str, Sequence[str]], object] | None = None,
) -> IndexSummary:
    """One column's chunks in `shape` (chunking/export.py), as bytes passed to `write`
    one document at a time, in the index's order: the index is built twice, first for
    its `index_id` (each chunk's metadata holds it), never held whole."""
    _require_documents(load)
    if len(settings.names) != 1:
        raise ExplorerError(
            ErrorCode.USAGE,
            f"export takes one column (--policy … or --chunks NAME=FILE), not "
            f"{len(settings.names)}",
        )
    ((_, config, given, _, documents),) = _planned(load, settings, limits, notes)
    summary = write_index(documents, config, lambda _: None, None, limits, given)

    def lines(document: DocumentRecord, chunks: list[ChunkRecord]) -> None:
        write(export_lines(shape, document, chunks, config, summary.index_id))

    write_index(documents, config, lambda _: None, lines, limits, given)
    return summary


def export_column(column: Column, shape: ExportFormat) -> bytes:
    """`write_export`'s bytes of a column already built (the app's), its chunks grouped
    by document in the index's order."""
    documents = {document["source_id"]: document for document in column.index["documents"]}
    index_id = column.index["index_id"]
    return b"".join(
        export_lines(shape, documents[source_id], list(chunks), column.config, index_id)
        for source_id, chunks in groupby(column.index["chunks"], key=lambda c: c["source_id"])
    )


def write_comparison(
    load: LoadResult,
    checks: Sequence[SpanCheck],
    settings: Settings,
    write: Callable[[bytes], object],
    limits: Limits = DEFAULT_LIMITS,
    notes: Callable[[str, Sequence[str]], object] | None = None,
) -> None:
    """`compare` as JSON bytes passed to `write` while each index is built, never holding
    a whole index: `json.loads` of them equals `compare(load, checks, settings)`.

    The keys come in another order: `indexes` before `policies`, whose ids and checks
    are known only once each index has been written. The checks see the chunks of their
    own documents, kept while the index streams past. `notes` hears what placing each
    chunk file had to say, and which documents a column's grammar left out (the report
    says it too).
    """
    _require_documents(load)
    resolved, skipped = resolve_checks(load, checks)
    checked = {check.source_id for check in resolved}
    columns = _planned(load, settings, limits, notes)
    write(
        b'{"report_version":%d,\n"documents":%b,\n"skipped_checks":%b,\n"indexes":{'
        % (REPORT_VERSION, orjson.dumps(document_entries(load)), orjson.dumps(list(skipped)))
    )
    policies: list[PolicyResult] = []
    for position, (name, config, given, said, documents) in enumerate(columns):
        write(b"%b%b:" % (b",\n" if position else b"\n", orjson.dumps(name)))
        kept: list[ChunkRecord] = []
        flagged: list[tuple[str, ...]] = []  # each chunk's flags, while the index streams

        def keep(
            document: DocumentRecord,
            chunks: list[ChunkRecord],
            kept: list[ChunkRecord] = kept,
            flagged: list[tuple[str, ...]] = flagged,
            config: ChunkConfig = config,
        ) -> None:
            if document["source_id"] in checked:
                kept.extend(chunks)
            flagged.extend(document_flags(document["text"], chunks, config))

        summary = write_index(documents, config, write, keep, limits, given)
        results = evaluate_checks(resolved, kept, limits)
        flags = flag_counts(flagged)
        policies.append(
            _policy_result(
                name, config, summary.index_id, summary.chunk_count, results, said, flags=flags
            )
        )
    write(b'},\n"policies":%b}\n' % orjson.dumps(policies))


def unreadable_under_v1(documents: Sequence[DocumentRecord]) -> list[str]:
    """The source_ids of the documents grammar v1 cannot cut: they do not open with a
    heading line (a column under v1 leaves them out; markdown reads them)."""
    found = []
    for document in documents:
        try:
            V1_GRAMMAR.admit(document["text"])
        except ExplorerError:
            found.append(document["source_id"])
    return found


def without_heading(
    manifest: Manifest, files: Mapping[str, bytes], max_bytes: int = DEFAULT_MAX_DOCUMENT_BYTES
) -> list[str]:
    """`unreadable_under_v1` of a drop before it is loaded: each file decoded as loading
    decodes it; a file that is missing, larger than `max_bytes` or fails to decode is
    not one of them."""
    records = []
    for entry in manifest.documents:
        data = files.get(entry["path"])
        if data is None or len(data) > max_bytes:
            continue
        try:
            records.append(decode_source(entry, data))
        except ExplorerError:
            continue
    return unreadable_under_v1(records)
