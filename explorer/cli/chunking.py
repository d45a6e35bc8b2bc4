"""The commands that cut documents into chunks: `compare`, `index`, `validate`, `export`,
`chunk-map` and `curve`."""

from __future__ import annotations

import argparse
from functools import partial
from pathlib import Path
from typing import TextIO
from urllib.parse import quote

from ..checking.chunk_map import (
    LOGICAL_FILE,
    check_against,
    chunk_maps,
    decode_chunk_map,
    write_chunk_maps,
)
from ..checking.validate import check_against_sources, validate_index_file
from ..chunking.export import EXPORT_FORMATS
from ..chunking.imports import place
from ..chunking.index import readable, write_index
from ..chunking.policies import SEMANTIC
from ..chunking.policies.semantic import curve_json, document_curve
from ..chunking.snippet import snippet, snippet_refusal
from ..errors import ErrorCode, ExplorerError, io_error
from ..jsonio import dump_json
from ..pipeline import Settings, write_comparison, write_export
from ..retrieval.embedding import DEFAULT_EMBEDDER, load_embedder
from ..sources.loading import LoadResult
from ..sources.manifest import parse_manifest, require_unique_source_ids
from .files import (
    MAX_INPUT_FILE_BYTES,
    _documents,
    _emit,
    _load,
    _print_notes,
    _read,
    _readable,
    _write_atomically,
)
from .options import (
    Commands,
    _chunk_files,
    _chunk_options,
    _column_options,
    _configs,
    _embedder_option,
    _engine_options,
    _grammar,
    _limit_options,
    _limits,
    _one_config,
    _ray_run,
    _size_options,
    _spread,
    _workers_option,
    with_manifest,
)


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


def add_compare(commands: Commands) -> None:
    comp = with_manifest(commands, "compare", "Build every policy's index and run the span checks.")
    _column_options(comp, repeatable=True)
    _chunk_options(comp)
    comp.add_argument("--fixed-chars", type=int, help="in short: fixed-char's max_chars (80)")
    comp.add_argument("--target-chars", type=int, help="in short: heading-aware's max_chars (220)")


def _compare(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    settings = _settings(args)
    manifest, load = _load(args, stderr)
    notes = partial(_print_notes, stderr)
    produce = partial(
        write_comparison, load, manifest.span_checks, settings, limits=_limits(args), notes=notes
    )
    _emit(produce, args.out, stdout)
    return 0


def add_index(commands: Commands) -> None:
    one = with_manifest(
        commands, "index", "Build one policy's index, or a chunk file's (--chunks)."
    )
    _column_options(one, repeatable=False)
    _chunk_options(one)
    _engine_options(one)
    _workers_option(one, "cut the documents")


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
    from ..engines.ray import ray_write_index

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


def add_validate(commands: Commands) -> None:
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
        load = _documents(args, manifest)
        cut = readable(load.documents, index.config, "the index").documents
        check_against_sources(index.documents, LoadResult(load.statuses, tuple(cut)))
    print(f"valid {index.index_id}", file=stdout)
    return 0


def add_export(commands: Commands) -> None:
    out = with_manifest(
        commands,
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


def add_chunk_map(commands: Commands) -> None:
    maps = with_manifest(
        commands,
        "chunk-map",
        "Write each document's chunk map (no content), or --check one; exit 1 if refused.",
    )
    _column_options(maps, repeatable=False)
    maps.add_argument("--check", type=Path, metavar="FILE", help="a chunk-map.json to check")


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


def add_curve(commands: Commands) -> None:
    drawn = with_manifest(
        commands,
        "curve",
        "A semantic column's curve for one document: its sentences, each gap's windows and "
        "distance, the threshold and the breakpoints.",
    )
    drawn.add_argument("--source-id", required=True, metavar="ID", help="the document")
    _column_options(drawn, repeatable=False)
    drawn.add_argument("--json", action="store_true", help="print the curve as one JSON document")


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
