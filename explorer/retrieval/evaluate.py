"""Measure retrieval: for questions whose answers are known character ranges, how much
of each answer do a policy's top-k chunks hold, and at what cost in retrieved text?

Questions come from `questions`, the figures from `metrics` (chunking_evaluation's),
the rankings from `retrievers`, the intervals, verdicts and decision from `decide`. A
retriever ranks every chunk of a policy's whole index (all documents) for each question,
a block of questions at a time; the top k are taken, ties broken by chunk order so
results are reproducible; with a budget, the top k are then walked until the budget is
spent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, MutableMapping, Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple, NotRequired

from pydantic import TypeAdapter
from typing_extensions import TypedDict

from ..checking.validate import validate_index
from ..chunking.config import DEFAULT_GRAMMAR, ChunkConfig, ConfigJson
from ..chunking.imports import ChunkFile, place
from ..chunking.index import ChunkRecord, GivenSpans, build_index, readable
from ..chunking.policies import (
    LIBRARY_POLICIES,
    OWN_POLICIES,
    make_config,
    resized,
)
from ..chunking.tokens import count_tokens
from ..errors import ErrorCode, ExplorerError
from ..limits import DEFAULT_LIMITS, Limits
from ..memo import derived_once
from ..models import strict_shape
from ..pipeline import Settings
from ..sources.documents import DocumentRecord
from ..sources.loading import LoadResult
from .decide import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    LEVEL,
    bootstrap,
    decide,
    require_resamples,
)
from .embedding import EMBEDDER_FAILURES, EmbedderUsage
from .metrics import Coverage, DocumentChunks, ndcg, reciprocal_rank, score
from .questions import PlacedQuestion, QuestionSet, place_questions, require_written
from .retrievers import (
    Best,
    ChunkIndex,
    Embed,
    Retriever,
    RetrieverName,
    best_chunks,
    retriever,
)

EVALUATION_VERSION = 1
DEFAULT_K = 5
MAX_K = 100
BUDGET_K = 100  # k when a budget is given and k is not
Metric = Literal["recall", "precision", "iou", "hit", "precision_omega", "mrr", "ndcg"]
METRICS: tuple[Metric, ...] = (
    "recall",
    "precision",
    "iou",
    "hit",
    "precision_omega",
    "mrr",
    "ndcg",
)


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
    precision_omega: float
    mrr: float
    ndcg: float
    retrieved_tokens: int
    over_budget: bool  # the first chunk alone is larger than the budget (kept all the same)


@strict_shape
class Figures(TypedDict):
    """One number per metric (`METRICS`)."""

    recall: float
    precision: float
    iou: float
    hit: float
    precision_omega: float
    mrr: float
    ndcg: float


@strict_shape
class Intervals(TypedDict):
    """A [low, high] interval per metric (`METRICS`)."""

    recall: list[float]
    precision: list[float]
    iou: list[float]
    hit: list[float]
    precision_omega: list[float]
    mrr: list[float]
    ndcg: list[float]


@strict_shape
class Summary(TypedDict):
    """Means over the questions; `hit` is the share of questions with a hit; `std` the
    population standard deviations of the questions' figures; `ci` their means' bootstrap
    intervals (null without a bootstrap). A column that measured nothing has `measured`
    false and every figure null, `std` and `ci` included, never 0."""

    measured: bool
    recall: float | None
    precision: float | None
    iou: float | None
    hit: float | None
    precision_omega: float | None
    mrr: float | None
    ndcg: float | None
    retrieved_tokens: float | None
    chunk_count: int | None
    mean_chunk_chars: float | None
    std: Figures | None
    ci: Intervals | None


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
class Budget(TypedDict):
    """How much retrieved text each question may keep, in characters or cl100k tokens."""

    size: int
    unit: Literal["chars", "tokens"]


@strict_shape
class Bootstrap(TypedDict):
    resamples: int
    seed: int
    level: float


@strict_shape
class Comparison(TypedDict):
    """Column a against column b (a declared first) on one metric: the difference of
    their means, its paired bootstrap interval, and which is better ("tie": the interval
    holds 0)."""

    a: str
    b: str
    metric: Metric
    difference: float
    ci: list[float]
    verdict: Literal["a", "b", "tie"]


@strict_shape
class Decision(TypedDict):
    """The columns no verdict beats on `metric`, the one of them that retrieves the
    fewest tokens, and why, in one sentence."""

    metric: Metric
    best: list[str]
    choice: str
    why: str


@strict_shape
class Evaluation(TypedDict):
    evaluation_version: int
    retriever: RetrieverName
    k: int
    budget: Budget | None
    bootstrap: Bootstrap | None
    policies: list[PolicyEvaluation]
    comparisons: list[Comparison]
    decision: Decision | None
    embedder: NotRequired[EmbedderUsage]  # an API's (`--embedder openai:MODEL`)


EVALUATION = TypeAdapter(Evaluation)
INTERVALS = TypeAdapter(Intervals)


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
    pages: list[int] | None
    tokens: int  # cl100k_base tokens of its text


MAX_BUDGET = 1_000_000_000


def parse_budget(text: str) -> Budget:
    """`N` characters or `Nt` cl100k_base tokens, N from 1 to `MAX_BUDGET`."""
    digits = text.strip().removesuffix("t")
    unit: Literal["chars", "tokens"] = "tokens" if text.strip().endswith("t") else "chars"
    negative = digits.startswith("-")
    number = digits.removeprefix("-")
    if not (number.isascii() and number.isdigit()) or len(number) > 10:
        raise ExplorerError(
            ErrorCode.INVALID_BUDGET,
            f"--budget takes N characters or Nt tokens (e.g. 4000 or 1000t), not {text[:40]!r}",
        )
    size = -int(digits[1:]) if negative else int(digits)
    if not 1 <= size <= MAX_BUDGET:
        raise ExplorerError(
            ErrorCode.INVALID_BUDGET,
            f"a budget is from 1 to {MAX_BUDGET:,}, not {size:,}",
        )
    return {"size": size, "unit": unit}


def require_budget(budget: Budget | None) -> None:
    """A budget given through the API (the command line parses it first) is at least 1."""
    if budget is not None and budget["size"] < 1:
        raise ExplorerError(
            ErrorCode.INVALID_BUDGET, f"a budget is at least 1, not {budget['size']}"
        )


def within_budget(hits: Sequence[Hit], budget: Budget | None) -> tuple[Sequence[Hit], bool]:
    """The hits kept, best first, while their summed size stays within the budget (the
    first always kept), and whether the first alone is larger than it."""
    if budget is None or not hits:
        return hits, False

    def cost(hit: Hit) -> int:
        return hit.end - hit.start if budget["unit"] == "chars" else hit.tokens

    spent = cost(hits[0])
    kept = 1
    while kept < len(hits) and spent + cost(hits[kept]) <= budget["size"]:
        spent += cost(hits[kept])
        kept += 1
    return hits[:kept], cost(hits[0]) > budget["size"]


def question_result(
    question: PlacedQuestion, ranked: Sequence[Hit], coverage: Coverage, budget: Budget | None
) -> QuestionResult:
    """A question's figures from its top k chunks, best first (those the budget keeps),
    and what the column's every chunk gives (`coverage`). Both engines compute here."""
    hits, over = within_budget(ranked, budget)
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
    ranges = [(h.source_id, h.start, h.end) for h in hits]
    figures = score(question.references, ranges)
    return {
        "id": question.id,
        "source_id": question.source_id,
        "references": [{"start": s, "end": e} for _, s, e in question.references],
        "retrieved": retrieved,
        "recall": _figure(figures.recall),
        "precision": _figure(figures.precision),
        "iou": _figure(figures.iou),
        "hit": figures.hit,
        "precision_omega": _figure(coverage.precision_omega),
        "mrr": _figure(reciprocal_rank(question.references, ranges)),
        "ndcg": _figure(ndcg(question.references, ranges, coverage.relevant)),
        "retrieved_tokens": sum(h.tokens for h in hits),
        "over_budget": over,
    }


def by_document(chunks: Sequence[ChunkRecord]) -> dict[str, DocumentChunks]:
    """A column's chunks grouped by document, for each question's `coverage`."""
    ranges: dict[str, list[tuple[int, int]]] = {}
    for chunk in chunks:
        ranges.setdefault(chunk["source_id"], []).append((chunk["start"], chunk["end"]))
    return {source_id: DocumentChunks(source_id, spans) for source_id, spans in ranges.items()}


NO_CHUNK = Coverage(0.0, 0)


def coverage_of(question: PlacedQuestion, documents: dict[str, DocumentChunks]) -> Coverage:
    found = documents.get(question.source_id)
    return found.coverage(question.references) if found is not None else NO_CHUNK


class ColumnFigures:
    """What a column's figures need beside its ranking: its chunks by document (for each
    question's `coverage`), and each retrieved chunk's tokens, counted once, when first
    retrieved. The app keeps one per column and measures each new question with it."""

    def __init__(self, chunks: Sequence[ChunkRecord]) -> None:
        self.chunks = chunks
        self.documents = by_document(chunks)
        self.tokens: dict[int, int] = {}

    def hit(self, position: int, score: float) -> Hit:
        c = self.chunks[position]
        tokens = self.tokens.get(position)
        if tokens is None:
            tokens = self.tokens[position] = count_tokens(c["text"])
        return Hit(
            c["chunk_id"], c["source_id"], c["start"], c["end"], score, c.get("pages"), tokens
        )

    def results(
        self, questions: Sequence[PlacedQuestion], best: Iterable[Best], budget: Budget | None
    ) -> list[QuestionResult]:
        """Each question's figures, from its best chunks (`best_chunks`, in order)."""
        return [
            question_result(
                question,
                [self.hit(i, score) for i, score in found],
                coverage_of(question, self.documents),
                budget,
            )
            for question, found in zip(questions, best, strict=True)
        ]


def evaluate_chunks(
    chunks: Sequence[ChunkRecord],
    questions: Sequence[PlacedQuestion],
    search: Retriever,
    k: int,
    limits: Limits = DEFAULT_LIMITS,
    budget: Budget | None = None,
) -> list[QuestionResult]:
    """Each question's top k of `chunks` (one policy's whole index) and its figures,
    ranked a block of questions at a time (`best_chunks`)."""
    ranking = search.ranking([c["text"] for c in chunks], [q.question for q in questions])
    best = best_chunks(ranking, len(questions), len(chunks), k, limits)
    return ColumnFigures(chunks).results(questions, best, budget)


Measured = MutableMapping[tuple[object, ...], QuestionResult]  # by k, budget and question


def measure_column(
    chunks: Sequence[ChunkRecord],
    placed: Sequence[PlacedQuestion],
    index: Callable[[], ChunkIndex],
    figures: ColumnFigures,
    k: int,
    budget: Budget | None,
    measured: Measured,
    limits: Limits = DEFAULT_LIMITS,
) -> list[QuestionResult]:
    """Each question's figures in one column, as `evaluate_chunks` gives them, ranking
    only the questions `measured` lacks (against the retriever's `index` of the chunks,
    asked for only then) and keeping their results there: a question added to a set is
    the only one ranked again."""
    key = (k, None if budget is None else (budget["size"], budget["unit"]))
    missing = [q for q in placed if (*key, q) not in measured]
    if missing and chunks:
        ranking = index().ranking([q.question for q in missing])
        best = best_chunks(ranking, len(missing), len(chunks), k, limits)
        results = figures.results(missing, best, budget)
    else:
        results = [question_result(q, [], NO_CHUNK, budget) for q in missing]
    for question, result in zip(missing, results, strict=True):
        measured[(*key, question)] = result
    return [measured[(*key, q)] for q in placed]


def figure_of(result: QuestionResult, metric: Metric) -> float:
    """A question's figure on `metric`, a number (a hit is 1, a miss 0)."""
    value = result[metric]
    return float(value)


def summary_mean(policy: PolicyEvaluation, metric: Metric) -> float | None:
    """A column's mean on `metric`; None when it measured nothing."""
    value = policy["summary"][metric]
    return None if value is None else float(value)


def summarize(results: Sequence[QuestionResult], chunk_count: int, chunk_chars: int) -> Summary:
    """Means over the questions, and over the chunks (`chunk_chars` is their sum of
    lengths, a whole number: the same sum however it was added up); the population
    standard deviations (numpy's default); no intervals yet (`decide` adds them)."""
    import numpy as np

    def mean(values: list[float]) -> float:
        return _figure(sum(values) / len(values)) if values else 0.0

    columns = {metric: [figure_of(r, metric) for r in results] for metric in METRICS}
    std = {m: _figure(float(np.std(v))) if v else 0.0 for m, v in columns.items()}
    return {
        "measured": True,
        "recall": mean(columns["recall"]),
        "precision": mean(columns["precision"]),
        "iou": mean(columns["iou"]),
        "hit": mean(columns["hit"]),
        "precision_omega": mean(columns["precision_omega"]),
        "mrr": mean(columns["mrr"]),
        "ndcg": mean(columns["ndcg"]),
        "retrieved_tokens": mean([float(r["retrieved_tokens"]) for r in results]),
        "chunk_count": chunk_count,
        "mean_chunk_chars": _figure(chunk_chars / chunk_count) if chunk_count else 0.0,
        "std": {
            "recall": std["recall"],
            "precision": std["precision"],
            "iou": std["iou"],
            "hit": std["hit"],
            "precision_omega": std["precision_omega"],
            "mrr": std["mrr"],
            "ndcg": std["ndcg"],
        },
        "ci": None,
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
    judging: Judging | None = None,
) -> Evaluation:
    """Each column's index over all the documents (then each chunk file's, placed in
    them), built and validated, searched for every question; its top k chunks measured
    (those the budget keeps), then judged (`judged`). The embedding and hybrid retrievers
    embed with `embed` (default: WordLlama, not cached); an embedder that fails is
    `embedding_failed` naming the column."""
    judging = judging or Judging()
    if not 1 <= k <= MAX_K:
        raise ExplorerError(ErrorCode.USAGE, f"k must be from 1 to {MAX_K}, not {k}")
    judging.check()
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
            policies.append(
                _policy(
                    name, config, given, load.documents, placed, search, k, limits, judging.budget
                )
            )
    return evaluation_of(retriever_name, k, policies, judging, limits)


def _policy(
    name: str,
    config: ChunkConfig,
    given: GivenSpans | None,
    documents: Sequence[DocumentRecord],
    placed: Sequence[PlacedQuestion],
    search: Retriever,
    k: int,
    limits: Limits,
    budget: Budget | None,
) -> PolicyEvaluation:
    """One column's evaluation: its index built and validated, every question searched."""
    cut = readable(documents, config, name)
    if not cut.documents:  # its grammar reads none: not measured, its notes say why
        return not_measured(name, config.as_json(), cut.notes)
    index = validate_index(build_index(cut.documents, config, limits, given), limits)
    chunks = index["chunks"]
    try:
        results = evaluate_chunks(chunks, placed, search, k, limits, budget)
    except ExplorerError as error:
        if error.code not in EMBEDDER_FAILURES:
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
            "precision_omega": None,
            "mrr": None,
            "ndcg": None,
            "retrieved_tokens": None,
            "chunk_count": None,
            "mean_chunk_chars": None,
            "std": None,
            "ci": None,
        },
        "questions": [],
        "notes": list(notes),
    }


@dataclass(frozen=True)
class Judging:
    """How a run is measured and judged beyond k: the budget (None: the top k whole),
    the bootstrap's resamples (0: no intervals, verdicts or decision) and seed, and the
    metric the decision is made on."""

    budget: Budget | None = None
    resamples: int = DEFAULT_RESAMPLES
    seed: int = DEFAULT_SEED
    decide_by: Metric = "recall"

    def check(self) -> None:
        """Refuse bad values before any work (the command line parses them first)."""
        require_budget(self.budget)
        require_resamples(self.resamples)
        require_metric(self.decide_by)


def require_metric(name: str) -> Metric:
    """`name` as a metric, or `unknown_metric` listing them."""
    for metric in METRICS:
        if metric == name:
            return metric
    raise ExplorerError(
        ErrorCode.UNKNOWN_METRIC,
        f"{name[:40]!r} is not a metric; decide by one of {', '.join(METRICS)}",
    )


def judged(
    policies: Sequence[PolicyEvaluation], judging: Judging, limits: Limits
) -> tuple[list[PolicyEvaluation], list[Comparison], Decision | None]:
    """Each measured column's intervals, every pair of measured columns' verdicts, and
    the decision among them, from the questions' figures (`decide`); none without
    resamples or questions. A column not measured has no question: it keeps its place
    and its null figures, and is in no comparison and never chosen."""
    places = [n for n, policy in enumerate(policies) if policy["summary"]["measured"]]
    results = [policies[n]["questions"] for n in places]
    questions = len(results[0]) if results else 0
    if not judging.resamples or not questions:
        return list(policies), [], None
    figures = [[[figure_of(r, m) for r in rs] for m in METRICS] for rs in results]
    found = bootstrap(figures, judging.resamples, judging.seed, limits.scores_held, LEVEL)
    with_ci = list(policies)
    for n, per_metric in zip(places, found.per_column, strict=True):
        ci = {m: [low, high] for m, (low, high) in zip(METRICS, per_metric, strict=True)}
        summary: Summary = {**policies[n]["summary"], "ci": INTERVALS.validate_python(ci)}
        with_ci[n] = {**policies[n], "summary": summary}
    names = [policies[n]["name"] for n in places]
    comparisons: list[Comparison] = [
        {
            "a": names[v.a],
            "b": names[v.b],
            "metric": METRICS[v.metric],
            "difference": v.difference,
            "ci": [v.low, v.high],
            "verdict": v.winner,
        }
        for v in found.verdicts
    ]
    chosen = METRICS.index(judging.decide_by)
    tokens = [sum(r["retrieved_tokens"] for r in rs) / questions for rs in results]
    means = [sum(f[chosen]) / questions for f in figures]
    on_metric = [v for v in found.verdicts if v.metric == chosen]
    choice = decide(names, judging.decide_by, means, on_metric, tokens, questions, LEVEL)
    decision: Decision = {
        "metric": judging.decide_by,
        "best": [names[c] for c in choice.best],
        "choice": names[choice.choice],
        "why": choice.why,
    }
    return with_ci, comparisons, decision


def evaluation_of(
    retriever_name: RetrieverName,
    k: int,
    policies: Sequence[PolicyEvaluation],
    judging: Judging,
    limits: Limits = DEFAULT_LIMITS,
) -> Evaluation:
    """The evaluation file of one run, judged and checked against its declared shape
    (both engines build it here)."""
    judged_policies, comparisons, decision = judged(policies, judging, limits)
    evaluation: Evaluation = {
        "evaluation_version": EVALUATION_VERSION,
        "retriever": retriever_name,
        "k": k,
        "budget": judging.budget,
        "bootstrap": (
            {"resamples": judging.resamples, "seed": judging.seed, "level": LEVEL}
            if judging.resamples
            else None
        ),
        "policies": judged_policies,
        "comparisons": comparisons,
        "decision": decision,
    }
    return EVALUATION.validate_python(evaluation)


def with_embedder(evaluation: Evaluation, usage: EmbedderUsage) -> Evaluation:
    """The evaluation file, saying what embedded it."""
    return EVALUATION.validate_python({**evaluation, "embedder": usage})


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
    if config.semantic is not None:  # its curve's settings and embedder kept
        return [(f"{name}@{size}{suffix}", resized(config, size, tokens)) for size in sizes]
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
    defaults = {p.name: p.default_max_chars for p in OWN_POLICIES.values()} | {
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
    ours = name in OWN_POLICIES
    base = like or make_config(name, grammar=grammar if ours else DEFAULT_GRAMMAR)
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
