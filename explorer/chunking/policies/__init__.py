"""The registry of chunking policies: adding one is a module and a line here."""

from __future__ import annotations

from collections.abc import Mapping

from ...errors import ErrorCode, ExplorerError
from ...grammars import GRAMMARS
from ...limits import DEFAULT_LIMITS, Limits
from ...models import validated
from ..config import DEFAULT_GRAMMAR, ChunkConfig, ParameterValue
from ..tokens import TOKENIZER
from .base import DocumentPolicy, Policy
from .fixed_char import FixedChar
from .heading_aware import HeadingAware
from .libraries import LIBRARIES, LIBRARY_CALL_CODES, LibraryPolicy
from .paragraph import Paragraph

# In the order reports and the app show them: every comparison's columns by default.
POLICIES: dict[str, Policy] = {p.name: p for p in (FixedChar(), Paragraph(), HeadingAware())}
# Live columns: the chunking libraries people use (explorer/policies/external.py), chosen
# by name beside ours.
LIBRARY_POLICIES: dict[str, LibraryPolicy] = {p.name: p for p in LIBRARIES}
# An imported chunk file's column (explorer/imports.py): its chunks come from the file.
CHUNK_FILE_STRATEGY = "chunk-file"


def _known() -> str:
    return ", ".join([*POLICIES, *LIBRARY_POLICIES])


def policy_for(config: ChunkConfig) -> Policy | DocumentPolicy:
    if config.strategy == CHUNK_FILE_STRATEGY:
        raise ExplorerError(
            ErrorCode.UNSUPPORTED_CHUNK_CONFIG,
            "an imported column's chunks come from its chunk file, not from its config",
        )
    return LIBRARY_POLICIES.get(config.strategy) or POLICIES[config.strategy]


def require_stoppable(config: ChunkConfig, limits: Limits = DEFAULT_LIMITS) -> None:
    """Refuse a live column whose parameters would run a regular expression where no
    deadline can stop it (`LibraryPolicy.require_stoppable`); any other column passes."""
    library = LIBRARY_POLICIES.get(config.strategy)
    if library is not None:
        library.require_stoppable(config, limits)


def _check_chunk_file(config: ChunkConfig) -> None:
    if config.chunk_file is None or config.library is not None or config.sized:
        raise ExplorerError(
            ErrorCode.UNSUPPORTED_CHUNK_CONFIG,
            f"{CHUNK_FILE_STRATEGY} takes chunk_file, max_chars null and no library",
        )


def parse_config(raw: object) -> ChunkConfig:
    """Any value to a supported config, or `unsupported_chunk_config`."""
    config = validated(ChunkConfig.model_validate, raw, ErrorCode.UNSUPPORTED_CHUNK_CONFIG)
    if config.strategy == CHUNK_FILE_STRATEGY:
        _check_chunk_file(config)
        return config
    if config.chunk_file is not None:
        raise ExplorerError(
            ErrorCode.UNSUPPORTED_CHUNK_CONFIG, f"only {CHUNK_FILE_STRATEGY} takes chunk_file"
        )
    library = LIBRARY_POLICIES.get(config.strategy)
    if library is not None:
        library.check(config)
    elif config.library is not None:
        raise ExplorerError(
            ErrorCode.UNSUPPORTED_CHUNK_CONFIG, f"{config.strategy} calls no library"
        )
    policy = library or POLICIES.get(config.strategy)
    if policy is None:
        raise ExplorerError(
            ErrorCode.UNSUPPORTED_CHUNK_CONFIG,
            f"unknown strategy {config.strategy!r}; known: {_known()}",
        )
    sized = policy.default_max_chars is not None
    if sized != config.sized:
        need = "an integer max_chars or max_tokens" if sized else "max_chars null"
        raise ExplorerError(ErrorCode.UNSUPPORTED_CHUNK_CONFIG, f"{policy.name} takes {need}")
    return config


def make_config(
    name: str,
    max_chars: int | None = None,
    *,
    max_tokens: int | None = None,
    overlap: int = 0,
    grammar: str = DEFAULT_GRAMMAR,
    parameters: Mapping[str, ParameterValue] | None = None,
) -> ChunkConfig:
    """The config of a named policy, spelled as it enters ids: the size in tokens when
    `max_tokens` is given, else in characters (the policy's default unless given); the
    defaults (`overlap` 0, grammar v1) left out. A library's policy records the
    installed version and every parameter, `parameters` over the library's defaults."""
    library = LIBRARY_POLICIES.get(name)
    policy = library or POLICIES.get(name)
    if policy is None:
        raise ExplorerError(
            ErrorCode.UNSUPPORTED_CHUNK_CONFIG, f"unknown policy {name!r}; known: {_known()}"
        )
    if parameters and library is None:
        raise ExplorerError(ErrorCode.UNSUPPORTED_CHUNK_CONFIG, f"{name} takes no parameters")
    if grammar not in GRAMMARS:
        raise ExplorerError(
            ErrorCode.UNSUPPORTED_CHUNK_CONFIG,
            f"unknown grammar {grammar!r}; known: {', '.join(GRAMMARS)}",
        )
    raw: dict[str, object] = {"strategy": name, "version": 1}
    if grammar != DEFAULT_GRAMMAR:
        raw["grammar"] = grammar
    if max_tokens is not None:
        if max_chars is not None:
            raise ExplorerError(
                ErrorCode.UNSUPPORTED_CHUNK_CONFIG, "a size in characters or in tokens, not both"
            )
        raw.update(unit="tokens", tokenizer=TOKENIZER, max_tokens=max_tokens)
    else:
        raw["max_chars"] = policy.default_max_chars if max_chars is None else max_chars
    if overlap:
        raw["overlap"] = overlap
    if library is not None:
        raw["library"] = library.library(dict(parameters or {}))
    return parse_config(raw)


__all__ = [
    "CHUNK_FILE_STRATEGY",
    "LIBRARY_CALL_CODES",
    "LIBRARY_POLICIES",
    "POLICIES",
    "DocumentPolicy",
    "LibraryPolicy",
    "Policy",
    "make_config",
    "parse_config",
    "policy_for",
    "require_stoppable",
]
