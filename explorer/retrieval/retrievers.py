"""Retrievers: each ranks every chunk of an index for every question, a block of
questions at a time (`best_chunks`); ranking by score (and the tie-break by chunk
order) is done once, by `top_k`, fusing rankings once, by `fused`."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol, TypeVar

from ..errors import ErrorCode, ExplorerError
from ..limits import Limits
from .terms import bm25_terms

RETRIEVERS = ("bm25", "embedding", "hybrid")
RetrieverName = Literal["bm25", "embedding", "hybrid"]

# numpy is imported where scores are computed: only `evaluate` does, not every command.
if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    Matrix = NDArray[np.float64]

Best = list[tuple[int, float]]  # a question's best chunks: (position, score), best first


class Ranking(Protocol):
    """A retriever's view of one index's chunks and a set of questions."""

    def best(self, first: int, stop: int, k: int) -> list[Best]:
        """For questions `first` to `stop` (excluded), each one's k best chunks, ties
        broken by chunk order."""
        ...


class ChunkIndex(Protocol):
    """What a retriever keeps of an index's chunks to rank any questions against them
    later (the app keeps one per column and ranks only a question just added)."""

    def ranking(self, questions: Sequence[str]) -> Ranking: ...


class Retriever(Protocol):
    """Ranks every chunk of an index for every question."""

    @property
    def name(self) -> str: ...

    def ranking(self, chunks: Sequence[str], questions: Sequence[str]) -> Ranking: ...

    def index(self, chunks: Sequence[str]) -> ChunkIndex: ...


class Scored(Protocol):
    """A ranking by a score per chunk: a block of questions' scores at a time, higher is
    better, and each question's ranked list of the chunks it matches."""

    def scores(self, first: int, stop: int) -> Matrix: ...

    def matches(self, row: Matrix, depth: int) -> list[int]: ...


def best_of(row: Matrix, k: int) -> Best:
    return [(i, float(row[i])) for i in top_k(row, k)]


def by_score(scored: Scored, first: int, stop: int, k: int) -> list[Best]:
    return [best_of(row, k) for row in scored.scores(first, stop)]


def best_chunks(
    ranking: Ranking, questions: int, chunks: int, k: int, limits: Limits
) -> Iterator[Best]:
    """Every question's k best chunks, in question order, ranked a block of questions at
    a time: at most `limits.scores_held` scores (questions times chunks) are held at once,
    so memory grows with the chunks and the questions, never with their product."""
    step = max(1, limits.scores_held // max(chunks, 1))
    for first in range(0, questions, step):
        yield from ranking.best(first, min(first + step, questions), k)


BM25_K1, BM25_B = 1.5, 0.75


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


Postings = Mapping[str, tuple["NDArray[np.int64]", "NDArray[np.float32]"]]


def postings_of(terms: ChunkTerms) -> Postings:
    """Each word's chunks (by position) and its count in each."""
    import numpy as np

    where: dict[str, tuple[list[int], list[int]]] = {}
    for i, counts in enumerate(terms.counts):
        for word, n in counts.items():
            chunks, frequencies = where.setdefault(word, ([], []))
            chunks.append(i)
            frequencies.append(n)
    return {
        word: (np.asarray(at, dtype=np.int64), np.asarray(frequency, dtype=np.float32))
        for word, (at, frequency) in where.items()
    }


def bm25_scores(
    terms: ChunkTerms,
    questions: Sequence[Sequence[str]],
    corpus: CorpusTerms,
    postings: Postings | None = None,
) -> Matrix:
    """BM25 of some chunks of a corpus for each question's words, as `bm25s` computes it
    over the whole corpus, bit for bit: per word idf (float32) times the Lucene term
    factor (float64), rounded to float32, summed in float32 in the question's word order
    (words no chunk holds left out). So a shard's scores, given the whole's `corpus`,
    are exactly the scores the one process gives the same chunks. `postings` are those
    of `terms`, when already computed."""
    import numpy as np

    count = len(terms.lengths)
    matrix = np.zeros((len(questions), count), dtype=np.float64)
    if not count or not corpus.chunks:
        return matrix
    average = np.float64(corpus.words) / corpus.chunks
    base = BM25_K1 * ((1 - BM25_B) + BM25_B * np.asarray(terms.lengths, dtype=np.int64) / average)
    if postings is None:
        postings = postings_of(terms)
    asked = {word for words in questions for word in words}
    idf = {
        word: np.float32(math.log(1 + (corpus.chunks - n + 0.5) / (n + 0.5)))
        for word, n in corpus.holding.items()
        if word in asked
    }
    for row, words in enumerate(questions):
        total = np.zeros(count, dtype=np.float32)
        for word in words:
            if word in postings:
                at, frequency = postings[word]
                total[at] += (idf[word] * (frequency / (base[at] + frequency))).astype(np.float32)
        matrix[row] = total
    return matrix


@dataclass(frozen=True)
class BM25Scores:
    """BM25 of an index's chunks (`terms`, `corpus`) for each question's words."""

    terms: ChunkTerms
    asked: Sequence[Sequence[str]]
    corpus: CorpusTerms
    postings: Postings | None = None

    def scores(self, first: int, stop: int) -> Matrix:
        return bm25_scores(self.terms, self.asked[first:stop], self.corpus, self.postings)

    def matches(self, row: Matrix, depth: int) -> list[int]:
        """The chunks that hold a word of the question (a score above 0), best first."""
        return [i for i in top_k(row, depth) if row[i] > 0]

    def best(self, first: int, stop: int, k: int) -> list[Best]:
        return by_score(self, first, stop, k)


class BM25:
    """BM25 as the `bm25s` package scores it (Lucene's variant, k1 = 1.5, b = 0.75),
    computed by `bm25_scores` so that shards of an index score as the whole does. Text
    is lower-cased, split into runs of two or more word characters, English stop words
    (scikit-learn's list, `stopwords`) dropped, and each word reduced by the Snowball
    English stemmer (PyStemmer), for chunks and questions alike."""

    name = "bm25"

    def ranking(self, chunks: Sequence[str], questions: Sequence[str]) -> BM25Scores:
        asked = bm25_terms(questions)
        terms = ChunkTerms.of(bm25_terms(chunks), frozenset(w for ws in asked for w in ws))
        return BM25Scores(terms, asked, CorpusTerms.of(terms))

    def index(self, chunks: Sequence[str]) -> BM25Index:
        return BM25Index.of(bm25_terms(chunks))


@dataclass(frozen=True)
class BM25Index:
    """Every word of an index's chunks counted once: a question is then scored from its
    own words' postings alone, exactly as `BM25.ranking` scores it."""

    terms: ChunkTerms
    corpus: CorpusTerms
    postings: Postings

    @classmethod
    def of(cls, words: Sequence[Sequence[str]]) -> BM25Index:
        """From each chunk's words (`bm25_terms`, however they were kept)."""
        terms = ChunkTerms.of(words, frozenset(w for ws in words for w in ws))
        return cls(terms, CorpusTerms.of(terms), postings_of(terms))

    def ranking(self, questions: Sequence[str]) -> BM25Scores:
        return BM25Scores(self.terms, bm25_terms(questions), self.corpus, self.postings)


Embed = Callable[[Sequence[str]], "NDArray[np.float32]"]  # unit vectors, one row per text


def embedded(texts: Sequence[str]) -> NDArray[np.float32]:
    """Unit WordLlama vectors of `texts` (256 dimensions), one row each, not cached."""
    import numpy as np

    from .embedding import embed_texts, wordllama  # the model only when asked

    if not texts:
        return np.zeros((0, 256), dtype=np.float32)
    vectors: NDArray[np.float32] = embed_texts(wordllama(), list(texts))
    return vectors


def cosines(asked: NDArray[np.float32], vectors: NDArray[np.float32]) -> Matrix:
    """The (questions, chunks) cosine matrix of unit vectors, in float64. Each cosine is
    summed in the same order whatever the block's shape (einsum's own loop; a BLAS
    product's rounding depends on the matrix sizes), so a block of questions, or a shard's
    chunks on Ray, scores exactly as the whole does."""
    import numpy as np

    product: Matrix = np.einsum(
        "ij,kj->ik", asked.astype(np.float64), vectors.astype(np.float64)
    ).reshape(len(asked), len(vectors))
    return product


@dataclass(frozen=True)
class Cosines:
    """Cosines of the questions' vectors (`asked`) and the chunks' (`vectors`)."""

    asked: NDArray[np.float32]
    vectors: NDArray[np.float32]

    def scores(self, first: int, stop: int) -> Matrix:
        return cosines(self.asked[first:stop], self.vectors)

    def matches(self, row: Matrix, depth: int) -> list[int]:
        """Every chunk has a cosine: the nearest first."""
        return top_k(row, depth)

    def best(self, first: int, stop: int, k: int) -> list[Best]:
        return by_score(self, first, stop, k)


@dataclass(frozen=True)
class Embedding:
    """Cosine similarity of an embedder's unit vectors: by default WordLlama's (256
    dimensions, the weights and tokenizer its wheel ships, loaded from there: nothing is
    fetched), else those `embed` gives (`evaluate --embedder`, through the vector
    cache)."""

    embed: Embed = embedded
    name: str = "embedding"

    def ranking(self, chunks: Sequence[str], questions: Sequence[str]) -> Cosines:
        return Cosines(self.embed(questions), self.embed(chunks))

    def index(self, chunks: Sequence[str]) -> EmbeddedChunks:
        return EmbeddedChunks(self.embed, self.embed(chunks))


@dataclass(frozen=True)
class EmbeddedChunks:
    """An index's chunks embedded once; each question embedded when ranked."""

    embed: Embed
    vectors: NDArray[np.float32]

    def ranking(self, questions: Sequence[str]) -> Cosines:
        return Cosines(self.embed(questions), self.vectors)


# Reciprocal rank fusion (Cormack et al.): each ranking's first FUSION_DEPTH matches,
# each adding 1 / (RRF_K + rank) to its chunk's score.
RRF_K = 60
FUSION_DEPTH = 200
Key = TypeVar("Key", bound=int)


def fused(rankings: Sequence[Sequence[Key]]) -> list[tuple[Key, float]]:
    """Reciprocal rank fusion of ranked lists of matches (best first, each at most
    FUSION_DEPTH long): a key scores the sum of 1 / (RRF_K + rank) over the lists it is
    in (a list it is not in adds nothing), best first, ties by key. `search --mode
    hybrid` and `evaluate --retriever hybrid` both rank by it."""
    scores: dict[Key, float] = {}
    for ranking in rankings:
        for rank, key in enumerate(ranking, start=1):
            scores[key] = scores.get(key, 0.0) + 1.0 / (RRF_K + rank)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


@dataclass(frozen=True)
class FusedRanking:
    parts: tuple[Scored, ...]

    def best(self, first: int, stop: int, k: int) -> list[Best]:
        lists = [
            [part.matches(row, FUSION_DEPTH) for row in part.scores(first, stop)]
            for part in self.parts
        ]
        return [[(int(i), s) for i, s in fused(each)[:k]] for each in zip(*lists, strict=True)]


@dataclass(frozen=True)
class Hybrid:
    """Reciprocal rank fusion (`fused`) of BM25's matches and the embedding's nearest
    chunks, each ranking FUSION_DEPTH deep: a chunk BM25 does not match gets nothing
    from BM25."""

    embed: Embed = embedded
    name: str = "hybrid"

    def ranking(self, chunks: Sequence[str], questions: Sequence[str]) -> FusedRanking:
        parts = (
            BM25().ranking(chunks, questions),
            Embedding(self.embed).ranking(chunks, questions),
        )
        return FusedRanking(parts)

    def index(self, chunks: Sequence[str]) -> FusedIndex:
        return FusedIndex(BM25().index(chunks), Embedding(self.embed).index(chunks))


@dataclass(frozen=True)
class FusedIndex:
    words: BM25Index
    vectors: EmbeddedChunks

    def ranking(self, questions: Sequence[str]) -> FusedRanking:
        return FusedRanking((self.words.ranking(questions), self.vectors.ranking(questions)))


def retriever(name: str, embed: Embed | None = None) -> Retriever:
    """The retriever `name`; the embedding and hybrid ones embed with `embed` (default:
    WordLlama, uncached)."""
    if name == "bm25":
        return BM25()
    if name in ("embedding", "hybrid"):
        return (Embedding if name == "embedding" else Hybrid)(embed or embedded)
    raise ExplorerError(
        ErrorCode.USAGE, f"unknown retriever {name!r}; known: {', '.join(RETRIEVERS)}"
    )


def top_k(row: Matrix, k: int) -> list[int]:
    """The positions of the k best scores, best first, ties by position (chunk order)."""
    import numpy as np

    if k < len(row):  # the k best (ties at the edge kept), then ranked: no full sort
        edge = np.partition(-row, k - 1)[k - 1]
        candidates = np.flatnonzero(-row <= edge)
        order = candidates[np.argsort(-row[candidates], kind="stable")]
        return [int(i) for i in order[:k]]
    return [int(i) for i in np.argsort(-row, kind="stable")[:k]]
