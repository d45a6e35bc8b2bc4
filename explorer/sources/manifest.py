"""The manifest (docs/contract.md §2): which sources to load, their digests, and the span checks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath
from typing import Annotated, Any, NotRequired

from pydantic import AfterValidator, ConfigDict, Field, model_validator
from typing_extensions import TypedDict

from ..errors import ErrorCode, ExplorerError
from ..jsonio import parse_json, require_counts
from ..models import (
    Hex64,
    NoNullModel,
    PlainText,
    StrictModel,
    VersionOne,
    strict_shape,
    validated,
    without_nulls,
)

# A manifest names no more than this (the real corpus has 267 files, a check a few spans).
MAX_DOCUMENTS = 100_000
MAX_SPAN_CHECKS = 10_000
MAX_SPANS_PER_CHECK = 100


def normal_path(path: str) -> str:
    """One spelling per path: `a.md`, `./a.md` and `.//a.md` are all `a.md`. Whether it
    stays inside the manifest's folder is checked when it is read."""
    return PurePosixPath(path).as_posix() if path else path


DEFAULT_SCOPE = "default"


def scope_of(access_scope: str | None) -> str:
    """The tenant an entry belongs to: its `access_scope`, or `default`."""
    return access_scope or DEFAULT_SCOPE


@strict_shape
class ManifestDocument(TypedDict):
    """A document as the manifest lists it (docs/contract.md §2). A plain dict of the keys
    given, and only those: all of them enter the document's revision, so an optional key
    is left out, never null. `DocumentRecord` extends it with the loaded text."""

    source_id: PlainText
    version: PlainText
    path: Annotated[
        PlainText,
        AfterValidator(normal_path),
        Field(
            description="Relative to the manifest's folder, '/'-separated; './' and repeated "
            "'/' are dropped, so each file has one spelling."
        ),
    ]
    sha256: Annotated[Hex64, Field(description="SHA-256 of the file's raw bytes.")]
    title: NotRequired[PlainText]
    url: NotRequired[PlainText]
    fact_status: NotRequired[PlainText]
    access_scope: NotRequired[PlainText]


def span_schema(schema: dict[str, Any]) -> None:
    """A place in a document is a quote, or start and end: the schema says so too."""
    without_nulls(schema)
    schema["oneOf"] = [{"required": ["quote"]}, {"required": ["start", "end"]}]


def require_one_form(quote: str | None, start: int | None, end: int | None) -> None:
    """A place in a document is given one way: a quote, or both offsets."""
    offsets = (start is not None, end is not None)
    if quote is not None and any(offsets):
        raise ValueError("give either a quote or start and end, not both")
    if quote is None and not all(offsets):
        raise ValueError("give either a quote or both start and end")


class ManifestSpan(NoNullModel):
    """Either a quote that occurs exactly once, or `[start, end)` in characters."""

    model_config = ConfigDict(json_schema_extra=span_schema)

    label: PlainText
    start: int | None = None
    end: int | None = None
    quote: str | None = Field(default=None, min_length=1)

    @model_validator(mode="after")
    def _one_form(self) -> ManifestSpan:
        require_one_form(self.quote, self.start, self.end)
        return self


class SpanCheck(StrictModel):
    id: PlainText
    source_id: PlainText
    spans: list[ManifestSpan] = Field(min_length=1, max_length=MAX_SPANS_PER_CHECK)


class Deletion(NoNullModel):
    """A document to remove from a persistent index (`ingest`), in its tenant's scope."""

    source_id: PlainText
    access_scope: PlainText | None = None


class Manifest(StrictModel):
    manifest_version: VersionOne
    documents: list[ManifestDocument] = Field(min_length=1, max_length=MAX_DOCUMENTS)
    span_checks: list[SpanCheck] = Field(default_factory=list, max_length=MAX_SPAN_CHECKS)
    deleted: list[Deletion] = Field(
        default_factory=list, description="For `ingest`: documents to remove."
    )
    complete: bool = Field(
        default=False,
        description="For `ingest`: every document of these scopes that is not listed is deleted.",
    )

    @model_validator(mode="after")
    def _unique_and_linked(self) -> Manifest:
        seen: set[tuple[str, str]] = set()
        for document in self.documents:  # a source_id is unique within its access_scope
            key = (scope_of(document.get("access_scope")), document["source_id"])
            if key in seen:
                raise ValueError(f"duplicate source_id {key[1]!r} in access_scope {key[0]!r}")
            seen.add(key)
        _refuse_repeats("path", [d["path"] for d in self.documents])
        _refuse_repeats("span check id", [c.id for c in self.span_checks])
        listed = {(d["source_id"], scope_of(d.get("access_scope"))) for d in self.documents}
        for gone in self.deleted:
            if (gone.source_id, scope_of(gone.access_scope)) in listed:
                raise ValueError(f"{gone.source_id!r} is both listed and deleted")
        _refuse_repeats(
            "deleted source_id", [f"{scope_of(d.access_scope)}/{d.source_id}" for d in self.deleted]
        )
        scopes: dict[str, set[str]] = {}
        for d in self.documents:
            scopes.setdefault(d["source_id"], set()).add(scope_of(d.get("access_scope")))
        for check in self.span_checks:
            if check.source_id not in scopes:
                raise ValueError(
                    f"span check {check.id!r} names source_id {check.source_id!r}, "
                    "which no document has"
                )
            if len(scopes[check.source_id]) > 1:
                raise ValueError(
                    f"span check {check.id!r} names source_id {check.source_id!r}, "
                    "which more than one access_scope lists"
                )
        return self


def require_unique_source_ids(manifest: Manifest) -> None:
    """`compare`, `index` and `chunk-map` key one index by `source_id`: a source_id that
    two access_scopes list (which `ingest` allows) is refused there."""
    scopes: dict[str, str] = {}
    for document in manifest.documents:
        source_id, scope = document["source_id"], scope_of(document.get("access_scope"))
        if scopes.setdefault(source_id, scope) != scope:
            raise ExplorerError(
                ErrorCode.INVALID_MANIFEST,
                f"source_id {source_id!r} is listed in access_scopes "
                f"{scopes[source_id]!r} and {scope!r}; only ingest keys documents by "
                "access_scope, so give each its own source_id here",
            )


def _refuse_repeats(what: str, values: list[str]) -> None:
    seen: set[str] = set()
    for value in values:
        if value in seen:
            raise ValueError(f"duplicate {what} {value!r}")
        seen.add(value)


def with_span_checks(manifest: Manifest, checks: Sequence[Mapping[str, object]]) -> Manifest:
    """The manifest with `checks` (raw span checks, e.g. those added in the app) after its
    own; checked as a manifest file is (`invalid_manifest`)."""
    raw = manifest.model_dump(mode="json", exclude_unset=True)
    own = [check.model_dump(mode="json", exclude_none=True) for check in manifest.span_checks]
    raw["span_checks"] = [*own, *checks]
    return validated(Manifest.model_validate, raw, ErrorCode.INVALID_MANIFEST)


def parse_manifest(data: bytes) -> Manifest:
    """Bytes of a manifest file to a checked `Manifest`, or `invalid_manifest`."""
    most = 2 * MAX_DOCUMENTS + MAX_SPAN_CHECKS  # documents, deleted ones, span checks
    require_counts(
        data,
        ErrorCode.INVALID_MANIFEST,
        "manifest",
        most,
        lambda: ExplorerError(
            ErrorCode.INVALID_MANIFEST,
            f"the manifest holds more than {most:,} entries (at most {MAX_DOCUMENTS:,} "
            f"documents, as many deleted and {MAX_SPAN_CHECKS:,} span checks)",
        ),
        inner=True,
    )
    raw = parse_json(data, ErrorCode.INVALID_MANIFEST, "manifest")
    return validated(Manifest.model_validate, raw, ErrorCode.INVALID_MANIFEST)
