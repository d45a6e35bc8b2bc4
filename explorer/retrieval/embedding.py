"""Vectors as the store and the vector cache keep them; embedders themselves are
`explorer.embedders` (re-exported here for the stages above)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..embedders import (
    DEFAULT_EMBEDDER,
    NO_EMBEDDER,
    Embedder,
    WordLlamaEmbedder,
    batch_size,
    checked,
    embed_texts,
    load_embedder,
    wordllama,
)

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    Vectors = NDArray[np.float32]

__all__ = [
    "DEFAULT_EMBEDDER",
    "NO_EMBEDDER",
    "Embedder",
    "Vectors",
    "WordLlamaEmbedder",
    "batch_size",
    "blob_bytes",
    "checked",
    "embed_texts",
    "from_blobs",
    "load_embedder",
    "to_blob",
    "wordllama",
]


def to_blob(vector: Vectors) -> bytes:
    import numpy as np

    return np.ascontiguousarray(vector, dtype="<f4").tobytes()


def from_blobs(blobs: list[bytes], dimensions: int) -> Vectors:
    import numpy as np

    if not blobs:
        return np.zeros((0, dimensions), dtype=np.float32)
    rows: Vectors = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), dimensions)
    return rows


def blob_bytes(dimensions: int) -> int:
    return dimensions * 4
