"""The registry of chunking policies: adding one is a module and a line here."""

from __future__ import annotations

from collections.abc import Mapping

from ...embedders import Embedder, wordllama
from ...errors import ErrorCode, ExplorerError
from ...grammars import GRAMMARS
from ...limits import DEFAULT_LIMITS, Limits
from ...models import validated
from ..config import (
    DEFAULT_GRAMMAR,
    DEFAULT_PERCENTILE,
    DEFAULT_WINDOW,
    MAX_WINDOW,
    ChunkConfig,
    ParameterValue,
)
from ..tokens import TOKENIZER
from .base import DocumentPolicy, Policy
from .fixed_char import FixedChar
from .heading_aware import HeadingAware
from .libraries import LIBRARIES, LIBRARY_CALL_CODES, LibraryPolicy
from .paragraph import Paragraph
from .semantic import SemanticPolicy

# In the order reports and the app show them: every comparison's columns by default.
POLICIES: dict[str, Policy] = {p.name: p for p in (FixedChar(), Paragraph(), HeadingAware())}
# Live columns: the chunking libraries people use (explorer/policies/external.py), chosen
# by name beside ours.
LIBRARY_POLICIES: dict[str, LibraryPolicy] = {p.name: p for p in LIBRARIES}
# The semantic policy (docs/contract.md §5d): chosen by name, never a default column (it
# embeds).
SEMANTIC = SemanticPolicy()
# Every policy of ours a column may have, semantic last.
OWN_POLICIES: dict[str, Policy | SemanticPolicy] = {**POLICIES, SEMANTIC.name: SEMANTIC}
# An imported chunk file's column (explorer/imports.py): its chunks come from the file.
CHUNK_FILE_STRATEGY = "chunk-file"
# Every name a column may be chosen by, in the order help and the app list them.
CHOOSABLE = [*POLICIES, SEMANTIC.name, *LIBRARY_POLICIES]


def _known() -> str:
    return ", ".join(CHOOSABLE)


def policy_for(config: ChunkConfig) -> Policy | DocumentPolicy | SemanticPolicy:
    if config.strategy == CHUNK_FILE_STRATEGY:
        raise ExplorerError(
            ErrorCode.UNSUPPORTED_CHUNK_CONFIG,
            "an imported column's chunks come from its chunk file, not from its config",
        )
    if config.strategy == SEMANTIC.name:
        return SEMANTIC
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
    _check_semantic(config)
    policy = library or POLICIES.get(config.strategy) or _semantic(config.strategy)
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


def _semantic(name: str) -> SemanticPolicy | None:
    return SEMANTIC if name == SEMANTIC.name else None


def _check_semantic(config: ChunkConfig) -> None:
    """`semantic` takes its curve's settings and no overlap; no other policy takes them."""
    if config.strategy != SEMANTIC.name:
        if config.semantic is not None:
            raise ExplorerError(
                ErrorCode.UNSUPPORTED_CHUNK_CONFIG, f"only {SEMANTIC.name} takes 'semantic'"
            )
        return
    if config.semantic is None:
        raise ExplorerError(
            ErrorCode.UNSUPPORTED_CHUNK_CONFIG,
            f"{SEMANTIC.name} needs 'semantic': its breakpoint_percentile, window and embedder",
        )
    if config.overlap is not None:
        raise ExplorerError(
            ErrorCode.UNSUPPORTED_CHUNK_CONFIG,
            f"{SEMANTIC.name} takes no overlap: its chunks are cut where the curve dips, "
            "and a repeated tail would be cut twice",
        )


def semantic_settings(
    breakpoint_percentile: int | None, window: int | None, embedder: Embedder | None
) -> dict[str, object]:
    """The `semantic` of a config: the percentile (a whole number from 0 to 100), the
    window (1 to `MAX_WINDOW` sentences) and the embedder's name and dimensions
    (WordLlama by default), each checked with a sentence of its own."""
    percentile = DEFAULT_PERCENTILE if breakpoint_percentile is None else breakpoint_percentile
    if type(percentile) is not int or not 0 <= percentile <= 100:
        raise ExplorerError(
            ErrorCode.UNSUPPORTED_CHUNK_CONFIG,
            f"the breakpoint percentile is a whole number from 0 to 100, not {percentile!r}",
        )
    width = DEFAULT_WINDOW if window is None else window
    if type(width) is not int or not 1 <= width <= MAX_WINDOW:
        raise ExplorerError(
            ErrorCode.UNSUPPORTED_CHUNK_CONFIG,
            f"the window is a whole number of sentences from 1 to {MAX_WINDOW}, not {width!r}",
        )
    made = embedder if embedder is not None else wordllama()
    return {
        "breakpoint_percentile": percentile,
        "window": width,
        "embedder": {"name": made.name, "dimensions": made.dimensions},
    }


def make_config(
    name: str,
    max_chars: int | None = None,
    *,
    max_tokens: int | None = None,
    overlap: int = 0,
    grammar: str = DEFAULT_GRAMMAR,
    parameters: Mapping[str, ParameterValue] | None = None,
    breakpoint_percentile: int | None = None,
    window: int | None = None,
    embedder: Embedder | None = None,
) -> ChunkConfig:
    """The config of a named policy, spelled as it enters ids: the size in tokens when
    `max_tokens` is given, else in characters (the policy's default unless given); the
    defaults (`overlap` 0, grammar v1) left out. A library's policy records the
    installed version and every parameter, `parameters` over the library's defaults.
    `semantic` records its percentile, window and embedder (`semantic_settings`)."""
    library = LIBRARY_POLICIES.get(name)
    policy = library or POLICIES.get(name) or _semantic(name)
    if policy is None:
        raise ExplorerError(
            ErrorCode.UNSUPPORTED_CHUNK_CONFIG, f"unknown policy {name!r}; known: {_known()}"
        )
    if parameters and library is None:
        raise ExplorerError(ErrorCode.UNSUPPORTED_CHUNK_CONFIG, f"{name} takes no parameters")
    curve = (breakpoint_percentile, window, embedder)
    if name != SEMANTIC.name and any(value is not None for value in curve):
        raise ExplorerError(
            ErrorCode.UNSUPPORTED_CHUNK_CONFIG,
            f"only {SEMANTIC.name} takes a breakpoint percentile, a window or an embedder",
        )
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
    if name == SEMANTIC.name:
        raw["semantic"] = semantic_settings(*curve)
    return parse_config(raw)


def resized(config: ChunkConfig, size: int, tokens: bool = False) -> ChunkConfig:
    """`config` at another size (in cl100k_base tokens when `tokens`), all else kept."""
    raw: dict[str, object] = {
        key: value
        for key, value in config.as_json().items()
        if key not in ("max_chars", "unit", "tokenizer", "max_tokens")
    }
    if tokens:
        raw.update(unit="tokens", tokenizer=TOKENIZER, max_tokens=size)
    else:
        raw["max_chars"] = size
    return parse_config(raw)


__all__ = [
    "CHOOSABLE",
    "CHUNK_FILE_STRATEGY",
    "LIBRARY_CALL_CODES",
    "LIBRARY_POLICIES",
    "OWN_POLICIES",
    "POLICIES",
    "SEMANTIC",
    "DocumentPolicy",
    "LibraryPolicy",
    "Policy",
    "make_config",
    "parse_config",
    "policy_for",
    "require_stoppable",
    "resized",
    "semantic_settings",
]
