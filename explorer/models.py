"""Shared building blocks of the pydantic models at the core's edges."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
    with_config,
)

from .errors import ErrorCode, ExplorerError

T = TypeVar("T")

_HEX64 = re.compile(r"[0-9a-f]{64}")
# What a `PlainText` never holds.
CONTROL_CHARACTERS = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _hex64(value: str) -> str:
    if not _HEX64.fullmatch(value):
        raise ValueError("must be 64 lower-case hex digits")
    return value


def no_control(value: str) -> str:
    if CONTROL_CHARACTERS.search(value):
        raise ValueError("must not contain control characters")
    return value


def _plain_text(value: str) -> str:
    if not value:
        raise ValueError("must be a non-empty string")
    return no_control(value)


Hex64 = Annotated[
    str, AfterValidator(_hex64), Field(json_schema_extra={"pattern": "^[0-9a-f]{64}$"})
]
PlainText = Annotated[str, AfterValidator(_plain_text), Field(min_length=1)]
# `Literal[1]` would accept true and 1.0; a strict int bounded to 1 accepts only 1.
VersionOne = Annotated[int, Field(ge=1, le=1)]
NonEmpty = Annotated[str, Field(min_length=1)]
Count = Annotated[int, Field(ge=0)]
LineNumber = Annotated[int, Field(ge=1)]

# The config of a TypedDict that is also a wire shape: the same rules as `StrictModel`'s,
# while the values stay plain dicts, which the hot path builds and reads at no cost. A
# `NotRequired` key may be left out but, being a strict str, never given as null.
# `defer_build`: a shape's validator is built when first used, not when the module is
# imported, so a command pays only for the shapes it checks.
strict_shape = with_config(ConfigDict(extra="forbid", strict=True, defer_build=True))


class StrictModel(BaseModel):
    """No unknown keys, no coercion ("1" is not 1, true is not 1), immutable."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, defer_build=True)


def without_nulls(schema: dict[str, Any]) -> None:
    """Optional keys of a `NoNullModel` may be absent, never null: say so in its schema."""
    for prop in schema.get("properties", {}).values():
        options = prop.pop("anyOf", None)
        if options is not None:
            prop.update(next(o for o in options if o.get("type") != "null"))
            prop.pop("default", None)


class NoNullModel(StrictModel):
    """Optional keys may be left out, but never given as null."""

    model_config = ConfigDict(json_schema_extra=without_nulls)

    @model_validator(mode="before")
    @classmethod
    def _refuse_null(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for key, value in data.items():
                if value is None and key in cls.model_fields:
                    raise ValueError(f"{key!r} must be a non-empty string, not null")
        return data


_FRIENDLY = {
    "extra_forbidden": "unknown key",
    "missing": "required key is missing",
}


def _location(loc: tuple[int | str, ...]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def describe(error: ValidationError, limit: int = 3, at: tuple[int | str, ...] = ()) -> str:
    """A readable sentence for the first few problems pydantic found (in the value found
    at `at`, when it was validated on its own)."""
    problems = error.errors()
    parts = []
    for problem in problems[:limit]:
        message = _FRIENDLY.get(problem["type"], problem["msg"]).removeprefix("Value error, ")
        if problem["input"] is None and problem["type"] == "string_type":
            message = "must be a non-empty string, not null"
        where = _location((*at, *problem["loc"]))
        parts.append(f"{where}: {message}" if where else message)
    more = len(problems) - limit
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


def validated(
    validate: Callable[[Any], T], raw: object, code: ErrorCode, at: tuple[int | str, ...] = ()
) -> T:
    """`validate(raw)` (a model's `model_validate`, an adapter's `validate_python`), with
    pydantic's `ValidationError` turned into the core's one exception, under `code`."""
    try:
        return validate(raw)
    except ValidationError as error:
        raise ExplorerError(code, describe(error, at=at)) from None
