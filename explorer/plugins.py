"""Your own code plugged in by name: `package.module:factory`, imported and called
without arguments (an embedder for the store and `evaluate`, a question generator for
`questions draft`). Refused with the caller's code and a sentence, never a traceback."""

from __future__ import annotations

import importlib
import re

from .errors import ErrorCode, ExplorerError

_SPEC = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")


def load_plugin(spec: str, code: ErrorCode, option: str, builtin: str = "") -> object:
    """What `factory()` of `package.module:factory` returns. `option` and `builtin` name
    the command-line option and the names it also takes, for the refusal's sentence."""
    if not _SPEC.match(spec):
        also = f"{builtin} or " if builtin else ""
        raise ExplorerError(
            code, f"{option} takes {also}'package.module:factory', not {spec[:200]!r}"
        )
    module_name, factory_name = spec.split(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ExplorerError(code, f"cannot import {module_name!r}: {error}") from None
    factory = getattr(module, factory_name, None)
    if not callable(factory):
        raise ExplorerError(code, f"{module_name!r} has no callable {factory_name!r}")
    try:
        made: object = factory()
    except Exception as error:  # a user's code: any failure is theirs, named
        raise ExplorerError(code, f"{spec} raised {type(error).__name__}: {error}") from None
    return made
