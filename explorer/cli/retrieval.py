"""The commands that measure retrieval: `evaluate`, `questions draft`, and `diff` (two
columns' boundaries and, with --questions, the questions that flip)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TextIO, TypeVar

from ..chunking.config import loading_grammar
from ..chunking.index import build_index
from ..errors import ErrorCode, ExplorerError
from ..jsonio import dump_json
from ..pipeline import Settings, explore
from ..retrieval.decide import DEFAULT_RESAMPLES, DEFAULT_SEED, MAX_RESAMPLES, require_resamples
from ..retrieval.drafting import (
    DEFAULT_DRAFTS,
    api_generator,
    boundary_passages,
    choose,
    draft_asked,
    draft_questions,
    load_generator,
)
from ..retrieval.embedding import DEFAULT_EMBEDDER, NO_EMBEDDER, ApiEmbedder, Embedder
from ..retrieval.endpoint import PREFIX
from ..retrieval.evaluate import (
    METRICS,
    Evaluation,
    Judging,
    curve,
    evaluate,
    require_metric,
    sweep_columns,
    with_embedder,
)
from ..retrieval.flips import Diff, Measured, diff_columns, require_pair, summary_text
from ..retrieval.questions import MAX_QUESTIONS, parse_questions, questions_json
from ..retrieval.retrievers import Embed
from ..retrieval.vectors import VectorCache
from ..sources.loading import LoadResult
from ..view.evaluation_page import evaluation_page
from .files import _emit, _load, _print_notes, _read, _readable, _write_atomically
from .options import (
    EMBEDDER_HELP,
    Commands,
    _at_least_zero,
    _chunk_files,
    _chunk_options,
    _column_options,
    _configs,
    _depth,
    _embedder,
    _endpoint,
    _endpoint_options,
    _engine_options,
    _grammar,
    _limits,
    _one_config,
    _Parser,
    _positive,
    _print_usage,
    _question_options,
    _ray_run,
    _whole,
    with_manifest,
)

T = TypeVar("T")


def add_evaluate(commands: Commands) -> None:
    measure = with_manifest(
        commands, "evaluate", "Measure retrieval: each policy's top-k chunks against known answers."
    )
    _question_options(measure, required=True, embedder_help=EMBEDDER_HELP)
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


def _evaluate(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    """JSON to --out (else standard output); with --sweep, the curve is printed and the
    JSON goes only to --out."""
    _require_out_folder(args.out)
    if args.report is not None:
        require_report_folder(args.report)  # refused before any work
        if args.out is not None and os.path.abspath(args.out) == os.path.abspath(args.report):
            raise ExplorerError(
                ErrorCode.USAGE, "--out and --report name the same file: give each its own"
            )
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
        from ..engines.ray import ray_evaluate, require_shardable

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


def add_questions(commands: Commands) -> None:
    asking = commands.add_parser("questions", help="Questions for evaluate: draft them.")
    asking_commands = asking.add_subparsers(
        dest="questions_command", required=True, parser_class=_Parser
    )
    drafting = with_manifest(
        asking_commands,
        "draft",
        "Draft questions whose answers cross a chunk boundary of one policy: a questions "
        "file for evaluate, its texts written by --generator or left for you to write.",
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


def add_diff(commands: Commands) -> None:
    differ = with_manifest(
        commands,
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
    _question_options(differ, required=False, embedder_help=EMBEDDER_HELP)
    differ.add_argument("--json", action="store_true", help="print the diff as JSON, not a summary")


def _diff(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    """JSON to --out and, with --json, to standard output; else a summary there."""
    configs, chunk_files = _configs(args), _chunk_files(args)
    require_pair([*configs, *chunk_files])
    _require_out_folder(args.out)
    settings = Settings(tuple(configs), chunk_files)  # the same column twice is refused
    # The exploration holds the configs' columns first; A is the column declared first.
    swap = bool(configs) and bool(chunk_files) and args.chunks_after[0] == 0
    questions = parse_questions(_read(args.questions, "questions file")) if args.questions else None
    if args.budget is not None and questions is None:
        raise ExplorerError(ErrorCode.USAGE, "--budget measures questions: give --questions too")
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


def _require_out_folder(path: Path | None) -> None:
    """`--out` written after all the work goes into a folder that exists: refused first."""
    if path is not None and not path.parent.is_dir():
        raise ExplorerError(ErrorCode.IO_ERROR, f"cannot write {str(path)!r}: no such folder")


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
