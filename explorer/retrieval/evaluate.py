"""Measure retrieval: for questions whose answers are known character ranges, how much
of each answer do a policy's top-k chunks hold, and at what cost in retrieved text?

Questions come from `questions`, the figures from `metrics` (chunking_evaluation's),
the rankings from `retrievers`. A retriever ranks every chunk of a policy's whole index
(all documents) for each question, a block of questions at a time; the top k are taken,
ties broken by chunk order so results are reproducible.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, NotRequired

from pydantic import TypeAdapter
from typing_extensions import TypedDict

from ..checking.validate import validate_index
from ..chunking.config import DEFAULT_GRAMMAR, ChunkConfig, ConfigJson
from ..chunking.imports import ChunkFile, place
from ..chunking.index import ChunkRecord, GivenSpans, build_index, readable
from ..chunking.policies import LIBRARY_POLICIES, POLICIES, make_config
from ..errors import ErrorCode, ExplorerError
from ..limits import DEFAULT_LIMITS, Limits
from ..memo import derived_once
from ..models import strict_shape
from ..pipeline import Settings
from ..sources.documents import DocumentRecord
from ..sources.loading import LoadResult
from .metrics import score
from .questions import PlacedQuestion, QuestionSet, place_questions, require_written
from .retrievers import Embed, Retriever, RetrieverName, best_chunks, retriever

EVALUATION_VERSION = 1
DEFAULT_K = 5
MAX_K = 100


@strict_shape
class RetrievedChunk(TypedDict):
    chunk_id: str
    source_id: str
    start: int
    end: int
    rank: int
    score: float
    pages: NotRequired[list[int]]  # a PDF's chunk: the pages it lies on


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
    """Means over the questions; `hit` is the share of questions with a hit. A column
    that measured nothing has `measured` false and every figure null, never 0."""

    measured: bool
    recall: float | None
    precision: float | None
    iou: float | None
    hit: float | None
    chunk_count: int | None
    mean_chunk_chars: float | None


@strict_shape
class PolicyEvaluation(TypedDict):
    """One column's figures; a column that can cut none of the documents (grammar v1 and
    no leading heading) is not measured: `index_id` "", no questions, its summary's
    `measured` false and figures null, its `notes` saying why."""

    name: str
    config: ConfigJson
    index_id: str
    summary: Summary
    questions: list[QuestionResult]
    notes: NotRequired[list[str]]  # what the column left out, e.g. texts its grammar cannot read


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
    pages: list[int] | None = None


def question_result(question: PlacedQuestion, hits: Sequence[Hit]) -> QuestionResult:
    """A question's figures from its top k chunks, best first."""
    retrieved: list[RetrievedChunk] = []
    for rank, hit in enumerate(hits, 1):
        chunk: RetrievedChunk = {
            "chunk_id": hit.chunk_id,
            "source_id": hit.source_id,
            "start": hit.start,
            "end": hit.end,
            "rank": rank,
            "score": _figure(hit.score),
        }
        if hit.pages is not None:
            chunk["pages"] = hit.pages
        retrieved.append(chunk)
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
    limits: Limits = DEFAULT_LIMITS,
) -> list[QuestionResult]:
    """Each question's top k of `chunks` (one policy's whole index) and its figures,
    ranked a block of questions at a time (`best_chunks`)."""
    ranking = search.ranking([c["text"] for c in chunks], [q.question for q in questions])
    best = best_chunks(ranking, len(questions), len(chunks), k, limits)
    return [
        question_result(
            question,
            [
                Hit(c["chunk_id"], c["source_id"], c["start"], c["end"], score, c.get("pages"))
                for i, score in found
                for c in (chunks[i],)
            ],
        )
        for question, found in zip(questions, best, strict=True)
    ]


def summarize(results: Sequence[QuestionResult], chunk_count: int, chunk_chars: int) -> Summary:
    """Means over the questions, and over the chunks (`chunk_chars` is their sum of
    lengths, a whole number: the same sum however it was added up)."""

    def mean(values: list[float]) -> float:
        return _figure(sum(values) / len(values)) if values else 0.0

    return {
        "measured": True,
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
    embed: Embed | None = None,
    chunk_files: Sequence[ChunkFile] = (),
) -> Evaluation:
    """Each column's index over all the documents (then each chunk file's, placed in
    them), built and validated, searched for every question; its top k chunks measured.
    The embedding and hybrid retrievers embed with `embed` (default: WordLlama, not
    cached); an embedder that fails is `embedding_failed` naming the column."""
    if not 1 <= k <= MAX_K:
        raise ExplorerError(ErrorCode.USAGE, f"k must be from 1 to {MAX_K}, not {k}")
    if not load.documents:
        raise ExplorerError(
            ErrorCode.NO_DOCUMENTS, "no document loaded, so there is nothing to search"
        )
    require_written(questions)
    search = retriever(retriever_name, embed)
    texts = {d["source_id"]: d["text"] for d in load.documents}
    placed = place_questions(questions, texts)
    built: list[tuple[str, ChunkConfig, GivenSpans | None]] = [
        (name, config, None) for name, config in columns
    ]
    for chunk_file in chunk_files:  # every file placed before any column is measured
        placement = place(chunk_file, load.documents, limits)
        built.append((chunk_file.name, placement.config, placement.spans))
    policies: list[PolicyEvaluation] = []
    with derived_once():  # each document parsed once for every column and size
        for name, config, given in built:
            policies.append(_policy(name, config, given, load.documents, placed, search, k, limits))
    return evaluation_of(retriever_name, k, policies)


def _policy(
    name: str,
    config: ChunkConfig,
    given: GivenSpans | None,
    documents: Sequence[DocumentRecord],
    placed: Sequence[PlacedQuestion],
    search: Retriever,
    k: int,
    limits: Limits,
) -> PolicyEvaluation:
    """One column's evaluation: its index built and validated, every question searched."""
    cut = readable(documents, config, name)
    if not cut.documents:  # its grammar reads none: not measured, its notes say why
        return not_measured(name, config.as_json(), cut.notes)
    index = validate_index(build_index(cut.documents, config, limits, given), limits)
    chunks = index["chunks"]
    try:
        results = evaluate_chunks(chunks, placed, search, k, limits)
    except ExplorerError as error:
        if error.code is not ErrorCode.EMBEDDING_FAILED:
            raise
        raise ExplorerError(error.code, f"column {name!r}: {error.detail}") from None
    chars = sum(c["end"] - c["start"] for c in chunks)
    return policy_evaluation(
        name, index["config"], index["index_id"], results, len(chunks), chars, cut.notes
    )


def policy_evaluation(
    name: str,
    config: ConfigJson,
    index_id: str,
    results: list[QuestionResult],
    chunk_count: int,
    chunk_chars: int,
    notes: Sequence[str] = (),
) -> PolicyEvaluation:
    """One column's part of the evaluation file (both engines build it here)."""
    evaluation: PolicyEvaluation = {
        "name": name,
        "config": config,
        "index_id": index_id,
        "summary": summarize(results, chunk_count, chunk_chars),
        "questions": results,
    }
    if notes:
        evaluation["notes"] = list(notes)
    return evaluation


def not_measured(name: str, config: ConfigJson, notes: Sequence[str]) -> PolicyEvaluation:
    """The part of a column that measured nothing: no index, no question, figures null."""
    return {
        "name": name,
        "config": config,
        "index_id": "",
        "summary": {
            "measured": False,
            "recall": None,
            "precision": None,
            "iou": None,
            "hit": None,
            "chunk_count": None,
            "mean_chunk_chars": None,
        },
        "questions": [],
        "notes": list(notes),
    }


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


def size_sweep(
    name: str, config: ChunkConfig, sizes: Sequence[int], tokens: bool = False
) -> list[tuple[str, ChunkConfig]]:
    """One column per size of the sized column `name`, cut as `config` cuts (its policy,
    grammar, overlap and a library's parameters) but at each of `sizes`, in characters or
    in cl100k_base tokens; each named `NAME@SIZE` (`NAME@SIZEt` in tokens)."""
    if not config.sized:
        raise ExplorerError(ErrorCode.USAGE, f"the column {name!r} has no size to sweep")
    if not 1 <= len(sizes) <= MAX_SWEEP_SIZES:
        raise ExplorerError(
            ErrorCode.USAGE, f"a sweep takes 1 to {MAX_SWEEP_SIZES} sizes, not {len(sizes)}"
        )
    overlap = config.overlap or 0
    if min(sizes) <= overlap:
        raise ExplorerError(
            ErrorCode.USAGE,
            f"the column {name!r} overlaps by {overlap}: sweep sizes above it, "
            f"not from {min(sizes)}",
        )
    parameters = config.library.parameters if config.library is not None else None
    suffix = "t" if tokens else ""
    return [
        (
            f"{name}@{size}{suffix}",
            make_config(
                config.strategy,
                None if tokens else size,
                max_tokens=size if tokens else None,
                overlap=overlap,
                grammar=config.grammar_name,
                parameters=parameters,
            ),
        )
        for size in sizes
    ]


def sweep_columns(
    spec: str, grammar: str = DEFAULT_GRAMMAR, like: ChunkConfig | None = None
) -> list[tuple[str, ChunkConfig]]:
    """`NAME:FROM:TO:STEP` (TO included): one column per size of a sized policy, ours
    under `grammar` or a library's at its default parameters, each named `NAME@SIZE`;
    in tokens when the three numbers end in `t` (`heading-aware:64t:512t:64t`, named
    `NAME@SIZEt`). `like`, a column of policy NAME, is cut at each size instead: its
    grammar, overlap and a library's parameters kept."""
    parts = spec.split(":")
    numbers = parts[1:]
    tokens = len(numbers) == 3 and all(n.endswith("t") for n in numbers)
    digits = [n.removesuffix("t") if tokens else n for n in numbers]
    if len(parts) != 4 or not all(n.isascii() and n.isdigit() and len(n) < 8 for n in digits):
        raise ExplorerError(
            ErrorCode.USAGE,
            "--sweep takes NAME:FROM:TO:STEP, e.g. heading-aware:100:1000:100 (in tokens "
            f"heading-aware:64t:512t:64t), not {spec[:80]!r}",
        )
    name = parts[0]
    low, high, step = (int(n) for n in digits)
    defaults = {p.name: p.default_max_chars for p in POLICIES.values()} | {
        p.name: p.default_max_chars for p in LIBRARY_POLICIES.values()
    }
    if defaults.get(name) is None:
        sized = [policy for policy, size in defaults.items() if size is not None]
        raise ExplorerError(
            ErrorCode.USAGE, f"--sweep needs a sized policy ({', '.join(sized)}), not {name[:80]!r}"
        )
    if step < 1 or low < 1 or high < low or (high - low) // step >= MAX_SWEEP_SIZES:
        raise ExplorerError(
            ErrorCode.USAGE,
            f"--sweep {spec!r}: FROM from 1, TO at least FROM, STEP from 1, and at most "
            f"{MAX_SWEEP_SIZES} sizes",
        )
    if like is not None and like.strategy != name:
        raise ExplorerError(
            ErrorCode.USAGE,
            f"--sweep {name[:80]} with --policy {like.strategy}: the one --policy given with "
            "--sweep is the column it sweeps, of its policy; give --sweep or other --policy "
            "columns, not both",
        )
    base = like or make_config(name, grammar=grammar if name in POLICIES else DEFAULT_GRAMMAR)
    return size_sweep(name, base, range(low, high + 1, step), tokens)


def curve(evaluation: Evaluation) -> str:
    """One line per policy (or size): the summary as a fixed-width table, its first
    column as wide as the longest name."""
    names = ("size", "chunks", "mean", "recall", "prec.", "IoU", "hit")
    width = max([22, *(len(policy["name"]) + 2 for policy in evaluation["policies"])])
    head = "policy".ljust(width) + "".join(name.rjust(8) for name in names)
    lines = [head]
    for policy in evaluation["policies"]:
        s = policy["summary"]
        config = policy["config"]
        tokens = config.get("max_tokens")
        size_text = f"{tokens}t" if tokens is not None else str(config.get("max_chars") or "-")
        row = f"{policy['name']:<{width}}{size_text:>8}"
        if not s["measured"]:
            lines.append(f"{row}  not measured: {'; '.join(policy.get('notes', []))}")
            continue
        lines.append(
            f"{row}{s['chunk_count']:>8}{s['mean_chunk_chars']:>8.0f}"
            f"{s['recall']:>8.3f}{s['precision']:>8.3f}{s['iou']:>8.3f}{s['hit']:>8.3f}"
        )
    return "\n".join(lines) + "\n"
