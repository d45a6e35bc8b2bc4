"""Retrievers: each scores every chunk of an index for every question; ranking (and
the tie-break by chunk order) is done once, by `top_k`."""

from __future__ import annotations

import importlib
import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

from ..errors import ErrorCode, ExplorerError

RRF_K = 60  # reciprocal rank fusion's constant, as its authors (Cormack et al.) chose
RETRIEVERS = ("bm25", "embedding", "hybrid")
RetrieverName = Literal["bm25", "embedding", "hybrid"]

# numpy is imported where scores are computed: only `evaluate` does, not every command.
if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    Matrix = NDArray[np.float64]


class Retriever(Protocol):
    """Scores every chunk for every question: a (questions, chunks) matrix, higher is
    better. Ranking (and the tie-break by chunk order) is done once, by `top_k`."""

    @property
    def name(self) -> str: ...

    def scores(self, chunks: Sequence[str], questions: Sequence[str]) -> Matrix: ...


BM25_K1, BM25_B = 1.5, 0.75


def bm25_terms(texts: Sequence[str]) -> list[list[str]]:
    """Each text's words as BM25 counts them (see `BM25`), in order."""
    bm25s = importlib.import_module("bm25s")
    logging.getLogger("bm25s").setLevel(logging.WARNING)
    stemmer = importlib.import_module("Stemmer").Stemmer("english")
    terms: list[list[str]] = bm25s.tokenize(
        list(texts), stopwords="en", stemmer=stemmer, return_ids=False, show_progress=False
    )
    return terms


@dataclass(frozen=True)
class ChunkTerms:
    """What BM25 needs of some chunks: each one's length in words and its counts of the
    words `asked` (those of the questions); nothing else of a chunk enters a score."""

    lengths: tuple[int, ...]
    counts: tuple[dict[str, int], ...]

    @classmethod
    def of(cls, chunks: Sequence[Sequence[str]], asked: frozenset[str]) -> ChunkTerms:
        counts = []
        for words in chunks:
            count: dict[str, int] = {}
            for word in words:
                if word in asked:
                    count[word] = count.get(word, 0) + 1
            counts.append(count)
        return cls(tuple(len(words) for words in chunks), tuple(counts))


@dataclass(frozen=True)
class CorpusTerms:
    """What BM25 needs of a whole index: its chunks, their words, and how many chunks
    hold each word asked. Sums over shards give the whole's."""

    chunks: int
    words: int
    holding: Mapping[str, int]

    @classmethod
    def of(cls, terms: ChunkTerms) -> CorpusTerms:
        holding: dict[str, int] = {}
        for count in terms.counts:
            for word in count:
                holding[word] = holding.get(word, 0) + 1
        return cls(len(terms.lengths), sum(terms.lengths), holding)

    def __add__(self, other: CorpusTerms) -> CorpusTerms:
        holding = dict(self.holding)
        for word, number in other.holding.items():
            holding[word] = holding.get(word, 0) + number
        return CorpusTerms(self.chunks + other.chunks, self.words + other.words, holding)


def bm25_scores(
    terms: ChunkTerms, questions: Sequence[Sequence[str]], corpus: CorpusTerms
) -> Matrix:
    """BM25 of some chunks of a corpus for each question's words, as `bm25s` computes it
    over the whole corpus, bit for bit: per word idf (float32) times the Lucene term
    factor (float64), rounded to float32, summed in float32 in the question's word order
    (words no chunk holds left out). So a shard's scores, given the whole's `corpus`,
    are exactly the scores the one process gives the same chunks."""
    import numpy as np

    count = len(terms.lengths)
    matrix = np.zeros((len(questions), count), dtype=np.float64)
    if not count or not corpus.chunks:
        return matrix
    average = np.float64(corpus.words) / corpus.chunks
    base = BM25_K1 * ((1 - BM25_B) + BM25_B * np.asarray(terms.lengths, dtype=np.int64) / average)
    where: dict[str, tuple[list[int], list[int]]] = {}
    for i, counts in enumerate(terms.counts):
        for word, n in counts.items():
            chunks, frequencies = where.setdefault(word, ([], []))
            chunks.append(i)
            frequencies.append(n)
    postings = {
        word: (np.asarray(at, dtype=np.int64), np.asarray(frequency, dtype=np.float32))
        for word, (at, frequency) in where.items()
    }
    idf = {
        word: np.float32(math.log(1 + (corpus.chunks - n + 0.5) / (n + 0.5)))
        for word, n in corpus.holding.items()
    }
    for row, words in enumerate(questions):
        total = np.zeros(count, dtype=np.float32)
        for word in words:
            if word in postings:
                at, frequency = postings[word]
                total[at] += (idf[word] * (frequency / (base[at] + frequency))).astype(np.float32)
        matrix[row] = total
    return matrix


class BM25:
    """BM25 as the `bm25s` package scores it (Lucene's variant, k1 = 1.5, b = 0.75),
    computed by `bm25_scores` so that shards of an index score as the whole does. Text
    is lower-cased, split into runs of two or more word characters, English stop words
    (bm25s's list) dropped, and each word reduced by the Snowball English stemmer
    (PyStemmer), for chunks and questions alike."""

    name = "bm25"

    def scores(self, chunks: Sequence[str], questions: Sequence[str]) -> Matrix:
        asked = bm25_terms(questions)
        terms = ChunkTerms.of(bm25_terms(chunks), frozenset(w for ws in asked for w in ws))
        return bm25_scores(terms, asked, CorpusTerms.of(terms))


class Embedding:
    """Cosine similarity of WordLlama vectors (256 dimensions, the weights and tokenizer
    its wheel ships, loaded from there: nothing is fetched), through the store's
    embedder (`explorer.embedding`)."""

    name = "embedding"

    def scores(self, chunks: Sequence[str], questions: Sequence[str]) -> Matrix:
        return cosines(embedded(questions), embedded(chunks))


def embedded(texts: Sequence[str]) -> NDArray[np.float32]:
    """Unit WordLlama vectors of `texts` (256 dimensions), one row each."""
    import numpy as np

    from .embedding import embed_texts, wordllama  # the model only when asked

    if not texts:
        return np.zeros((0, 256), dtype=np.float32)
    vectors: NDArray[np.float32] = embed_texts(wordllama(), list(texts))
    return vectors


def cosines(asked: NDArray[np.float32], vectors: NDArray[np.float32]) -> Matrix:
    """The (questions, chunks) cosine matrix of unit vectors, in float64."""
    import numpy as np

    product: Matrix = (asked.astype(np.float64) @ vectors.astype(np.float64).T).reshape(
        len(asked), len(vectors)
    )
    return product


def ranks(row: Matrix) -> NDArray[np.int64]:
    """Each chunk's 1-based rank in `row`, best first, ties by chunk order."""
    import numpy as np

    order = np.argsort(-row, kind="stable")
    rank = np.empty(len(row), dtype=np.int64)
    rank[order] = np.arange(1, len(row) + 1)
    return rank


@dataclass(frozen=True)
class Hybrid:
    """Reciprocal rank fusion of BM25's and the embedding's rankings of every chunk:
    Σ 1 / (60 + rank)."""

    parts: tuple[Retriever, ...] = (BM25(), Embedding())
    name: str = "hybrid"

    def scores(self, chunks: Sequence[str], questions: Sequence[str]) -> Matrix:
        import numpy as np

        fused = np.zeros((len(questions), len(chunks)))
        for part in self.parts:
            matrix = part.scores(chunks, questions)
            for i, row in enumerate(matrix):
                fused[i] += 1.0 / (RRF_K + ranks(row))
        return fused


def retriever(name: str) -> Retriever:
    if name == "bm25":
        return BM25()
    if name == "embedding":
        return Embedding()
    if name == "hybrid":
        return Hybrid()
    raise ExplorerError(
        ErrorCode.USAGE, f"unknown retriever {name!r}; known: {', '.join(RETRIEVERS)}"
    )


def top_k(row: Matrix, k: int) -> list[int]:
    """The positions of the k best scores, best first, ties by position (chunk order)."""
    import numpy as np

    return [int(i) for i in np.argsort(-row, kind="stable")[:k]]
