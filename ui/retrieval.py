"""The app's *Retrieval* tab: questions with known answers, searched in every column.

A scoreboard per column (recall, precision, IoU, hit rate, Precision_Ω, MRR, nDCG, with
95 % intervals, chunk count, mean size, tokens retrieved), the verdicts between columns
and the decision they lead to (with the chosen column's downloads for LangChain,
LlamaIndex or JSONL and its snippet, as *Export a column* offers them), one question's
ranked hits drawn in each column's view of
its document (why a policy wins), a form to add a question by quoting its answer, and a
sweep of one policy's size. Widgets, layout and caching only: `explorer.retrieval.evaluate`
measures (and `decide` judges), `explorer.view.render` draws.

The page's columns are those the Explore tab built (cached there); each column's
retriever index (BM25's postings, the chunks' vectors) is cached by its `index_id` and
the retriever, and each question's figures by column, retriever, k and budget: adding a
question ranks only that question, switching the retriever cuts no chunk again, and a
step of one column's size measures only that column again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache, partial
from pathlib import Path
from typing import Generic, TypeVar

import altair as alt
import numpy as np
import streamlit as st
from numpy.typing import NDArray

from explorer import (
    ChunkConfig,
    Column,
    ErrorCode,
    ExplorerError,
    LoadResult,
    Manifest,
    Settings,
    explore,
    parse_manifest,
)
from explorer.chunking.imports import ChunkFile
from explorer.chunking.index import ChunkRecord
from explorer.digests import digest, sha_bytes
from explorer.pipeline import ColumnRunner
from explorer.retrieval.evaluate import (
    BUDGET_K,
    DEFAULT_K,
    METRICS,
    Budget,
    ColumnFigures,
    Evaluation,
    Judging,
    Measured,
    Metric,
    QuestionResult,
    Summary,
    evaluate,
    evaluation_of,
    measure_column,
    policy_evaluation,
    size_sweep,
)
from explorer.retrieval.questions import (
    QuestionSet,
    new_question,
    parse_questions,
    place_questions,
)
from explorer.retrieval.retrievers import (
    BM25Index,
    ChunkIndex,
    Embed,
    EmbeddedChunks,
    FusedIndex,
    RetrieverName,
    embedded,
    retriever,
)
from explorer.retrieval.terms import bm25_terms
from explorer.view.display import count_words, markdown_literal, markdown_rows, plain_text
from explorer.view.render import RANKED_LEGEND, RANKED_STYLE, render_ranked_view

from .common import QUOTE_HELP, show_error
from .draft import draft_button
from .endpoints import WORDLLAMA, embedder_picker, embedding_for, picked_embedder
from .export import offer_export
from .work import kept_work, questions_download

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
# The bundled questions files, each written for the documents of its fixture's manifest.
BUNDLED = (
    (FIXTURES / "library" / "manifest.json", FIXTURES / "library" / "questions.json"),
    (FIXTURES / "markdown-docs" / "manifest.json", FIXTURES / "markdown-docs" / "questions.json"),
)
ADDED_ONLY, UPLOAD = "Only the questions added here", "Upload a questions file"
MAX_QUESTIONS_BYTES = 1024 * 1024  # an upload's size; the file's counts are bounded too
MAX_ADDED = 50  # questions one person adds to one set of documents
MAX_QUOTE_CHARS = 10_000
K_RANGE = (1, 20)
MAX_SWEEP_SIZES = 20  # each size is a whole index searched for every question
# A retriever scores every chunk for every question: (questions times chunks) floats per column
# (40 MB at this bound), so a visitor's upload cannot make the server fill its memory.
MAX_SEARCH_CELLS = 5_000_000
CACHE_TTL = "10m"  # as the page's other caches
RETRIEVER_HELP = (
    "bm25: the question's words (stemmed, stop words dropped) · embedding: cosine of "
    "WordLlama vectors · hybrid: both rankings fused by reciprocal rank"
)


T = TypeVar("T")


@dataclass(frozen=True)
class Bundled:
    label: str
    questions: QuestionSet


@cache
def _bundled(manifest_path: Path, questions_path: Path) -> tuple[dict[str, str], QuestionSet]:
    digests = {
        d["source_id"]: d["sha256"] for d in parse_manifest(manifest_path.read_bytes()).documents
    }
    return digests, parse_questions(questions_path.read_bytes())


def bundled_for(manifest: Manifest) -> list[Bundled]:
    """The bundled questions files written for these documents: every document they ask
    about is in `manifest` with the bytes the file was written for (the same SHA-256)."""
    ours = {d["source_id"]: d["sha256"] for d in manifest.documents}
    found = []
    for manifest_path, questions_path in BUNDLED:
        digests, questions = _bundled(manifest_path, questions_path)
        asked = {q.source_id for q in questions.questions}
        if all(ours.get(s) is not None and ours.get(s) == digests.get(s) for s in asked):
            label = f"{questions_path.relative_to(FIXTURES.parent)} ({len(questions.questions)})"
            found.append(Bundled(label, questions))
    return found


# -- cached core calls: keyed by digests ------------------------------------------------------


@st.cache_data(show_spinner="Searching every column…", max_entries=8, ttl=CACHE_TTL)
def evaluation_cached(
    key: str,
    questions: str,
    columns: str,
    retriever: RetrieverName,
    k: int,
    judged: str,
    embedder: str,
    _load: LoadResult,
    _questions: QuestionSet,
    _columns: Sequence[tuple[str, ChunkConfig]],
    _chunk_files: Sequence[ChunkFile],
    _judging: Judging,
) -> Evaluation:
    """One evaluation (the sweep's), keyed by the documents', the questions' and the
    columns' digests (the chunk files' among them), the budget and decision's, and the
    configured embedder's name (`ui.endpoints`)."""
    with embedding_for(embedder) as embed:
        return evaluate(
            _load,
            _questions,
            _columns,
            retriever,
            k,
            embed=embed,
            chunk_files=_chunk_files,
            judging=_judging,
        )


# Shared, not copied: each is built once per column content (its index_id) and read only.
@st.cache_resource(show_spinner=False, max_entries=24, ttl=CACHE_TTL)
def figures_cached(index_id: str, _column: Column) -> ColumnFigures:
    """What a column's figures need beside a ranking (its chunks by document, tokens)."""
    return ColumnFigures(_column.index["chunks"])


class TextMemo(Generic[T]):
    """What was computed of each text (its BM25 words, its vector), kept across columns and
    sizes: a size step changes few chunks' texts (heading-aware 280 to 300 on 1 MiB keeps
    9 in 10), so few are tokenized or embedded again. Emptied past `MEMO_CHARS` of text."""

    def __init__(self, compute: Callable[[list[str]], Sequence[T]]) -> None:
        self.compute = compute
        self.kept: dict[str, T] = {}
        self.chars = 0
        self.lock = threading.Lock()

    def __call__(self, texts: Sequence[str]) -> list[T]:
        with self.lock:
            missing = [text for text in dict.fromkeys(texts) if text not in self.kept]
            if self.chars + sum(map(len, missing)) > MEMO_CHARS:
                self.kept.clear()
                self.chars = 0
                missing = list(dict.fromkeys(texts))
            for text, value in zip(missing, self.compute(missing) if missing else [], strict=True):
                self.kept[text] = value
                self.chars += len(text)
            return [self.kept[text] for text in texts]


MEMO_CHARS = 64 * 1024 * 1024


@st.cache_resource(show_spinner=False, max_entries=1, ttl=CACHE_TTL)
def bm25_words() -> TextMemo[list[str]]:
    return TextMemo(bm25_terms)


@st.cache_resource(show_spinner=False, max_entries=1, ttl=CACHE_TTL)
def vectors() -> TextMemo[NDArray[np.float32]]:
    return TextMemo(lambda texts: list(embedded(texts)))


def embed_kept(texts: Sequence[str]) -> NDArray[np.float32]:
    """WordLlama's vectors, each text embedded once (`vectors`)."""
    kept = vectors()(texts)
    return np.stack(kept) if kept else embedded([])


@st.cache_resource(show_spinner="Indexing the columns for the retriever…", max_entries=24,
                   ttl=CACHE_TTL)  # fmt: skip
def retriever_index_cached(
    index_id: str, retriever_name: RetrieverName, _column: Column
) -> ChunkIndex:
    """The retriever's index of one column's chunks (BM25's postings, the vectors, or
    both fused), each chunk's words and vector computed once across columns."""
    texts = [c["text"] for c in _column.index["chunks"]]
    if retriever_name == "bm25":
        return BM25Index.of(bm25_words()(texts))
    if retriever_name == "embedding":
        return EmbeddedChunks(embed_kept, embed_kept(texts))
    words = retriever_index_cached(index_id, "bm25", _column)
    vectors = retriever_index_cached(index_id, "embedding", _column)
    assert isinstance(words, BM25Index) and isinstance(vectors, EmbeddedChunks)
    return FusedIndex(words, vectors)


@st.cache_resource(show_spinner=False, max_entries=48, ttl=CACHE_TTL)
def measured_cached(
    index_id: str, retriever_name: RetrieverName, embedder: str, k: int, budget: str
) -> Measured:
    """Each question's figures in one column, by retriever, embedder, k and budget, as
    measured."""
    return {}


def evaluate_columns(
    columns: Sequence[Column],
    load: LoadResult,
    questions: QuestionSet,
    retriever_name: RetrieverName,
    k: int,
    judging: Judging,
    embedder: str = WORDLLAMA,
) -> Evaluation:
    """The page's columns measured as `evaluate` measures them, ranking only the questions
    not yet measured in a column (`measure_column`), then judged. A configured endpoint's
    retriever index lives only as long as its client (`embedding_for`)."""
    texts = {d["source_id"]: d["text"] for d in load.documents}
    placed = place_questions(questions, texts)
    policies = []
    bundled = retriever_name == "bm25" or embedder == WORDLLAMA
    with embedding_for("" if bundled else embedder) as embed:
        for column in columns:
            index_id = column.result["index_id"]
            chunks = column.index["chunks"]
            index: Callable[[], ChunkIndex] = (
                partial(retriever_index_cached, index_id, retriever_name, column)
                if bundled
                else partial(_index_with, retriever_name, embed, chunks)
            )
            results = measure_column(
                chunks,
                placed,
                index,
                figures_cached(index_id, column),
                k,
                judging.budget,
                measured_cached(index_id, retriever_name, embedder, k, digest(judging.budget)),
            )
            chars = sum(c["end"] - c["start"] for c in chunks)
            policies.append(
                policy_evaluation(
                    column.name, column.index["config"], index_id, results, len(chunks), chars
                )
            )
    return evaluation_of(retriever_name, k, policies, judging)


def _index_with(
    retriever_name: RetrieverName, embed: Embed | None, chunks: Sequence[ChunkRecord]
) -> ChunkIndex:
    return retriever(retriever_name, embed).index([c["text"] for c in chunks])


@st.cache_data(show_spinner="Drawing…", max_entries=8, ttl=CACHE_TTL)
def ranked_view_cached(
    index_id: str, result: str, name: str, _text: str, _column: Column, _result: QuestionResult
) -> str:
    return render_ranked_view(_text, name, _column.result["config"], _column.index, _result)


def columns_digest(
    columns: Sequence[tuple[str, ChunkConfig]], chunk_files: Sequence[ChunkFile] = ()
) -> str:
    files = [[f.name, sha_bytes(f.data), f.skip_failed] for f in chunk_files]
    return digest([[[name, config.as_json()] for name, config in columns], files])


def evaluate_here(
    key: str,
    load: LoadResult,
    questions: QuestionSet,
    columns: Sequence[tuple[str, ChunkConfig]],
    retriever: RetrieverName,
    k: int,
    judging: Judging,
    chunk_files: Sequence[ChunkFile] = (),
) -> Evaluation:
    """Every column measured: ours, the libraries', then the imported chunk files."""
    asked = digest(questions.model_dump(mode="json", exclude_none=True))
    shown = columns_digest(columns, chunk_files)
    judged = digest([judging.budget, judging.resamples, judging.seed, judging.decide_by])
    embedder = picked_embedder() if retriever != "bm25" else WORDLLAMA
    return evaluation_cached(
        key,
        asked,
        shown,
        retriever,
        k,
        judged,
        embedder,
        load,
        questions,
        columns,
        chunk_files,
        judging,
    )


def require_search_bound(questions: QuestionSet, chunk_count: int, what: str) -> None:
    """Refuse a search whose score matrix would pass `MAX_SEARCH_CELLS`."""
    cells = len(questions.questions) * chunk_count
    if cells > MAX_SEARCH_CELLS:
        raise ExplorerError(
            ErrorCode.TOO_MANY_CHUNKS,
            f"{len(questions.questions):,} questions times {chunk_count:,} chunks ({what}) is "
            f"{cells:,} scores; the app computes at most {MAX_SEARCH_CELLS:,} per column: use "
            "fewer questions or larger chunks, or `python -m explorer evaluate`",
        )


# -- the questions ---------------------------------------------------------------------------


# The questions file uploaded, kept apart from its widget: Streamlit drops a widget's
# state in a run that does not draw it, and a closed Retrieval tab is not drawn.
UPLOADED = "questions_uploaded"
# The sources of questions offered last: the choice among them is kept while the tab is
# closed (the widget's state persists), and starts anew when other documents offer others.
OFFERED = "questions_offered"


def keep_upload() -> None:
    """The uploader's callback: a file uploaded, or removed, is what the session keeps."""
    st.session_state[UPLOADED] = st.session_state.get("questions_upload")


def chosen_file(manifest: Manifest) -> QuestionSet | None:
    """The questions file picked (a bundled one, or an upload), or None."""
    bundled = bundled_for(manifest)
    options = [b.label for b in bundled] + [ADDED_ONLY, UPLOAD]
    if st.session_state.get(OFFERED) != options:  # other documents: their own file first
        st.session_state.pop("questions_source", None)
        st.session_state.pop(UPLOADED, None)
        st.session_state[OFFERED] = options
    choice = st.radio("Questions", options, key="questions_source", persist_state="session")
    if choice == ADDED_ONLY:
        return None
    if choice != UPLOAD:
        return next(b.questions for b in bundled if b.label == choice)
    st.file_uploader(
        "questions.json (questions_version 1)",
        type=["json"],
        key="questions_upload",
        on_change=keep_upload,
    )
    upload = st.session_state.get(UPLOADED)
    if upload is None:
        return None
    if st.session_state.get("questions_upload") is None:  # the tab was closed since
        st.caption(f"Questions from {markdown_literal(upload.name)}, uploaded before.")
    if upload.size > MAX_QUESTIONS_BYTES:
        raise ExplorerError(
            ErrorCode.INVALID_QUESTIONS,
            f"the questions file is {upload.size:,} bytes; at most {MAX_QUESTIONS_BYTES:,} "
            "are read",
        )
    data = upload.getvalue()
    return questions_parsed(sha_bytes(data), data)


@st.cache_data(max_entries=8, ttl=CACHE_TTL)
def questions_parsed(sha256: str, _data: bytes) -> QuestionSet:
    """An uploaded questions file parsed once per content, not at every rerun."""
    return parse_questions(_data)


def with_added(file: QuestionSet | None, added: Sequence[dict[str, object]]) -> QuestionSet | None:
    """The file's questions, then those added here (an added one whose id the file already
    uses is left out)."""
    listed = [q.model_dump(mode="json", exclude_none=True) for q in file.questions] if file else []
    taken = {q["id"] for q in listed}
    questions = listed + [q for q in added if q["id"] not in taken]
    if not questions:
        return None
    return QuestionSet.model_validate({"questions_version": 1, "questions": questions})


# The form's text boxes, emptied once their question is added (a refused one keeps them).
FORM_KEYS = ("new_question_text", "new_question_quote", "new_question_quote_2")


def question_form(
    load: LoadResult, added: list[dict[str, object]], taken: Sequence[str], source_id: str
) -> None:
    """Add a question by typing it and quoting its answer; placed (or refused) at once."""
    texts = {d["source_id"]: d["text"] for d in load.documents}
    source_ids = list(texts)
    just_added = st.session_state.pop("question_added", None)
    if just_added:  # the next question starts empty (assigned, so the browser empties them)
        clear_form()
        st.success(f"Added {markdown_literal(str(just_added))}: it is in the scoreboard.")
    with st.form("add_question", border=True):
        asked = st.text_input(
            "Question",
            max_chars=MAX_QUOTE_CHARS,
            key="new_question_text",
            persist_state="session",
            placeholder="How long is the refund window?",
        )
        where = st.selectbox(
            "Its answer is in",
            source_ids,
            index=source_ids.index(source_id) if source_id in source_ids else 0,
            format_func=plain_text,
            key="new_question_doc",
            persist_state="session",
        )
        first = st.text_area(
            "Answer: quote it from the document (the quote must occur once)",
            max_chars=MAX_QUOTE_CHARS,
            key="new_question_quote",
            persist_state="session",
            height=80,
            help=QUOTE_HELP,
        )
        second = st.text_area(
            "A second quote, e.g. the qualifier that belongs with it (optional)",
            max_chars=MAX_QUOTE_CHARS,
            key="new_question_quote_2",
            persist_state="session",
            height=68,
            help=QUOTE_HELP,
        )
        if not st.form_submit_button("Add question"):
            return
    try:
        if len(added) >= MAX_ADDED:
            raise ExplorerError(
                ErrorCode.USAGE, f"at most {MAX_ADDED} questions can be added here; clear them"
            )
        quotes = [quote for quote in (first, second) if quote]
        made = new_question(asked, where, quotes, texts[where], taken)
    except ExplorerError as error:
        show_error(error)
        return
    added.append(made.model_dump(mode="json", exclude_none=True))
    st.session_state["question_next"] = made.id  # chosen in the next run
    st.session_state["question_added"] = made.id
    st.rerun()


def clear_form() -> None:
    """Empty the form's text boxes (before they are drawn in a run, or in a callback)."""
    for key in FORM_KEYS:
        st.session_state[key] = ""


def clear_added(added: list[dict[str, object]]) -> None:
    """The clear button's callback: the questions added here and the form go."""
    added.clear()
    clear_form()


# -- what the tab shows ---------------------------------------------------------------------


NOT_MEASURED = "not measured"
FEW_QUESTIONS = 30  # fewer than this behind a verdict: the tab warns
METRIC_LABELS: dict[Metric, str] = {
    "recall": "recall",
    "precision": "precision",
    "iou": "IoU",
    "hit": "hit rate",
    "precision_omega": "Precision Ω",
    "mrr": "MRR",
    "ndcg": "nDCG",
}
BUDGET_UNITS = {"characters": "chars", "tokens": "tokens"}
MAX_BUDGET = 1_000_000
DECIDE_HELP = (
    "The decision takes the columns no other column beats on this metric (a 95 % bootstrap "
    "interval of the difference that excludes 0), then the one of them that retrieves the "
    "fewest tokens."
)
BUDGET_HELP = (
    "Equal context: each question keeps its best chunks (of its top 100) while their sizes "
    "add up to at most this many characters or cl100k_base tokens; the first is always "
    "kept. 0: no budget, the top k."
)


def _shown(value: float | None, spec: str) -> str:
    """A figure as the scoreboard shows it; a dash for a column not measured."""
    return "—" if value is None else format(value, spec)


def _interval(summary: Summary, metric: Metric) -> str:
    """A mean's 95 % interval as shown: none without a bootstrap, a dash when the column
    measured nothing."""
    ci = summary["ci"]
    if ci is None:
        return "none" if summary["measured"] else "—"
    low, high = ci[metric]
    return f"{low:.3f} to {high:.3f}"


def scoreboard_rows(evaluation: Evaluation) -> list[dict[str, str]]:
    """One row per column: its size, the means over the questions (recall's and the
    decision metric's 95 % intervals beside them), and the tokens retrieved, as shown; a
    column that measured nothing says so, and why, in its Recall cell, never 0."""
    decision = evaluation["decision"]
    metric: Metric = decision["metric"] if decision is not None else "recall"
    rows = []
    for policy in evaluation["policies"]:
        s = policy["summary"]
        row = {
            "Column": policy["name"],
            "Chunks": _shown(s["chunk_count"], ","),
            "Mean size (chars)": _shown(s["mean_chunk_chars"], ",.0f"),
            "Recall": _shown(s["recall"], ".3f"),
            "Recall 95 %": _interval(s, "recall"),
            "Precision": _shown(s["precision"], ".3f"),
            "IoU": _shown(s["iou"], ".3f"),
            "Hit rate": _shown(s["hit"], ".3f"),
            "Precision Ω": _shown(s["precision_omega"], ".3f"),
            "MRR": _shown(s["mrr"], ".3f"),
            "nDCG": _shown(s["ndcg"], ".3f"),
            "Tokens retrieved": _shown(s["retrieved_tokens"], ",.0f"),
        }
        if not s["measured"]:
            row["Recall"] = f"{NOT_MEASURED}: {'; '.join(policy.get('notes', []))}"
        if metric != "recall":
            row[f"{METRIC_LABELS[metric]} 95 %"] = _interval(s, metric)
        rows.append(row)
    return rows


def decision_line(evaluation: Evaluation) -> str:
    """The decision, in Markdown: the choice and the sentence that says why."""
    decision = evaluation["decision"]
    if decision is None:
        return "No decision: no question was measured."
    return (
        f":material/check_circle: **Choose {markdown_literal(decision['choice'])}** "
        f"(by {METRIC_LABELS[decision['metric']]}). {markdown_literal(decision['why'])}"
    )


def verdict_rows(evaluation: Evaluation, metric: Metric) -> list[dict[str, str]]:
    """Every pair's verdict on `metric`: the difference, its interval, the better one."""
    return [
        {
            "Column a": c["a"],
            "Column b": c["b"],
            "a minus b": f"{c['difference']:+.3f}",
            "95 % interval": f"{c['ci'][0]:+.3f} to {c['ci'][1]:+.3f}",
            "Better": {"a": c["a"], "b": c["b"], "tie": "tie: the questions cannot tell"}[
                c["verdict"]
            ],
        }
        for c in evaluation["comparisons"]
        if c["metric"] == metric
    ]


def few_questions_warning(count: int) -> str | None:
    """Words for a verdict that stands on fewer than `FEW_QUESTIONS` questions."""
    if count >= FEW_QUESTIONS:
        return None
    return (
        f"Only {count_words(count, 'question')} stand behind these verdicts. With fewer than "
        f"{FEW_QUESTIONS}, a real difference often shows as a tie, and a lead of 0.05 is "
        "often noise: add questions before trusting a small difference."
    )


def judging_controls() -> Judging:
    """The budget (a size and its unit) and the metric to decide by."""
    places = st.columns([1, 1, 1])
    size = places[0].number_input(
        "Context budget per question (0: none)",
        0,
        MAX_BUDGET,
        0,
        100,
        key="retrieval_budget",
        persist_state="session",
        help=BUDGET_HELP,
    )
    unit = places[1].radio(
        "Budget in",
        list(BUDGET_UNITS),
        key="retrieval_budget_unit",
        persist_state="session",
        horizontal=True,
    )
    metric = places[2].selectbox(
        "Decide by",
        METRICS,
        format_func=lambda m: METRIC_LABELS[m],
        key="retrieval_decide_by",
        persist_state="session",
        help=DECIDE_HELP,
    )
    budget: Budget | None = None
    if size:
        budget = {"size": int(size), "unit": "tokens" if unit == "tokens" else "chars"}
    return Judging(budget=budget, decide_by=metric or "recall")


def chosen_column(evaluation: Evaluation, columns: Sequence[Column]) -> Column | None:
    """The page's column the decision chose: the one of its name whose index the
    evaluation measured (None without a decision, or when the page no longer shows it)."""
    decision = evaluation["decision"]
    if decision is None:
        return None
    measured = {p["name"]: p["index_id"] for p in evaluation["policies"]}
    return next(
        (
            column
            for column in columns
            if column.name == decision["choice"]
            and column.result["index_id"] == measured.get(column.name)
        ),
        None,
    )


def show_judgement(evaluation: Evaluation, questions: int, columns: Sequence[Column]) -> None:
    """The decision and, under it, the chosen column's downloads and snippet; the warning
    for few questions, and the verdicts on its metric."""
    st.markdown(decision_line(evaluation))
    chosen = chosen_column(evaluation, columns)
    if chosen is not None:
        with st.expander(
            f"Ship {markdown_literal(chosen.name)}: its chunks for LangChain, LlamaIndex or JSONL, "
            "and the code that cuts a text as it does",
            key="choice_export_panel",
        ):
            offer_export(chosen, "choice")
    warning = few_questions_warning(questions)
    if warning is not None and evaluation["comparisons"]:
        st.warning(warning, icon=":material/warning:")
    decision = evaluation["decision"]
    if decision is None or not evaluation["comparisons"]:
        return
    with st.expander(f"Verdicts on {METRIC_LABELS[decision['metric']]}, pair by pair"):
        st.table(markdown_rows(verdict_rows(evaluation, decision["metric"])))


def show_question(
    evaluation: Evaluation,
    questions: QuestionSet,
    columns: Sequence[Column],
    texts: dict[str, str],
) -> str:
    """Pick a question: its answer, then each column's view with the ranked hits.
    Returns the question's document."""
    measured = [p for p in evaluation["policies"] if p["summary"]["measured"]]
    first = measured[0]["questions"] if measured else []
    ids = [q["id"] for q in first]
    if not ids:
        st.info("No column was measured, so there is no hit to show.")
        return next(iter(texts))
    pending = st.session_state.pop("question_next", None)
    if pending in ids:
        st.session_state["question"] = pending
    if st.session_state.get("question") not in ids:
        st.session_state["question"] = ids[0]
    asked = {q.id: q.question for q in questions.questions}
    picked = st.selectbox(
        "Question",
        ids,
        format_func=lambda i: plain_text(f"{i}: {asked[i]}"[:160]),
        key="question",
        persist_state="session",
    )
    position = ids.index(picked)
    result = first[position]
    source_id = result["source_id"]
    text = texts[source_id]
    st.markdown(f"**{markdown_literal(asked[picked])}** — in {markdown_literal(source_id)}")
    for number, reference in enumerate(result["references"], 1):
        start, end = reference["start"], reference["end"]
        st.caption(f"Answer {number} of {len(result['references'])}: [{start:,}, {end:,})")
        st.code(text[start:end], language=None, wrap_lines=True)
    st.html(RANKED_LEGEND)
    shown = {c.name: c for c in columns}
    places = st.columns(len(evaluation["policies"]))
    for place, policy in zip(places, evaluation["policies"], strict=True):
        column = shown.get(policy["name"])
        with place:
            if not policy["summary"]["measured"]:
                st.info(f"{markdown_literal(policy['name'])}: {NOT_MEASURED}.")
                continue
            own = policy["questions"][position]
            if column is None or column.result["index_id"] != policy["index_id"]:
                st.warning(f"{markdown_literal(policy['name'])} is not shown on this page.")
                continue
            st.html(
                ranked_view_cached(
                    policy["index_id"], digest(own), policy["name"], text, column, own
                )
            )
    return source_id


SWEEP_FIGURES = {"recall": "#1565c0", "IoU": "#ef6c00", "hit rate": "#2e7d32"}
UNITS = {"characters": "max_chars", "tokens": "max_tokens"}
MAX_SWEEP_SIZE = 100_000  # as a live column's size field


def sweep(
    key: str,
    load: LoadResult,
    questions: QuestionSet,
    retriever: RetrieverName,
    k: int,
    settings: Settings,
    judging: Judging,
) -> None:
    """Recall, IoU and hit rate against the size of one sized column of the page (cut as
    it is cut: policy, grammar, overlap, a library's parameters), in characters or in
    tokens, on demand."""
    sized = {
        name: config
        for name, config in zip(settings.config_names, settings.configs, strict=True)
        if config.sized
    }
    if not sized:
        st.caption("No column on this page has a size to sweep.")
        return
    places = st.columns([2, 1, 1, 1, 1])
    name = places[0].selectbox("Column", list(sized), key="sweep_policy", persist_state="session")
    unit = places[1].radio("Size in", list(UNITS), key="sweep_unit", persist_state="session")
    low = places[2].number_input(
        "From", 1, MAX_SWEEP_SIZE, 100, 50, key="sweep_from", persist_state="session"
    )
    high = places[3].number_input(
        "To", 1, MAX_SWEEP_SIZE, 1000, 50, key="sweep_to", persist_state="session"
    )
    step = places[4].number_input(
        "Step", 1, MAX_SWEEP_SIZE, 100, 50, key="sweep_step", persist_state="session"
    )
    if name is None or unit is None:  # a selectbox and a radio with options have a value
        return
    config = sized[name]
    spec = digest([name, config.as_json(), unit, low, high, step])
    if st.button("Run the sweep", key="sweep_run"):
        st.session_state["sweep_spec"] = spec
    if st.session_state.get("sweep_spec") != spec:
        st.caption(
            f"Each size is a whole index searched for every question: at most "
            f"{MAX_SWEEP_SIZES} sizes, computed when you press the button."
        )
        return
    try:
        if high >= low and (high - low) // step >= MAX_SWEEP_SIZES:
            raise ExplorerError(
                ErrorCode.USAGE,
                f"the sweep from {low} to {high} by {step} has {(high - low) // step + 1} "
                f"sizes; at most {MAX_SWEEP_SIZES} here (the command line's --sweep takes 100)",
            )
        sizes = range(low, high + 1, step)
        columns = size_sweep(config.strategy, config, sizes, tokens=unit == "tokens")
        # The smallest size has the most chunks: at most the text's length over the size
        # (a token holds at least one character).
        characters = sum(len(d["text"]) for d in load.documents)
        require_search_bound(questions, characters // max(low, 1), f"{name} at {low}")
        evaluation = evaluate_here(key, load, questions, columns, retriever, k, judging)
    except ExplorerError as error:
        show_error(error)
        return
    axis = f"{config.strategy} {UNITS[unit]}"
    st.altair_chart(sweep_chart(evaluation, axis), width="stretch")
    st.markdown(decision_line(evaluation))
    with st.expander("The sweep's figures", expanded=False):
        st.table(markdown_rows(scoreboard_rows(evaluation)))


def sweep_chart(evaluation: Evaluation, axis: str) -> alt.Chart:
    """One line per figure, over the sizes."""
    points = [
        {"size": p["config"].get("max_tokens") or p["config"]["max_chars"], "figure": f, "value": v}
        for p in evaluation["policies"]
        for s in [p["summary"]]
        for f, v in (("recall", s["recall"]), ("IoU", s["iou"]), ("hit rate", s["hit"]))
        if v is not None  # a size not measured has no point
    ]
    chart: alt.Chart = (
        alt.Chart({"values": points})
        .mark_line(point=True)
        .encode(
            x=alt.X("size:Q", title=axis),
            y=alt.Y("value:Q", title="mean over the questions", scale=alt.Scale(domain=[0, 1])),
            color=alt.Color(
                "figure:N",
                title=None,
                scale=alt.Scale(domain=list(SWEEP_FIGURES), range=list(SWEEP_FIGURES.values())),
            ),
            tooltip=[
                alt.Tooltip("size:Q", title=axis),
                "figure:N",
                alt.Tooltip("value:Q", format=".3f"),
            ],
        )
        .properties(height=300)
    )
    return chart


def reading(k: int, budget: Budget | None) -> str:
    """What each question reads, in words."""
    if budget is None:
        return f"the top {k} chunks"
    unit = "characters" if budget["unit"] == "chars" else "tokens"
    return (
        f"the best chunks that fit in {budget['size']:,} {unit} (of the top {BUDGET_K}; "
        "the first always kept)"
    )


def retrieval_page(
    key: str, manifest: Manifest, load: LoadResult, settings: Settings, run: ColumnRunner
) -> None:
    """The tab: pick questions, k and a retriever; the scoreboard, one question's ranked
    hits per column, a form to add a question, and a sweep of a size."""
    st.html(RANKED_STYLE)
    if not load.documents:
        st.info("No document loaded, so there is nothing to search.")
        return
    texts = {d["source_id"]: d["text"] for d in load.documents}
    added = kept_work(key, manifest).questions
    places = st.columns([3, 2, 2])
    with places[0]:
        try:
            file = chosen_file(manifest)
        except ExplorerError as error:
            show_error(error)
            file = None
    k = places[1].slider(
        "k: chunks retrieved per question",
        *K_RANGE,
        DEFAULT_K,
        key="retrieval_k",
        persist_state="session",
    )
    retrievers: list[RetrieverName] = ["bm25", "embedding", "hybrid"]
    retriever = places[2].radio(
        "Retriever", retrievers, key="retriever", persist_state="session", help=RETRIEVER_HELP
    )
    if retriever is None:  # a radio with options always has a value
        retriever = retrievers[0]
    embedder_picker(places[2])
    judging = judging_controls()
    depth = BUDGET_K if judging.budget is not None else k  # a budget walks the top 100
    questions = with_added(file, added)
    source_id = next(iter(texts))
    evaluation: Evaluation | None = None
    if questions is None:
        st.markdown(
            ":material/help: **No questions yet**: pick or upload a questions file, or add a "
            "question below by typing it and quoting its answer from a document."
        )
    # The form to add a question stays here, above the scoreboard, and open once opened
    # (its key keeps it one panel while its count changes), however long the page grows.
    adding = st.container()
    if questions is not None:
        try:
            shown = explore(load, manifest.span_checks, settings, run=run).columns
            largest = max(shown, key=lambda c: c.result["chunk_count"])
            require_search_bound(questions, largest.result["chunk_count"], largest.name)
            embedder = picked_embedder() if retriever != "bm25" else WORDLLAMA
            evaluation = evaluate_columns(
                shown, load, questions, retriever, depth, judging, embedder
            )
        except ExplorerError as error:
            show_error(error)
            evaluation = None  # refused: no scoreboard, no sweep
        if evaluation is not None:
            st.subheader("Retrieval scoreboard")
            st.caption(
                f"{count_words(len(questions.questions), 'question')}, "
                f"{reading(k, judging.budget)} of each column's whole index by {retriever}. "
                "Recall: how much of each answer was retrieved; precision: how much of what "
                "was retrieved is answer; IoU: both at once; hit rate: the share of questions "
                "whose whole answer sits in one retrieved chunk; Precision Ω: the precision "
                "the chunking allows when every chunk touching the answer is retrieved; MRR "
                "and nDCG: how high the first and every answer-holding chunk ranks. "
                "95 %: the interval of the mean, resampling the questions."
            )
            st.table(markdown_rows(scoreboard_rows(evaluation)))
            show_judgement(evaluation, len(questions.questions), shown)
            st.subheader("Why: one question's hits in each column")
            source_id = show_question(evaluation, questions, shown, texts)
    with (
        adding,
        st.expander(
            f"Add a question ({len(added)} of {MAX_ADDED} added here)",
            expanded=questions is None,
            key="add_question_panel",
        ),
    ):
        taken = [q.id for q in questions.questions] if questions else []
        try:
            draft_button(load, explore(load, manifest.span_checks, settings, run=run).columns)
        except ExplorerError as error:  # shown on the first tab: named here, not repeated
            st.caption(
                f"No passage to draft: the page's columns were refused ({error.code.value})."
            )
        question_form(load, added, taken, source_id)
        if added:
            st.button(
                "Clear the questions added here",
                key="clear_questions",
                on_click=clear_added,
                args=(added,),
            )
    if questions is not None:
        questions_download(questions)
    if questions is not None and evaluation is not None:
        st.subheader("Sweep a size")
        sweep(key, load, questions, retriever, depth, settings, judging)
