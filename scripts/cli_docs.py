"""docs/cli.md, generated from the argument parser of explorer/cli/ and the error codes
of explorer/errors.py, so the reference cannot go stale (`make docs` writes it;
tests/test_docs.py fails when the file differs from what this prints now).

    PYTHONPATH=. .venv/bin/python scripts/cli_docs.py [--out docs/cli.md]

Every subcommand (nested ones too) gets its `--help` exactly as argparse prints it at a
fixed width, then a table of its arguments' defaults. The error codes' sentences
live here, one row per group of codes; a code of `ErrorCode` without a row stops the
generator, naming it, so a new code cannot be left undocumented.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from unittest import mock

from explorer import cli
from explorer.cli import options
from explorer.errors import ErrorCode

CLI_MD = Path(__file__).resolve().parent.parent / "docs" / "cli.md"
WIDTH = 96  # the help's width, whatever the terminal: the file must not depend on it
# `--workers`' help names this machine's CPU count; the page names the command that prints it.
CPU_COUNT = "`nproc`"

# What each code means, a row per group: (codes, sentence).
MEANINGS: tuple[tuple[tuple[ErrorCode, ...], str], ...] = (
    (
        (ErrorCode.INVALID_MANIFEST,),
        "not JSON, unknown or missing keys, duplicate ids or paths, bad digests or values",
    ),
    (
        (ErrorCode.PATH_OUTSIDE_MANIFEST,),
        "an absolute path, a `..` escape, or a link leading out of the manifest's folder",
    ),
    (
        (ErrorCode.SOURCE_NOT_FOUND, ErrorCode.DOCUMENT_TOO_LARGE),
        "the file is missing, or larger than the limit",
    ),
    ((ErrorCode.SOURCE_DIGEST_MISMATCH,), "the bytes do not have the manifest's SHA-256"),
    (
        (ErrorCode.NOT_UTF8, ErrorCode.NUL_BYTE, ErrorCode.EMPTY_DOCUMENT),
        "the text cannot be used",
    ),
    (
        (ErrorCode.HEADING_REQUIRED,),
        "under grammar v1, the text does not start with a `#` heading: that column leaves the "
        "document out (its notes say so), and is refused, naming it, only where it can read "
        "none",
    ),
    (
        (
            ErrorCode.SPAN_QUOTE_NOT_FOUND,
            ErrorCode.SPAN_QUOTE_AMBIGUOUS,
            ErrorCode.SPAN_OUT_OF_RANGE,
        ),
        "a check's span cannot be placed",
    ),
    (
        (ErrorCode.UNSUPPORTED_CHUNK_CONFIG,),
        "an unknown policy, or a size outside 1–1,000,000",  # noqa: RUF001 (a range)
    ),
    (
        (ErrorCode.INVALID_CHUNK_INDEX,),
        "`validate` refused the file: the detail names what failed",
    ),
    ((ErrorCode.INVALID_CHUNK_MAP,), "`chunk-map --check` refused the file (exit 1)"),
    (
        (ErrorCode.INVALID_CHUNK_FILE,),
        "a `--chunks` file (or upload) is not a JSON list or JSON Lines of one known shape, "
        "names no loaded document, or has offsets that do not hold its text",
    ),
    (
        (ErrorCode.CHUNK_NOT_FOUND,),
        "a chunk without offsets is not in its document from the previous chunk's start on, "
        "exactly or ignoring whitespace and unprintable characters (`--skip-failed` leaves it out)",
    ),
    (
        (ErrorCode.TOO_MANY_CHUNKS, ErrorCode.TOO_MANY_SPAN_CHECKS),
        "a limit was passed (see [the limits](performance.md#limits)); the detail names it and "
        "the option that raises it",
    ),
    (
        (ErrorCode.UNCOUNTABLE_TEXT,),
        "in tokens, a document holds more than 500,000 blanks in a row (not newlines), more "
        "than the tokenizer can count: measure it in characters",
    ),
    (
        (ErrorCode.INVALID_STORE, ErrorCode.DELETE_UNKNOWN_DOCUMENT),
        "`--db` is not this program's index (corrupt or foreign); a deletion names a document "
        "the index does not serve",
    ),
    (
        (ErrorCode.STORE_BUSY, ErrorCode.INVALID_QUERY, ErrorCode.NOT_ALLOWED),
        "another ingest held the index past the wait (or SQLite's lock past 5 s); a search "
        "past its limits (`-k`, words, characters), or a vector search without an embedder; "
        "the app's server settings forbid that tenant or a deletion",
    ),
    (
        (ErrorCode.INVALID_EMBEDDER, ErrorCode.EMBEDDING_FAILED),
        "`--embedder` cannot be loaded or lacks a name, dimensions or `embed` (refused before "
        "the index is touched); an embedder raised or answered with the wrong shape for one "
        "document (recorded for that document, whose previous version stays served); in "
        "`evaluate`, the run stops naming the column, and what was embedded stays cached",
    ),
    (
        (ErrorCode.INVALID_QUESTIONS, ErrorCode.INVALID_GENERATOR, ErrorCode.GENERATION_FAILED),
        "a questions file (JSON or chunking_evaluation's CSV, naming the line) that cannot be "
        "read, names a document that did not load, or still has questions without text; "
        "`--generator` cannot be loaded or lacks a name or `generate`; a generator raised or "
        "returned no text for a passage (nothing is written)",
    ),
    (
        (ErrorCode.ENGINE_UNAVAILABLE, ErrorCode.WORKER_LOST),
        "`--engine ray` without Ray installed (`pip install -r requirements-ray.txt`), or a "
        "cluster at `--address` that cannot be joined (one that takes no connection within "
        "5 s is refused at once); a document whose Ray worker died on every retry; a "
        "`--workers` process that died before sending its batch",
    ),
    (
        (ErrorCode.UNSAFE_PARAMETER, ErrorCode.LIBRARY_TIMEOUT, ErrorCode.LIBRARY_FAILED),
        "a live column's parameters would run a regular expression where no time limit can "
        "stop it (the app; `ingest`); a library call took longer than `--library-seconds`; a "
        "library raised on a document or its parameters (the detail names the column, the "
        "document and what was raised)",
    ),
    (
        (ErrorCode.SCRATCH_FULL,),
        "the app's scratch index of this session, or of all sessions together, reached its "
        "size cap",
    ),
    (
        (
            ErrorCode.ENCRYPTED_DOCUMENT,
            ErrorCode.NO_TEXT_LAYER,
            ErrorCode.CORRUPT_DOCUMENT,
            ErrorCode.NOT_A_DOCX,
            ErrorCode.TOO_MANY_PAGES,
        ),
        "a PDF or Word file cannot be converted: see "
        "[PDF, Word and HTML](documents.md#a-file-that-cannot-be-read)",
    ),
    (
        (
            ErrorCode.INVALID_BUDGET,
            ErrorCode.INVALID_BOOTSTRAP,
            ErrorCode.UNKNOWN_METRIC,
            ErrorCode.REPORT_FOLDER_MISSING,
        ),
        "`evaluate`'s deciding options: a `--budget` of 0, negative or unparsable; "
        "`--bootstrap` below 0 or above 100,000; a `--decide-by` that names no metric; a "
        "`--report` in a folder that does not exist",
    ),
    (
        (ErrorCode.ENDPOINT_UNAUTHORIZED, ErrorCode.ENDPOINT_FAILED),
        "an OpenAI-compatible endpoint refused the key (401, 403), or the key is not printable "
        "ASCII (refused before any request); answered another 4xx (its "
        "status and message named), or failed past `--max-retries`",
    ),
    (
        (ErrorCode.INTERRUPTED,),
        "interrupted (Ctrl-C, or a plug-in raising KeyboardInterrupt): exit 130",
    ),
    (
        (ErrorCode.NO_DOCUMENTS, ErrorCode.INVALID_UPLOAD, ErrorCode.IO_ERROR, ErrorCode.USAGE),
        "nothing loaded; a bad upload; a file that cannot be read or written; bad arguments",
    ),
)


def _check_meanings() -> None:
    """Every code in exactly one row: refuse a code without a row or with two."""
    named = [code for codes, _ in MEANINGS for code in codes]
    twice = sorted({code.value for code in named if named.count(code) > 1})
    missing = [code.value for code in ErrorCode if code not in named]
    if twice or missing:
        raise SystemExit(
            "scripts/cli_docs.py MEANINGS: "
            + "; ".join(
                [f"no sentence for {', '.join(missing)}"] * bool(missing)
                + [f"more than one row for {', '.join(twice)}"] * bool(twice)
            )
            + " (add one row per code group, then run make docs)"
        )


def _fixed_width(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = partial(argparse.HelpFormatter, width=WIDTH)


def _commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser, str]]:
    """Each subcommand, depth first in the order they were declared: (names, parser, help)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, sub in action.choices.items():
                _fixed_width(sub)
                yield (*path, name), sub, helps.get(name, "")
                yield from _commands(sub, (*path, name))


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _default(action: argparse.Action) -> str:
    value = action.default
    if value is None or value is argparse.SUPPRESS or value is False or value == []:
        return "required" if action.required else "—"
    return f"`{value}`"


def _arguments(parser: argparse.ArgumentParser) -> list[str]:
    formatter = parser._get_formatter()
    rows = ["| argument | default |", "|---|---|"]
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
            continue
        spelled = formatter._format_action_invocation(action)
        rows.append(f"| `{_cell(spelled)}` | {_cell(_default(action))} |")
    return rows if len(rows) > 2 else []


def _anchor(names: tuple[str, ...]) -> str:
    return "-".join(names)


def generate() -> str:
    """The whole of docs/cli.md."""
    _check_meanings()
    with mock.patch.object(options, "cpus", lambda: CPU_COUNT):
        parser = cli._parser()
    _fixed_width(parser)
    commands = list(_commands(parser))
    lines = [
        "# Command-line reference",
        "",
        "<!-- Generated by scripts/cli_docs.py from explorer/cli/ and explorer/errors.py:",
        "     do not edit by hand; run `make docs`. -->",
        "",
        f"`{parser.prog} COMMAND …`: {parser.description} Each command below, with its "
        "`--help` as the program prints it and every argument's default. What the commands "
        "are for is in the guides: [exploring](exploring.md), [columns](columns.md), "
        "[retrieval](retrieval.md), [the persistent index](store.md), "
        "[the cluster](cluster.md).",
        "",
        "```text",
        parser.format_help().rstrip(),
        "```",
        "",
        "| command | what |",
        "|---|---|",
    ]
    lines += [
        f"| [`{' '.join(names)}`](#{_anchor(names)}) | {_cell(help_text)} |"
        for names, _, help_text in commands
    ]
    for names, sub, _ in commands:
        lines += ["", f"## {' '.join(names)}", "", "```text", sub.format_help().rstrip(), "```"]
        table = _arguments(sub)
        if table:
            lines += ["", *table]
    lines += [
        "",
        "## Exit codes and errors",
        "",
        "Exit codes: 0 success; 1 `validate` or `chunk-map --check` refused the file; 2 any "
        "other error. Errors are one line on standard error, `error: <code>: <detail>`, "
        "never a traceback:",
        "",
        "| code | meaning |",
        "|---|---|",
    ]
    for group, meaning in MEANINGS:
        lines.append(f"| {', '.join(f'`{code.value}`' for code in group)} | {meaning} |")
    lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write docs/cli.md from the parser.")
    parser.add_argument("--out", type=Path, default=CLI_MD)
    args = parser.parse_args(argv)
    args.out.write_text(generate(), encoding="utf-8")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
