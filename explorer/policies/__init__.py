"""The registry of chunking policies: adding one is a module and a line here."""

from __future__ import annotations

from ..config import DEFAULT_GRAMMAR, ChunkConfig
from ..errors import ErrorCode, ExplorerError
from ..grammars import GRAMMARS
from ..models import validated
from ..tokens import TOKENIZER
from .base import Policy
from .fixed_char import FixedChar
from .heading_aware import HeadingAware
from .paragraph import Paragraph

# In the order reports and the app show them.
POLICIES: dict[str, Policy] = {p.name: p for p in (FixedChar(), Paragraph(), HeadingAware())}


def policy_for(config: ChunkConfig) -> Policy:
    return POLICIES[config.strategy]


def parse_config(raw: object) -> ChunkConfig:
    """Any value to a supported config, or `unsupported_chunk_config`."""
    config = validated(ChunkConfig.model_validate, raw, ErrorCode.UNSUPPORTED_CHUNK_CONFIG)
    policy = POLICIES.get(config.strategy)
    if policy is None:
        raise ExplorerError(
            ErrorCode.UNSUPPORTED_CHUNK_CONFIG,
            f"unknown strategy {config.strategy!r}; known: {', '.join(POLICIES)}",
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
) -> ChunkConfig:
    """The config of a named policy, spelled as it enters ids: the size in tokens when
    `max_tokens` is given, else in characters (the policy's default unless given); the
    defaults (`overlap` 0, grammar v1) left out."""
    policy = POLICIES.get(name)
    if policy is None:
        raise ExplorerError(
            ErrorCode.UNSUPPORTED_CHUNK_CONFIG,
            f"unknown policy {name!r}; known: {', '.join(POLICIES)}",
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
    return parse_config(raw)


__all__ = ["POLICIES", "Policy", "make_config", "parse_config", "policy_for"]
