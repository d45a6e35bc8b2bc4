"""Questions whose answers are known character ranges: the questions file
(`questions_version` 1), and each question placed in its document's normalized text."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated

from pydantic import ConfigDict, Field, model_validator

from ..checking.checks import resolve_span
from ..digests import digest
from ..errors import ErrorCode, ExplorerError
from ..jsonio import parse_json, require_counts
from ..models import NoNullModel, PlainText, StrictModel, VersionOne, validated
from ..sources.manifest import ManifestSpan, require_one_form, span_schema
from .metrics import Range

MAX_QUESTIONS = 10_000
MAX_REFERENCES = 100
MAX_QUESTION_CHARS = 10_000


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
