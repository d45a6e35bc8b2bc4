"""The registry of chunking policies: adding one is a module and a line here."""

from __future__ import annotations

from ..config import ChunkConfig
from ..errors import ErrorCode, ExplorerError
from ..models import validated
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
    if sized != (config.max_chars is not None):
        need = "an integer max_chars" if sized else "max_chars null"
        raise ExplorerError(ErrorCode.UNSUPPORTED_CHUNK_CONFIG, f"{policy.name} takes {need}")
    return config


def make_config(name: str, max_chars: int | None = None) -> ChunkConfig:
    """The config of a named policy, with its default size unless one is given."""
    policy = POLICIES.get(name)
    if policy is None:
        raise ExplorerError(
            ErrorCode.UNSUPPORTED_CHUNK_CONFIG,
            f"unknown policy {name!r}; known: {', '.join(POLICIES)}",
        )
    if max_chars is None:
        max_chars = policy.default_max_chars
    return parse_config({"strategy": name, "version": 1, "max_chars": max_chars})


__all__ = ["POLICIES", "Policy", "make_config", "parse_config", "policy_for"]
