"""What a person adds to a set of documents in the app (span checks, questions) outlives
the set: when files are added or removed, each item is carried to the new set while its
document is still there, under the same `source_id` with the same bytes (SHA-256).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import TypeVar

from .manifest import ManifestDocument

# A document's identity across sets: its source_id and the SHA-256s listed for it (one,
# unless several access_scopes list it).
Digests = Mapping[str, frozenset[str]]
Item = TypeVar("Item", bound=Mapping[str, object])


def document_digests(documents: Iterable[ManifestDocument]) -> dict[str, frozenset[str]]:
    """Each source_id's SHA-256s, as the manifest pins them."""
    found: dict[str, set[str]] = {}
    for document in documents:
        found.setdefault(document["source_id"], set()).add(document["sha256"])
    return {source_id: frozenset(digests) for source_id, digests in found.items()}


def carried(
    items: Sequence[Item], before: Digests, after: Digests, taken: Collection[str] = ()
) -> list[Item]:
    """The items (each with a `source_id` and an `id`) whose document is in `after` with
    the bytes it had in `before`; one whose `id` the new set already uses (`taken`: e.g.
    the same check, now in the manifest a person downloaded and uploaded again) is left
    out."""
    return [
        item
        for item in items
        if (digests := before.get(str(item["source_id"]))) is not None
        and after.get(str(item["source_id"])) == digests
        and item["id"] not in taken
    ]
