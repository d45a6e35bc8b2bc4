"""Measure retrieval: for questions whose answers are known character ranges, how much
of each answer do a policy's top-k chunks hold, and at what cost in retrieved text?

Metrics are those of chunking_evaluation, over character ranges `(source_id, start,
end)` (ranges of different documents never intersect). With R the union of a question's
reference ranges and c_i its retrieved chunks:
recall = |R ∩ C| / |R|; precision = |R ∩ C| / Σ|c_i| (every retrieved character counts,
overlapping ones too); IoU = |R ∩ C| / (Σ|c_i| + |R \\ C|), where C is the union of
the c_i; hit = one retrieved chunk contains all of R.

Retrievers score every chunk of a policy's whole index (all documents) for each
question; the top k are taken, ties broken by chunk order so results are reproducible.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Literal, NamedTuple, Protocol

from pydantic import ConfigDict, Field, TypeAdapter, model_validator
from typing_extensions import TypedDict

from ..checking.checks import resolve_span
from ..checking.validate import validate_index
from ..chunking.config import DEFAULT_GRAMMAR, ChunkConfig, ConfigJson
from ..chunking.index import ChunkRecord, build_index
from ..chunking.policies import POLICIES, make_config
from ..digests import digest
from ..errors import ErrorCode, ExplorerError
from ..jsonio import parse_json
from ..limits import DEFAULT_LIMITS, Limits
from ..models import (
    NoNullModel,
    PlainText,
    StrictModel,
    VersionOne,
    strict_shape,
    validated,
)
from ..pipeline import Settings
from ..sources.loading import LoadResult
from ..sources.manifest import ManifestSpan, require_one_form, span_schema
from .terms import bm25_terms

EVALUATION_VERSION = 1
DEFAULT_K = 5
MAX_K = 100
MAX_QUESTIONS = 10_000
MAX_REFERENCES = 100
MAX_QUESTION_CHARS = 10_000
RRF_K = 60  # reciprocal rank fusion's constant, as its authors (Cormack et al.) chose
RETRIEVERS = ("bm25", "embedding", "hybrid")
RetrieverName = Literal["bm25", "embedding", "hybrid"]

# ---------------------------------------------------------------------------------------
# Questions


class Reference(NoNullModel):
    """Where a question's answer is: a quote that occurs exactly once in the normalized
    document, or `[start, end)` in its characters."""

    model_config = ConfigDict(json_schema_extra=span_schema)

    quote: str | None = Field(default=None, min_length=1, max_length=MAX_QUESTION_CHARS)
    start: int | None = None
    end: int | None = None

    @model_validator(mode="after")
    def _one_form(self) -> Reference:
        require_one_form(self.quote, self.start, self.end)
        return self

    def as_span(self, label: str) -> ManifestSpan:
        return ManifestSpan(label=label, **self.model_dump(exclude_none=True))


class Question(StrictModel):
    id: Annotated[PlainText, Field(max_length=200)]
    question: Annotated[PlainText, Field(max_length=MAX_QUESTION_CHARS)]
    source_id: PlainText
    references: list[Reference] = Field(min_length=1, max_length=MAX_REFERENCES)


class QuestionSet(StrictModel):
    """A questions file (`questions_version` 1)."""

    questions_version: VersionOne
    questions: list[Question] = Field(min_length=1, max_length=MAX_QUESTIONS)

    @model_validator(mode="after")
    def _unique_ids(self) -> QuestionSet:
        seen: set[str] = set()
        for question in self.questions:
            if question.id in seen:
                raise ValueError(f"duplicate question id {question.id!r}")
            seen.add(question.id)
        return self


def parse_questions(data: bytes) -> QuestionSet:
    """Bytes of a questions file to a checked `QuestionSet`, or `invalid_questions`."""
    raw = parse_json(data, ErrorCode.INVALID_QUESTIONS, "questions file")
    return validated(QuestionSet.model_validate, raw, ErrorCode.INVALID_QUESTIONS)


Range = tuple[str, int, int]  # (source_id, start, end), half-open, in characters


@dataclass(frozen=True)
class PlacedQuestion:
    """A question with its references placed in the normalized text of its document."""

    id: str
    question: str
    source_id: str
    references: tuple[Range, ...]


def place_question(question: Question, text: str, named: str | None = None) -> PlacedQuestion:
    """Each reference placed as span checks place spans: a quote must occur exactly once
    (`span_quote_not_found`, `span_quote_ambiguous`), offsets must lie in the text
    (`span_out_of_range`). A refusal names the question by its id, or as `named`."""
    ranges = []
    for number, reference in enumerate(question.references, 1):
        where = f"{named or f'question {question.id!r}'}, reference {number}"
        span = resolve_span(text, reference.as_span(f"reference {number}"), where)
        ranges.append((question.source_id, span.start, span.end))
    return PlacedQuestion(question.id, question.question, question.source_id, tuple(ranges))


def place_questions(questions: QuestionSet, texts: Mapping[str, str]) -> tuple[PlacedQuestion, ...]:
    """Every question placed in its document; one whose document is not among `texts`
    (unknown, or failed to load) is refused (`invalid_questions`), never measured
    against nothing."""
    placed = []
    for question in questions.questions:
        text = texts.get(question.source_id)
        if text is None:
            raise not_loaded(question)
        placed.append(place_question(question, text))
    return tuple(placed)


def not_loaded(question: Question) -> ExplorerError:
    return ExplorerError(
        ErrorCode.INVALID_QUESTIONS,
        f"question {question.id!r} names source_id {question.source_id!r}, "
        "which is not a loaded document of the manifest",
    )


def new_question(
    question: str, source_id: str, quotes: Sequence[str], text: str, taken_ids: Sequence[str] = ()
) -> Question:
    """A question a person typed, with its answer quoted from the document (`text`, the
    normalized text of `source_id`): checked and placed now, so a quote that is missing
    or ambiguous is refused with its code before it is kept. Its id comes from its
    content (`q-` and 12 hex digits), with `-2`, `-3`… if that id is taken."""
    made = validated(
        Question.model_validate,
        {
            "id": "q-" + digest({"question": question, "source_id": source_id})[:12],
            "question": question,
            "source_id": source_id,
            "references": [{"quote": quote} for quote in quotes],
        },
        ErrorCode.INVALID_QUESTIONS,
    )
    place_question(made, text, "the question")  # its id is not shown to anyone yet
    base, number, taken = made.id, 1, set(taken_ids)
    while made.id in taken:
        number += 1
        made = made.model_copy(update={"id": f"{base}-{number}"})
    return made


# ---------------------------------------------------------------------------------------
# Metrics over character ranges


def union(ranges: Sequence[Range]) -> list[Range]:
    """The same characters as sorted, disjoint, non-touching ranges."""
    merged: list[Range] = []
    for source_id, start, end in sorted(ranges):
        if start >= end:
            continue
        if merged and merged[-1][0] == source_id and start <= merged[-1][2]:
            last = merged[-1]
            merged[-1] = (source_id, last[1], max(last[2], end))
        else:
            merged.append((source_id, start, end))
    return merged


def size(ranges: Sequence[Range]) -> int:
    """Σ|r|: every character of every range, overlaps counted again."""
    return sum(end - start for _, start, end in ranges)


def overlap(a: Sequence[Range], b: Sequence[Range]) -> int:
    """|union(a) ∩ union(b)|: the characters both cover, each counted once."""
    total = 0
    left, right = union(a), union(b)
    i = j = 0
    while i < len(left) and j < len(right):
        (sa, a0, a1), (sb, b0, b1) = left[i], right[j]
        if sa == sb:
            total += max(0, min(a1, b1) - max(a0, b0))
        if (sa, a1) <= (sb, b1):
            i += 1
        else:
            j += 1
    return total


@dataclass(frozen=True)
class Scores:
    recall: float
    precision: float
    iou: float
    hit: bool


def contains(outer: Range, inner: Range) -> bool:
    return outer[0] == inner[0] and outer[1] <= inner[1] and inner[2] <= outer[2]


def score(references: Sequence[Range], retrieved: Sequence[Range]) -> Scores:
    """The four figures of one question (see the module's docstring). With nothing
    retrieved, precision is 0."""
    wanted = union(references)
    wanted_size = size(wanted)
    if wanted_size == 0:
        raise ValueError("a question needs a non-empty reference")
    found = overlap(wanted, retrieved)
    retrieved_size = size(retrieved)
    return Scores(
        recall=found / wanted_size,
        precision=found / retrieved_size if retrieved_size else 0.0,
        iou=found / (retrieved_size + wanted_size - found),
        hit=any(all(contains(chunk, part) for part in wanted) for chunk in retrieved),
    )


# ---------------------------------------------------------------------------------------
# Retrievers

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


# ---------------------------------------------------------------------------------------
# The evaluation's shape: declared once; the JSON Schema is generated from it.


@strict_shape
class RetrievedChunk(TypedDict):
    chunk_id: str
    source_id: str
    start: int
    end: int
    rank: int
    score: float


@strict_shape
class ReferenceRange(TypedDict):
    start: int
    end: int


@strict_shape
class QuestionResult(TypedDict):
    id: str
    source_id: str
    references: list[ReferenceRange]
    retrieved: list[RetrievedChunk]
    recall: float
    precision: float
    iou: float
    hit: bool


@strict_shape
class Summary(TypedDict):
    """Means over the questions; `hit` is the share of questions with a hit."""

    recall: float
    precision: float
    iou: float
    hit: float
    chunk_count: int
    mean_chunk_chars: float


@strict_shape
class PolicyEvaluation(TypedDict):
    name: str
    config: ConfigJson
    index_id: str
    summary: Summary
    questions: list[QuestionResult]


@strict_shape
class Evaluation(TypedDict):
    evaluation_version: int
    retriever: RetrieverName
    k: int
    policies: list[PolicyEvaluation]


EVALUATION = TypeAdapter(Evaluation)


def _figure(value: float) -> float:
    """Rounded so the same run prints the same file on any machine."""
    return round(float(value), 6)


class Hit(NamedTuple):
    """A retrieved chunk: where it is, and its score."""

    chunk_id: str
    source_id: str
    start: int
    end: int
    score: float


def question_result(question: PlacedQuestion, hits: Sequence[Hit]) -> QuestionResult:
    """A question's figures from its top k chunks, best first."""
    retrieved: list[RetrievedChunk] = [
        {
            "chunk_id": hit.chunk_id,
            "source_id": hit.source_id,
            "start": hit.start,
            "end": hit.end,
            "rank": rank,
            "score": _figure(hit.score),
        }
        for rank, hit in enumerate(hits, 1)
    ]
    figures = score(question.references, [(h.source_id, h.start, h.end) for h in hits])
    return {
        "id": question.id,
        "source_id": question.source_id,
        "references": [{"start": s, "end": e} for _, s, e in question.references],
        "retrieved": retrieved,
        "recall": _figure(figures.recall),
        "precision": _figure(figures.precision),
        "iou": _figure(figures.iou),
        "hit": figures.hit,
    }


def evaluate_chunks(
    chunks: Sequence[ChunkRecord],
    questions: Sequence[PlacedQuestion],
    search: Retriever,
    k: int,
) -> list[QuestionResult]:
    """Each question's top k of `chunks` (one policy's whole index) and its figures."""
    matrix = search.scores([c["text"] for c in chunks], [q.question for q in questions])
    return [
        question_result(
            question,
            [
                Hit(c["chunk_id"], c["source_id"], c["start"], c["end"], float(row[i]))
                for i in top_k(row, k)
                for c in (chunks[i],)
            ],
        )
        for question, row in zip(questions, matrix, strict=True)
    ]


def summarize(results: Sequence[QuestionResult], chunk_count: int, chunk_chars: int) -> Summary:
    """Means over the questions, and over the chunks (`chunk_chars` is their sum of
    lengths, a whole number: the same sum however it was added up)."""

    def mean(values: list[float]) -> float:
        return _figure(sum(values) / len(values)) if values else 0.0

    return {
        "recall": mean([r["recall"] for r in results]),
        "precision": mean([r["precision"] for r in results]),
        "iou": mean([r["iou"] for r in results]),
        "hit": mean([1.0 if r["hit"] else 0.0 for r in results]),
        "chunk_count": chunk_count,
        "mean_chunk_chars": _figure(chunk_chars / chunk_count) if chunk_count else 0.0,
    }


Columns = Sequence[tuple[str, ChunkConfig]]  # each column's name and config


def columns_of(settings: Settings) -> list[tuple[str, ChunkConfig]]:
    """The columns of `compare`'s and the app's settings, named as they name them."""
    return list(zip(settings.names, settings.configs, strict=True))


def evaluate(
    load: LoadResult,
    questions: QuestionSet,
    columns: Columns,
    retriever_name: RetrieverName = "bm25",
    k: int = DEFAULT_K,
    limits: Limits = DEFAULT_LIMITS,
) -> Evaluation:
    """Each column's index over all the documents, built and validated, searched for
    every question; its top k chunks measured."""
    if not 1 <= k <= MAX_K:
        raise ExplorerError(ErrorCode.USAGE, f"k must be from 1 to {MAX_K}, not {k}")
    if not load.documents:
        raise ExplorerError(
            ErrorCode.NO_DOCUMENTS, "no document loaded, so there is nothing to search"
        )
    search = retriever(retriever_name)
    texts = {d["source_id"]: d["text"] for d in load.documents}
    placed = place_questions(questions, texts)
    policies: list[PolicyEvaluation] = []
    for name, config in columns:
        index = validate_index(build_index(load.documents, config, limits), limits)
        chunks = index["chunks"]
        results = evaluate_chunks(chunks, placed, search, k)
        policies.append(
            {
                "name": name,
                "config": index["config"],
                "index_id": index["index_id"],
                "summary": summarize(
                    results, len(chunks), sum(c["end"] - c["start"] for c in chunks)
                ),
                "questions": results,
            }
        )
    return evaluation_of(retriever_name, k, policies)


def evaluation_of(
    retriever_name: RetrieverName, k: int, policies: Sequence[PolicyEvaluation]
) -> Evaluation:
    """The evaluation file of one run, checked against its declared shape (both engines
    build it here)."""
    evaluation: Evaluation = {
        "evaluation_version": EVALUATION_VERSION,
        "retriever": retriever_name,
        "k": k,
        "policies": list(policies),
    }
    return EVALUATION.validate_python(evaluation)


MAX_SWEEP_SIZES = 100


def sweep_columns(spec: str, grammar: str = DEFAULT_GRAMMAR) -> list[tuple[str, ChunkConfig]]:
    """`NAME:FROM:TO:STEP` (TO included): one column per size of a sized policy under
    `grammar`, each named `NAME@SIZE`."""
    parts = spec.split(":")
    numbers = parts[1:]
    if len(parts) != 4 or not all(n.isascii() and n.isdigit() and len(n) < 8 for n in numbers):
        raise ExplorerError(
            ErrorCode.USAGE,
            f"--sweep takes NAME:FROM:TO:STEP, e.g. heading-aware:100:1000:100, not {spec[:80]!r}",
        )
    name = parts[0]
    low, high, step = (int(n) for n in numbers)
    policy = POLICIES.get(name)
    if policy is None or policy.default_max_chars is None:
        sized = [p.name for p in POLICIES.values() if p.default_max_chars is not None]
        raise ExplorerError(
            ErrorCode.USAGE, f"--sweep needs a sized policy ({', '.join(sized)}), not {name[:80]!r}"
        )
    if step < 1 or low < 1 or high < low or (high - low) // step >= MAX_SWEEP_SIZES:
        raise ExplorerError(
            ErrorCode.USAGE,
            f"--sweep {spec!r}: FROM from 1, TO at least FROM, STEP from 1, and at most "
            f"{MAX_SWEEP_SIZES} sizes",
        )
    return [
        (f"{name}@{size}", make_config(name, size, grammar=grammar))
        for size in range(low, high + 1, step)
    ]


def curve(evaluation: Evaluation) -> str:
    """One line per policy (or size): the summary as a fixed-width table."""
    names = ("size", "chunks", "mean", "recall", "prec.", "IoU", "hit")
    head = "policy".ljust(22) + "".join(name.rjust(8) for name in names)
    lines = [head]
    for policy in evaluation["policies"]:
        s = policy["summary"]
        size_text = str(policy["config"].get("max_chars") or "-")
        lines.append(
            f"{policy['name']:<22}{size_text:>8}{s['chunk_count']:>8}{s['mean_chunk_chars']:>8.0f}"
            f"{s['recall']:>8.3f}{s['precision']:>8.3f}{s['iou']:>8.3f}{s['hit']:>8.3f}"
        )
    return "\n".join(lines) + "\n"
