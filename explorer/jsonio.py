"""Strict JSON in, stable JSON out: duplicate keys, NaN and non-UTF-8 are refused."""

from __future__ import annotations

import json
from typing import Any

from .errors import ErrorCode, ExplorerError


class _Refused(ValueError):
    pass


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _Refused(f"duplicate key {key!r}")
        result[key] = value
    return result


def _no_constants(name: str) -> Any:
    raise _Refused(f"{name} is not JSON")


def parse_json(data: bytes, code: ErrorCode, what: str) -> Any:
    """Decode strict UTF-8 and parse exactly one JSON value, or refuse with `code`."""
    if not data.strip():
        raise ExplorerError(code, f"the {what} is empty, not JSON")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ExplorerError(code, f"the {what} is not UTF-8 (byte {error.start})") from None
    try:
        return json.loads(text, object_pairs_hook=_no_duplicate_keys, parse_constant=_no_constants)
    except _Refused as error:
        raise ExplorerError(code, f"the {what} is not strict JSON: {error}") from None
    except json.JSONDecodeError as error:
        reason = "content after the JSON value" if error.msg == "Extra data" else error.msg
        raise ExplorerError(
            code, f"the {what} is not JSON: {reason} at line {error.lineno} column {error.colno}"
        ) from None
    except RecursionError:
        raise ExplorerError(code, f"the {what} is nested too deeply") from None


def dump_json(value: Any) -> str:
    """Readable, deterministic output for files and downloads (non-ASCII kept as is)."""
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"
