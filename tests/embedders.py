"""Embedders for tests, loaded the way a user's are: `--embedder tests.embedders:NAME`.

Deterministic (hashed bags of words), fast, and they share one name, so the vectors one
computes are the cache of the next: a failing run and its retry use "the same model".
`EMBEDDED` records every text embedded in this process, in order.
"""

from __future__ import annotations

import hashlib
import re

import numpy as np
from numpy.typing import NDArray

NAME = "test-hash/1"
DIMENSIONS = 32
EMBEDDED: list[str] = []


def _vector(text: str) -> NDArray[np.float32]:
    vector = np.zeros(DIMENSIONS, dtype=np.float32)
    for word in re.findall(r"\w+", text.casefold()):
        slot = int.from_bytes(hashlib.sha256(word.encode()).digest()[:4], "big")
        vector[slot % DIMENSIONS] += 1.0
    if not vector.any():  # no word (punctuation only): one fixed direction, as no real
        vector[-1] = 1.0  # embedder answers all zeros, which the store refuses
    return vector


class Counting:
    """Embeds one text per call (`batch_size` 1), so a failure lands between texts; with
    `fail_after`, the call after that many texts fails once (a passing outage)."""

    name = NAME
    dimensions = DIMENSIONS
    batch_size = 1

    def __init__(self, fail_after: int | None = None, shape_off: bool = False) -> None:
        self.fail_after = fail_after
        self.shape_off = shape_off
        self.calls = 0
        self.failed = False

    def embed(self, texts: list[str]) -> NDArray[np.float32]:
        if self.calls == self.fail_after and not self.failed:
            self.failed = True
            raise RuntimeError("the embedding service answered 429: quota exceeded")
        self.calls += len(texts)
        EMBEDDED.extend(texts)
        rows = np.stack([_vector(text) for text in texts])
        return rows[:, :-1] if self.shape_off else rows


def counting() -> Counting:
    return Counting()


def failing_after_2() -> Counting:
    return Counting(fail_after=2)


def wrong_shape() -> Counting:
    return Counting(shape_off=True)


def nameless() -> object:
    return object()


def broken_factory() -> Counting:
    raise ValueError("no API key configured")


class Batched(Counting):
    """`Counting`, many texts per call: the semantic policy's tests embed thousands."""

    batch_size = 256


def batched() -> Batched:
    return Batched()
