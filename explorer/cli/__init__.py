"""`python -m explorer compare | index | validate` (docs/contract.md §8).

Exit 0 on success, 1 when `validate` refuses, 2 for any other error, always with
`error: <code>: <detail>` on standard error and never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import TextIO

from ..errors import ErrorCode, ExplorerError
from .chunking import (
    _chunk_maps,
    _compare,
    _curve,
    _export,
    _index,
    _validate,
    add_chunk_map,
    add_compare,
    add_curve,
    add_export,
    add_index,
    add_validate,
)
from .manifest import _manifest, add_manifest
from .options import _Parser
from .retrieval import _diff, _evaluate, _questions, add_diff, add_evaluate, add_questions
from .store import (
    _documents,
    _history,
    _ingest,
    _search,
    add_documents,
    add_history,
    add_ingest,
    add_search,
)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m explorer", description="Compare chunking policies.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    # In the order --help lists them.
    add_compare(commands)
    add_index(commands)
    add_manifest(commands)
    add_validate(commands)
    add_ingest(commands)
    add_search(commands)
    add_documents(commands)
    add_history(commands)
    add_evaluate(commands)
    add_questions(commands)
    add_diff(commands)
    add_export(commands)
    add_chunk_map(commands)
    add_curve(commands)
    return parser


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
