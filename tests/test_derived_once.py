"""`derived_once`: a document is parsed once for every column, size and validation that
reads it within one exploration or evaluation, with the same chunks and ids."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from explorer import LoadResult, build_index, make_config, memo, validate_index
from explorer.chunking import deadline, tokens
from explorer.chunking.config import ChunkConfig
from explorer.errors import ErrorCode, ExplorerError
from explorer.grammars import GRAMMARS, GrammarSection, markdown, v1
from explorer.memo import derived_once
from explorer.pipeline import Settings, explore, run_column
from explorer.retrieval.evaluate import evaluate
from explorer.retrieval.questions import QuestionSet
from explorer.sources.documents import DocumentRecord
from explorer.sources.loading import DocumentStatus
from tests.test_properties import record

TEXTS = (
    "# Cranes\n\nLift the load slowly.\n\n## Wind\n\nStop above twenty metres per second.\n",
    "# Ropes\n\nInspect every rope.\n\n```\ncheck()\n```\n\n- one\n- two\n",
)
CONFIGS = (
    make_config("heading-aware", 40, grammar="markdown"),
    make_config("fixed-char", 30, grammar="markdown"),
    make_config("paragraph", None, grammar="markdown"),
    make_config("heading-aware", max_tokens=8, grammar="markdown"),
)


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every text the markdown and v1 grammars parse, as they parse it."""
    seen: list[str] = []

    def counted(
        find: Callable[[str], Sequence[GrammarSection]],
    ) -> Callable[[str], Sequence[GrammarSection]]:
        def parse(text: str) -> Sequence[GrammarSection]:
            seen.append(text)
            return find(text)

        return parse

    monkeypatch.setattr(markdown, "sections", counted(markdown.sections))
    monkeypatch.setattr(v1, "headed_sections", counted(v1.headed_sections))
    return seen


def documents() -> list[DocumentRecord]:
    return [record(text, f"doc-{n}") for n, text in enumerate(TEXTS)]


def built(docs: list[DocumentRecord], config: ChunkConfig) -> str:
    return validate_index(build_index(docs, config))["index_id"]


def test_outside_a_block_every_reader_parses_again(parses: list[str]) -> None:
    docs = documents()
    built(docs, CONFIGS[0])
    assert len(parses) == 2 * len(TEXTS)  # the build, and the validation's rebuild


def test_within_a_block_each_text_is_derived_once_with_the_same_ids(parses: list[str]) -> None:
    docs = documents()
    alone = [built(docs, config) for config in CONFIGS]
    parses.clear()
    with derived_once():
        shared = [built(docs, config) for config in CONFIGS]
        assert sorted(parses) == sorted(TEXTS)
        # Nested: the outer block's sections, no parse more.
        with derived_once():
            assert built(docs, CONFIGS[0]) == alone[0]
        assert len(parses) == len(TEXTS)
    assert shared == alone
    # Once the block ends nothing is kept.
    built(docs, CONFIGS[0])
    assert len(parses) == 3 * len(TEXTS)


def test_each_grammar_keeps_its_own_sections(parses: list[str]) -> None:
    text = TEXTS[0]
    with derived_once():
        found = GRAMMARS["markdown"].sections(text)
        assert GRAMMARS["markdown"].sections(text) is found
        assert GRAMMARS["markdown"].any_sections(text) is found
        headed = GRAMMARS["v1"].sections(text)
        assert headed is not found and GRAMMARS["v1"].any_sections(text) is headed
    assert [s.title for s in found] == [s.title for s in headed] == ["Cranes", "Wind"]
    assert parses == [text, text]


def test_an_equal_text_that_is_another_object_is_parsed_for_itself(parses: list[str]) -> None:
    text = TEXTS[0]
    other = "".join(list(text))  # equal, and another object
    assert other == text and other is not text
    with derived_once():
        GRAMMARS["markdown"].sections(text)
        GRAMMARS["markdown"].sections(other)
    assert len(parses) == 2


def test_another_thread_keeps_nothing_of_this_block(parses: list[str]) -> None:
    text = TEXTS[0]
    with derived_once():
        GRAMMARS["markdown"].sections(text)
        thread = threading.Thread(target=GRAMMARS["markdown"].sections, args=(text,))
        thread.start()
        thread.join()
    assert len(parses) == 2


def test_a_refused_text_is_refused_within_a_block_too() -> None:
    with derived_once(), pytest.raises(ExplorerError) as refused:
        GRAMMARS["v1"].sections("no heading\n")
    assert refused.value.code is ErrorCode.HEADING_REQUIRED


def loaded() -> LoadResult:
    docs = documents()
    statuses = tuple(DocumentStatus(d["source_id"], d["path"], "ok", "") for d in docs)
    return LoadResult(statuses, tuple(docs))


def test_an_exploration_parses_each_document_once_for_all_its_columns(
    parses: list[str],
) -> None:
    load = loaded()
    settings = Settings(CONFIGS)
    exploration = explore(load, [], settings)
    assert sorted(parses) == sorted(TEXTS)
    for column, config in zip(exploration.columns, CONFIGS, strict=True):
        parses.clear()
        alone = run_column("x", load.documents, [], config)
        assert len(parses) == len(TEXTS)  # one column: its build and validation share
        assert column.result["index_id"] == alone.result["index_id"]


def test_an_evaluation_parses_each_document_once_for_every_size(parses: list[str]) -> None:
    load = loaded()
    questions = QuestionSet.model_validate(
        {
            "questions_version": 1,
            "questions": [
                {
                    "id": "wind",
                    "question": "When do cranes stop?",
                    "source_id": "doc-0",
                    "references": [{"quote": "Stop above twenty"}],
                }
            ],
        }
    )
    sizes = [make_config("heading-aware", size, grammar="markdown") for size in (20, 40, 80)]
    evaluate(load, questions, [(f"h{n}", c) for n, c in enumerate(sizes)])
    assert sorted(parses) == sorted(TEXTS)


def test_within_a_block_the_blocks_of_a_section_are_counted_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    measured = []
    measure = tokens._measure_tokens

    def counted(*args: Any) -> Any:
        measured.append(args)
        return measure(*args)

    monkeypatch.setattr(tokens, "_measure_tokens", counted)
    docs = documents()
    # Sizes that split no block: each build measures each section's blocks once.
    sizes = [make_config("heading-aware", max_tokens=n, grammar="markdown") for n in (200, 400)]
    alone = [built(docs, config) for config in sizes]
    each = len(measured)
    measured.clear()
    with derived_once():
        assert [built(docs, config) for config in sizes] == alone
    assert each == 4 * len(measured) > 0  # two sizes, each built and rebuilt


@pytest.mark.parametrize(
    ("module", "name", "config"),
    [
        (tokens, "token_windows", make_config("fixed-char", max_tokens=4, grammar="markdown")),
        (markdown, "split_block", make_config("heading-aware", 12, grammar="markdown")),
    ],
)
def test_within_a_block_windows_and_split_blocks_are_cut_once(
    monkeypatch: pytest.MonkeyPatch, module: Any, name: str, config: ChunkConfig
) -> None:
    calls = []
    cut = getattr(module, name)

    def counted(*args: Any) -> Any:
        calls.append(args)
        return cut(*args)

    monkeypatch.setattr(module, name, counted)
    docs = documents()
    alone = built(docs, config)
    each = len(calls)
    calls.clear()
    with derived_once():
        assert built(docs, config) == alone
    assert each == 2 * len(calls) > 0  # built and rebuilt


def _derived_here() -> bool:
    """In the library calls' serving child: whether it holds anything derived."""
    return memo._DERIVED.get() is not None


def test_the_library_child_forked_in_a_block_keeps_nothing_of_it() -> None:
    timed_out = lambda: ExplorerError(ErrorCode.USAGE, "timed out")  # noqa: E731
    if deadline._child is not None:  # forked within the block below, not before
        deadline._child.end()
        deadline._child = None
    with derived_once():
        GRAMMARS["markdown"].sections(TEXTS[0])
        assert deadline.call_within(30, timed_out, _derived_here) is False
