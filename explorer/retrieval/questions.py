"""Questions whose answers are known character ranges: the questions file
(`questions_version` 1, or chunking_evaluation's `questions_df.csv`), and each question
placed in its document's normalized text."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import AfterValidator, ConfigDict, Field, ValidationError, model_validator

from ..checking.checks import resolve_span
from ..digests import digest
from ..errors import ErrorCode, ExplorerError
from ..jsonio import dump_json, parse_json, require_counts
from ..models import (
    Count,
    NoNullModel,
    PlainText,
    StrictModel,
    VersionOne,
    no_control,
    validated,
    without_nulls,
)
from ..sources.manifest import ManifestSpan
from .metrics import Range

MAX_QUESTIONS = 10_000
MAX_REFERENCES = 100
MAX_QUESTION_CHARS = 10_000


def _reference_schema(schema: dict[str, Any]) -> None:
    """A quote, or start and end, or all three: the schema says so too."""
    without_nulls(schema)
    schema["anyOf"] = [{"required": ["quote"]}, {"required": ["start", "end"]}]
    schema["dependentRequired"] = {"start": ["end"], "end": ["start"]}


class Reference(NoNullModel):
    """Where a question's answer is: a quote that occurs exactly once in the normalized
    document, or `[start, end)` in its characters, or both, when the quote is the text
    at those offsets (as chunking_evaluation's references are)."""

    model_config = ConfigDict(json_schema_extra=_reference_schema)

    quote: str | None = Field(default=None, min_length=1, max_length=MAX_QUESTION_CHARS)
    start: int | None = None
    end: int | None = None

    @model_validator(mode="after")
    def _a_place(self) -> Reference:
        if (self.start is None) != (self.end is None):
            raise ValueError("give both start and end, or neither")
        if self.quote is None and self.start is None:
            raise ValueError("give a quote, or start and end, or all three")
        return self

    def as_span(self, label: str) -> ManifestSpan:
        """Where to look: the offsets when given, else the quote."""
        if self.start is not None:
            return ManifestSpan(label=label, start=self.start, end=self.end)
        return ManifestSpan(label=label, quote=self.quote)


# A question's text; empty in a drafted file until someone (or a generator) writes it.
QuestionText = Annotated[str, AfterValidator(no_control), Field(max_length=MAX_QUESTION_CHARS)]


class Question(StrictModel):
    id: Annotated[PlainText, Field(max_length=200)]
    question: QuestionText
    source_id: PlainText
    references: list[Reference] = Field(min_length=1, max_length=MAX_REFERENCES)


class LeftOut(StrictModel):
    """A passage drafted from whose question was left out, and why (the last answer's
    fault)."""

    source_id: PlainText
    start: Count
    end: Count
    reason: Annotated[PlainText, Field(max_length=MAX_QUESTION_CHARS)]


class DraftReport(StrictModel):
    """How a questions file was drafted by a model behind an API (`questions draft
    --generator openai:MODEL`): questions `asked` (one a passage), `kept` and
    `left_out` (each re-asked twice, then left out), and why each was left out."""

    generator: PlainText
    asked: Count
    kept: Count
    left_out: Count
    reasons: list[LeftOut] = Field(max_length=MAX_QUESTIONS)


class QuestionSet(NoNullModel):
    """A questions file (`questions_version` 1); a drafted one may say how (`draft`)."""

    questions_version: VersionOne
    questions: list[Question] = Field(min_length=1, max_length=MAX_QUESTIONS)
    draft: DraftReport | None = None

    @model_validator(mode="after")
    def _unique_ids(self) -> QuestionSet:
        seen: set[str] = set()
        for question in self.questions:
            if question.id in seen:
                raise ValueError(f"duplicate question id {question.id!r}")
            seen.add(question.id)
        return self


def parse_questions(data: bytes) -> QuestionSet:
    """Bytes of a questions file to a checked `QuestionSet`, or `invalid_questions`: JSON
    (`questions_version` 1) when it opens with `{` or `[` (or is empty), else
    chunking_evaluation's CSV."""
    if data.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] in (b"", b"{", b"["):
        require_counts(
            data,
            ErrorCode.INVALID_QUESTIONS,
            "questions file",
            MAX_QUESTIONS,
            lambda: ExplorerError(
                ErrorCode.INVALID_QUESTIONS,
                f"the questions file holds more than {MAX_QUESTIONS:,} questions",
            ),
            inner=True,
        )
        raw = parse_json(data, ErrorCode.INVALID_QUESTIONS, "questions file")
        return validated(QuestionSet.model_validate, raw, ErrorCode.INVALID_QUESTIONS)
    return parse_questions_csv(data)


CSV_COLUMNS = ("question", "references", "corpus_id")


def parse_questions_csv(data: bytes) -> QuestionSet:
    """chunking_evaluation's `questions_df.csv`: a row per question, with `question`,
    `references` (a JSON list of `{content, start_index, end_index}`) and `corpus_id`
    (read as the source_id); other columns (pandas' index) are ignored. Each reference
    becomes a quote at its offsets. A bad row is refused by its line number."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise _csv_refusal(f"is not UTF-8 (byte {error.start})") from None
    reader = csv.DictReader(io.StringIO(text, newline=""), strict=True)
    try:
        header = reader.fieldnames or []
    except csv.Error as error:
        raise _csv_refusal(f"line 1: {error}") from None
    missing = [name for name in CSV_COLUMNS if name not in header]
    if missing:
        raise _csv_refusal(
            "is neither JSON (a questions file opens with '{') nor a CSV with the columns "
            f"{', '.join(CSV_COLUMNS)} (missing: {', '.join(missing)})"
        )
    questions: list[Question] = []
    taken: set[str] = set()
    last: dict[str, int] = {}  # the number each id last took, so a repeat starts past it
    for line, row in _csv_rows(reader):
        if len(questions) == MAX_QUESTIONS:
            raise _csv_refusal(f"line {line}: more than {MAX_QUESTIONS:,} questions")
        question = _csv_question(line, row)
        base = free = question.id
        number = last.get(base, 1)
        while free in taken:
            number += 1
            free = f"{base}-{number}"
        last[base] = number
        if free != base:
            question = question.model_copy(update={"id": free})
        taken.add(free)
        questions.append(question)
    if not questions:
        raise _csv_refusal("has a header but no question")
    return QuestionSet(questions_version=1, questions=questions)


def _csv_rows(reader: csv.DictReader[str]) -> Iterator[tuple[int, dict[str, str]]]:
    """Each row with the line it starts on (a quoted field may hold line breaks)."""
    line = reader.line_num + 1
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            raise _csv_refusal(f"line {line}: {error}") from None
        yield line, row
        line = reader.line_num + 1


CSV_REFERENCE_KEYS = {"content", "start_index", "end_index"}


def _csv_question(line: int, row: dict[str, str]) -> Question:
    if None in row or any(row.get(name) is None for name in CSV_COLUMNS):
        raise _csv_refusal(f"line {line}: the row does not have one value per column")
    try:
        references = parse_json(
            row["references"].encode(), ErrorCode.INVALID_QUESTIONS, "references"
        )
    except ExplorerError as error:
        raise _csv_refusal(f"line {line}: references: {error.detail}") from None
    if not isinstance(references, list) or not all(
        isinstance(r, dict) and set(r) == CSV_REFERENCE_KEYS for r in references
    ):
        raise _csv_refusal(
            f"line {line}: references must be a JSON list of "
            "{content, start_index, end_index} objects"
        )
    source_id = row["corpus_id"]
    question = " ".join(row["question"].split())  # one line, as a questions file holds it
    made = {
        "id": "q-" + digest({"question": question, "source_id": source_id})[:12],
        "question": question,
        "source_id": source_id,
        "references": [
            {"quote": r["content"], "start": r["start_index"], "end": r["end_index"]}
            for r in references
        ],
    }
    try:
        return Question.model_validate(made)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise _csv_refusal(f"line {line}: {where}: {first['msg']}") from None


def _csv_refusal(detail: str) -> ExplorerError:
    return ExplorerError(ErrorCode.INVALID_QUESTIONS, f"questions CSV {detail}")


def require_written(questions: QuestionSet) -> None:
    """A drafted file is measured only once every question has its text."""
    blank = [q.id for q in questions.questions if not q.question.strip()]
    if blank:
        shown = ", ".join(repr(i) for i in blank[:5]) + (" …" if len(blank) > 5 else "")
        raise ExplorerError(
            ErrorCode.INVALID_QUESTIONS,
            f"{len(blank)} question(s) have no text yet ({shown}): write each one's "
            "`question`, or draft them with --generator",
        )


def questions_json(questions: QuestionSet) -> str:
    """A questions file that `parse_questions` reads back: only the keys given."""
    return dump_json(questions.model_dump(mode="json", exclude_none=True))


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
    (`span_out_of_range`), and a quote given with offsets must be the text there
    (`span_quote_not_found`). A refusal names the question by its id, or as `named`."""
    ranges = []
    for number, reference in enumerate(question.references, 1):
        where = f"{named or f'question {question.id!r}'}, reference {number}"
        span = resolve_span(text, reference.as_span(f"reference {number}"), where)
        quoted = reference.quote
        if (
            reference.start is not None
            and quoted is not None
            and text[span.start : span.end] != quoted
        ):
            raise ExplorerError(
                ErrorCode.SPAN_QUOTE_NOT_FOUND,
                f"{where}: the text at [{span.start}, {span.end}) is not its quote {quoted[:80]!r}",
            )
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
    if not question.strip():
        raise ExplorerError(ErrorCode.INVALID_QUESTIONS, "the question has no text")
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
