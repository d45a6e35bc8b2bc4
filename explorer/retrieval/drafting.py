"""Questions you do not have yet: passages that cross a chunk boundary of a policy.

The seeds' review asks to "measure retrieval on questions spanning chunk boundaries": a
question whose answer is the sentence before a boundary and the sentence after it,
inside one section, is the question a policy that cuts there answers worst. Each such
passage becomes a question whose reference is the passage (its quote at its offsets);
its text is a generator's (a wrapper around your LLM, or a chat model behind an
OpenAI-compatible API asked with `PROMPT`), or empty for you to write.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Protocol, TypeVar, runtime_checkable

from ..chunking.index import ChunkRecord
from ..digests import digest
from ..errors import ErrorCode, ExplorerError
from ..plugins import load_plugin
from .endpoint import PREFIX, BadAnswer, Endpoint, EndpointError, EndpointOptions, model_of
from .questions import (
    MAX_QUESTION_CHARS,
    MAX_QUESTIONS,
    DraftReport,
    LeftOut,
    Question,
    QuestionSet,
    Reference,
)

T = TypeVar("T")
DEFAULT_DRAFTS = 10
MAX_SIDE = 400  # characters of a passage on either side of the boundary, at most
MAX_NAME_CHARS = 200
# Where a sentence ends: after its stop (and closing quotes or brackets) before white
# space, or before a blank line. Sentences of prose, not Markdown structure: a passage
# is plain text that a reader quotes.
_SENTENCE_END = re.compile(r"[.!?][\"'”’)\]]*(?=\s|$)|(?=\n[ \t]*\n)")  # noqa: RUF001


@dataclass(frozen=True)
class Passage:
    """`text[start:end]` of `source_id`, crossing the end of one chunk at `boundary`."""

    source_id: str
    start: int
    end: int
    boundary: int
    text: str


def boundary_passages(texts: Mapping[str, str], chunks: Sequence[ChunkRecord]) -> list[Passage]:
    """For each pair of consecutive chunks of one section, the last sentence that only
    the first holds and the first sentence past its end, as one passage that no chunk
    holds whole (capped at `MAX_SIDE` characters a side, cut between words). A pair
    whose passage is not prose (`_prose`), or that leaves a side without a word, gives
    none."""
    passages: list[Passage] = []
    seen: set[tuple[str, int, int]] = set()
    for first, second in _neighbours(chunks):
        text = texts[first["source_id"]]
        start = _last_sentence_start(text, first["start"], second["start"])
        end = _first_sentence_end(text, first["end"], second["end"])
        if start is None or end is None:
            continue
        sides = (text[start : min(first["end"], second["start"])], text[first["end"] : end])
        if not _prose(text[start:end]) or not all(_WORD.search(side) for side in sides):
            continue
        key = (first["source_id"], start, end)
        if key not in seen:
            seen.add(key)
            passages.append(Passage(*key, first["end"], text[start:end]))
    return passages


_WORD = re.compile(r"[^\W\d_]{2,}")
_MARKUP_LINE = ("```", "~~~", "|", "<", "///", "![", "    ")
_TAG = re.compile(r"</?[A-Za-z!][^>\n]*>|\">")  # an HTML tag, or the end of one


def _prose(side: str) -> bool:
    """Sentences a reader can ask about: four words or more, mostly letters, no HTML
    tag, and no line of a code fence, table or image."""
    words = _WORD.findall(side)
    letters = sum(len(word) for word in words)
    if len(words) < 4 or letters < 0.6 * len("".join(side.split())) or _TAG.search(side):
        return False
    return not any(line.startswith(_MARKUP_LINE) for line in side.split("\n"))


def _neighbours(chunks: Sequence[ChunkRecord]) -> Iterator[tuple[ChunkRecord, ChunkRecord]]:
    ordered = sorted(chunks, key=lambda c: (c["source_id"], c["order"]))
    for first, second in pairwise(ordered):
        same = first["source_id"] == second["source_id"]
        if same and first["section_id"] == second["section_id"] and first["end"] < second["end"]:
            yield first, second


def _last_sentence_start(text: str, low: int, high: int) -> int | None:
    """Where the last sentence with a letter in `text[low:high]` starts."""
    region = text[low:high].rstrip()
    if not region:
        return None
    start = 0
    for match in _SENTENCE_END.finditer(region):
        if match.end() < len(region):
            start = match.end()
    if start < len(region) - MAX_SIDE:  # cut by the cap: start at a word
        start = len(region) - MAX_SIDE
        space = region.find(" ", start)
        start = space + 1 if space >= 0 else start
    while start < len(region) and region[start].isspace():
        start += 1
    return low + start if start < len(region) else None


def _first_sentence_end(text: str, low: int, high: int) -> int | None:
    """Where the first sentence with a letter in `text[low:high]` ends."""
    region = text[low:high]
    begin = len(region) - len(region.lstrip())
    if begin == len(region):
        return None
    match = _SENTENCE_END.search(region, begin + 1)
    end = match.end() if match else len(region.rstrip())
    if end - begin > MAX_SIDE:  # cut by the cap: end at a word
        space = region.rfind(" ", begin, begin + MAX_SIDE)
        end = space if space > begin else begin + MAX_SIDE
    return low + len(region[:end].rstrip())


def choose(passages: Sequence[T], n: int, seed: int) -> list[T]:
    """`n` of them (all when fewer), the same for the same seed, in document order."""
    picked = random.Random(seed).sample(range(len(passages)), min(n, len(passages)))
    return [passages[i] for i in sorted(picked)]


@runtime_checkable
class Generator(Protocol):
    """Writes a question whose answer is the passage (e.g. a wrapper around your LLM)."""

    @property
    def name(self) -> str: ...

    def generate(self, passage: str) -> str: ...


def load_generator(spec: str) -> Generator:
    """`package.module:factory`, whose factory returns a `Generator`; refused
    (`invalid_generator`) before any work."""
    made = load_plugin(spec, ErrorCode.INVALID_GENERATOR, "--generator")
    name = getattr(made, "name", None)
    if not isinstance(name, str) or not 0 < len(name) <= MAX_NAME_CHARS:
        problem = f"a name of 1 to {MAX_NAME_CHARS} characters"
    elif not callable(getattr(made, "generate", None)):
        problem = "a generate(passage) method"
    else:
        assert isinstance(made, Generator)
        return made
    raise ExplorerError(ErrorCode.INVALID_GENERATOR, f"{spec} made an object without {problem}")


SYSTEM = "You write questions for testing a search engine. You answer with JSON only."
PROMPT = """\
A chunk boundary cuts the passage below in two: the text between <before> and </before> \
ends one chunk of a document, the text between <after> and </after> begins the next.

<before>
{before}
</before>
<after>
{after}
</after>

Write one question that a reader can answer only with what both sides say together: \
the answer needs the text before the boundary and the text after it. Use your own \
words: do not copy 12 or more words in a row from the passage. At most 500 characters.

Answer with JSON only, in this shape: {{"question": "..."}}"""
MAX_ASKED_CHARS = 500  # a question the API writes, at most
COPIED_WORDS = 12  # consecutive words of the passage a question may not copy
ASKS = 3  # a question is asked, and re-asked at most twice
_WORDS = re.compile(r"\w+")


def prompt(passage: Passage) -> str:
    """The user message for `passage`: both sides of its boundary, marked."""
    cut = passage.boundary - passage.start
    return PROMPT.format(before=passage.text[:cut].strip(), after=passage.text[cut:].strip())


class ApiGenerator:
    """A chat model behind an OpenAI-compatible API (`POST /chat/completions`), asked with
    `SYSTEM` and `prompt`, at temperature 0 with a seed (dropped if the server refuses
    it)."""

    def __init__(self, model: str, options: EndpointOptions, seed: int) -> None:
        self.endpoint = Endpoint(options, ErrorCode.INVALID_GENERATOR)
        self.model = model
        self.name = f"{PREFIX}{self.endpoint.host}/{model}"
        self.seed: int | None = seed

    def ask(self, passage: Passage, attempt: int) -> str:
        """The question of the answer to attempt `attempt` (0, 1, 2), one line; `BadAnswer`
        when the answer is not `{"question": text}`."""
        payload: dict[str, object] = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": SYSTEM},
                {"role": "user", "content": prompt(passage)},
            ],
            "temperature": 0,
        }
        if self.seed is not None:
            payload["seed"] = self.seed + attempt
        try:
            answer = self.endpoint.post("/chat/completions", payload)
        except EndpointError as error:
            if self.seed is None or error.status not in (400, 422) or "seed" not in error.message:
                raise
            self.seed = None  # the server takes no seed: ask without
            return self.ask(passage, attempt)
        return _question_of(answer)


def _question_of(answer: object) -> str:
    choices = answer.get("choices") if isinstance(answer, dict) else None
    first = choices[0] if isinstance(choices, list) and choices else None
    message = first.get("message") if isinstance(first, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, str):
        raise BadAnswer("an answer that is not the API's shape (no choices[0].message.content)")
    body = content[content.find("{") : content.rfind("}") + 1]  # inside a code fence too
    try:
        parsed = json.loads(body) if body else None
    except (ValueError, RecursionError):  # not JSON, or nested past Python's stack
        parsed = None
    question = parsed.get("question") if isinstance(parsed, dict) else None
    if not isinstance(question, str):
        raise BadAnswer('a message that is not JSON {"question": …}')
    return " ".join(question.split())


def fault(question: str, passage: Passage, kept: set[str]) -> str | None:
    """Why a drafted question cannot be kept, or None: it must be 1 to 500 printable
    characters, copy no 12 consecutive words of its passage, and differ from those
    `kept` (compared case-folded, white space made single)."""
    if not 0 < len(question) <= MAX_ASKED_CHARS or not question.isprintable():
        return f"{len(question):,} characters; a question is 1 to {MAX_ASKED_CHARS} printable"
    if _runs(question.casefold()) & _runs(passage.text.casefold()):
        return f"it copies {COPIED_WORDS} consecutive words of the passage"
    if question.casefold() in kept:
        return "the same as another question"
    return None


def _runs(text: str) -> set[tuple[str, ...]]:
    words = _WORDS.findall(text)
    return {tuple(words[i : i + COPIED_WORDS]) for i in range(len(words) - COPIED_WORDS + 1)}


def api_generator(spec: str, options: EndpointOptions, seed: int) -> ApiGenerator:
    """`openai:MODEL` with its endpoint; refused (`invalid_generator`) before any work."""
    return ApiGenerator(model_of(spec, ErrorCode.INVALID_GENERATOR, "--generator"), options, seed)


def ask_checked(
    generator: ApiGenerator, passage: Passage, kept: set[str]
) -> tuple[str | None, str]:
    """The first of at most `ASKS` answers that `fault` finds nothing wrong with, or None
    and what was wrong with the last (the key masked)."""
    problem = ""
    for attempt in range(ASKS):
        try:
            question = generator.ask(passage, attempt)
        except BadAnswer as error:
            problem = f"the server answered with {error}"
            continue
        problem = fault(question, passage, kept) or ""
        if not problem:
            return question, ""
    return None, generator.endpoint.masked(problem)


def draft_asked(passages: Sequence[Passage], generator: ApiGenerator) -> QuestionSet:
    """`draft_questions` with the API's questions, each checked (`fault`) and asked at
    most `ASKS` times, then left out: the file's `draft` says how many were asked, kept
    and left out, and why. `generation_failed` when none is kept."""
    require_passages(passages)
    questions: list[Question] = []
    reasons: list[LeftOut] = []
    kept: set[str] = set()
    for passage in passages[:MAX_QUESTIONS]:
        question, problem = ask_checked(generator, passage, kept)
        if question is not None:
            kept.add(question.casefold())
            questions.append(_question(passage, question))
        else:
            reasons.append(LeftOut.model_validate({**_place(passage), "reason": problem}))
    report = DraftReport(
        generator=generator.name,
        asked=len(passages[:MAX_QUESTIONS]),
        kept=len(questions),
        left_out=len(reasons),
        reasons=reasons,
    )
    if not questions:
        why = reasons[0].reason if reasons else "no passage"
        raise ExplorerError(
            ErrorCode.GENERATION_FAILED,
            f"{generator.name!r} wrote no question that could be kept ({report.left_out} "
            f"left out; the first because: {why})",
        )
    return QuestionSet(questions_version=1, questions=questions, draft=report)


def _place(passage: Passage) -> dict[str, str | int]:
    return {"source_id": passage.source_id, "start": passage.start, "end": passage.end}


def _question(passage: Passage, text: str) -> Question:
    """The question whose reference is `passage` (its quote at its offsets)."""
    return Question(
        id="q-" + digest(_place(passage))[:12],
        question=text,
        source_id=passage.source_id,
        references=[Reference(quote=passage.text, start=passage.start, end=passage.end)],
    )


def require_passages(passages: Sequence[Passage]) -> None:
    if not passages:
        raise ExplorerError(
            ErrorCode.NO_DOCUMENTS,
            "no two chunks of one section meet in these documents, so no passage crosses a "
            "boundary: choose a smaller size",
        )


def draft_questions(passages: Sequence[Passage], generator: Generator | None) -> QuestionSet:
    """A questions file whose references are the passages (each quote at its offsets);
    each question's text is the generator's, or empty (`evaluate` then refuses the
    file, naming the questions still to write)."""
    require_passages(passages)
    questions = [
        _question(p, _written(generator, p, number) if generator else "")
        for number, p in enumerate(passages[:MAX_QUESTIONS], 1)
    ]
    return QuestionSet(questions_version=1, questions=questions)


def _written(generator: Generator, passage: Passage, number: int) -> str:
    where = (
        f"generator {generator.name!r}, passage {number} ({passage.source_id} at {passage.start})"
    )
    try:
        answer: object = generator.generate(passage.text)
    except Exception as error:  # a user's code: any failure is theirs, named
        raise ExplorerError(
            ErrorCode.GENERATION_FAILED, f"{where} raised {type(error).__name__}: {error}"
        ) from None
    if not isinstance(answer, str):
        raise ExplorerError(
            ErrorCode.GENERATION_FAILED, f"{where} returned {type(answer).__name__}, not text"
        )
    question = " ".join(answer.split())  # one line: a question file holds no line breaks
    if not 0 < len(question) <= MAX_QUESTION_CHARS or not question.isprintable():
        raise ExplorerError(
            ErrorCode.GENERATION_FAILED,
            f"{where} returned {len(question):,} characters; a question is 1 to "
            f"{MAX_QUESTION_CHARS:,} printable characters",
        )
    return question
