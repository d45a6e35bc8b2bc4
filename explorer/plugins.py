"""Your own code plugged in by name: `package.module:factory`, imported and called
without arguments (an embedder for the store and `evaluate`, a question generator for
`questions draft`). Refused with the caller's code and a sentence, never a traceback;
an interrupt (Ctrl-C, or a factory raising KeyboardInterrupt) goes on up, with a
sentence, to end the command (`explorer.__main__`: exit 130)."""

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
    except KeyboardInterrupt:
        raise KeyboardInterrupt(f"importing {module_name!r} was interrupted") from None
    except BaseException as error:  # a user's module: a syntax error, an exit, any raise
        raise ExplorerError(code, f"cannot import {module_name!r}: {_named(error)}") from None
    factory = getattr(module, factory_name, None)
    if not callable(factory):
        raise ExplorerError(code, f"{module_name!r} has no callable {factory_name!r}")
    try:
        made: object = factory()
    except KeyboardInterrupt:
        raise KeyboardInterrupt(f"{spec} raised KeyboardInterrupt") from None
    except BaseException as error:  # a user's code, even exit(3): any failure is theirs, named
        raise ExplorerError(code, f"{spec} raised {_named(error)}") from None
    return made


def _named(error: BaseException) -> str:
    """The exception's type and message on one line (a SyntaxError's spans several)."""
    return " ".join(f"{type(error).__name__}: {error}".split())
