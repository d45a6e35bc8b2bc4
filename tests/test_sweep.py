"""The size sweep: any sized column (ours or a library's, with its grammar, overlap and
parameters), in characters or tokens, charted as recall, IoU and hit rate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from explorer import ExplorerError
from explorer.chunking.policies import make_config
from explorer.retrieval.evaluate import curve, evaluate, size_sweep, sweep_columns
from explorer.retrieval.questions import parse_questions
from tests.conftest import run_cli
from tests.test_app import errors
from tests.test_retrieval_app import (
    LIBRARY,
    assert_scoreboard_is,
    library,
    library_load,
    run_sweep,
    scoreboard,
    sweep_charts,
)

QUESTIONS = LIBRARY / "questions.json"


pytestmark = pytest.mark.usefixtures("private_index")


# -- the core --------------------------------------------------------------------------------


def test_a_sweep_cuts_as_its_column_cuts_at_each_size() -> None:
    config = make_config("heading-aware", 300, overlap=20, grammar="markdown")
    swept = size_sweep("heading-aware", config, [64, 128], tokens=True)
    assert [name for name, _ in swept] == ["heading-aware@64t", "heading-aware@128t"]
    assert [c for _, c in swept] == [
        make_config("heading-aware", max_tokens=size, overlap=20, grammar="markdown")
        for size in (64, 128)
    ]
    library = make_config("langchain-recursive", 500, overlap=50, parameters={"separators": ["\n"]})
    [(name, resized)] = size_sweep("langchain-recursive", library, [200])
    assert name == "langchain-recursive@200"
    assert resized.library == library.library and resized.overlap == 50
    assert resized.max_chars == 200


@pytest.mark.parametrize(
    ("config", "sizes", "words"),
    [
        (make_config("paragraph"), [100], "no size"),
        (make_config("fixed-char", 100, overlap=30), [30, 60], "overlaps by 30"),
        (make_config("fixed-char", 100), list(range(1, 102)), "1 to 100 sizes"),
        (make_config("fixed-char", 100), [], "1 to 100 sizes"),
    ],
)
def test_a_sweep_it_cannot_cut_is_refused(config: object, sizes: list[int], words: str) -> None:
    with pytest.raises(ExplorerError) as raised:
        size_sweep("c", config, sizes)  # type: ignore[arg-type]
    assert raised.value.code.value == "usage"
    assert words in raised.value.detail


def test_the_sweep_spec_takes_a_library_and_tokens() -> None:
    swept = sweep_columns("langchain-recursive:100:300:100")
    assert [c.max_chars for _, c in swept] == [100, 200, 300]
    assert all(c.library is not None for _, c in swept)
    tokens = sweep_columns("heading-aware:64t:192t:64t", "markdown")
    assert [name for name, _ in tokens] == [f"heading-aware@{n}t" for n in (64, 128, 192)]
    assert {(c.unit, c.grammar) for _, c in tokens} == {("tokens", "markdown")}
    for bad in ("heading-aware:64t:192:64", "heading-aware:t:1t:1t", "semchunk:1:2:x"):
        with pytest.raises(ExplorerError) as raised:
            sweep_columns(bad)
        assert raised.value.code.value == "usage"


def test_the_curve_names_a_size_in_tokens() -> None:
    questions = parse_questions(QUESTIONS.read_bytes())
    evaluation = evaluate(library_load(), questions, sweep_columns("heading-aware:64t:128t:64t"))
    sizes = [line.split()[1] for line in curve(evaluation).splitlines()[1:]]
    assert sizes == ["64t", "128t"]


def test_the_command_line_sweeps_in_tokens() -> None:
    result = run_cli(
        "evaluate",
        LIBRARY / "manifest.json",
        "--questions",
        QUESTIONS,
        "--sweep",
        "fixed-char:50t:100t:50t",
    )
    assert result.code == 0, result.err
    assert [line.split()[:2] for line in result.out.splitlines()[1:]] == [
        ["fixed-char@50t", "50t"],
        ["fixed-char@100t", "100t"],
    ]


# -- the app ---------------------------------------------------------------------------------


def figures(chart: dict[str, Any]) -> list[str]:
    return list(chart["encoding"]["color"]["scale"]["domain"])


def test_the_app_sweeps_a_library_column_in_tokens_and_charts_three_figures() -> None:
    at = library()
    at.checkbox(key="live_langchain-recursive_on").check().run()
    at.radio(key="sweep_unit").set_value("tokens")
    run_sweep(at, "langchain-recursive", 50, 150, 50)
    assert not at.exception and not errors(at), errors(at)
    [chart] = sweep_charts(at)
    assert "langchain-recursive max_tokens" in json.dumps(chart)
    assert figures(chart) == ["recall", "IoU", "hit rate"]
    names = [row["Column"] for row in scoreboard(at, -1)]
    assert names == [
        "langchain-recursive@50t",
        "langchain-recursive@100t",
        "langchain-recursive@150t",
    ]
    questions = parse_questions(QUESTIONS.read_bytes())
    column = make_config("langchain-recursive")
    swept = size_sweep("langchain-recursive", column, [50, 100, 150], tokens=True)
    assert_scoreboard_is(at, evaluate(library_load(), questions, swept), which=-1)


def test_the_app_sweeps_a_column_with_its_overlap() -> None:
    at = library()
    at.toggle(key="fixed-char-in-tokens").set_value(False)
    at.number_input(key="fixed-char-overlap").set_value(20).run()
    run_sweep(at, "fixed-char", 100, 200, 100)
    assert not at.exception and not errors(at), errors(at)
    questions = parse_questions(QUESTIONS.read_bytes())
    column = make_config("fixed-char", 80, overlap=20)
    swept = size_sweep("fixed-char", column, [100, 200])
    assert_scoreboard_is(at, evaluate(library_load(), questions, swept), which=-1)
    run_sweep(at, "fixed-char", 10, 110, 100)  # a size at or below the overlap
    assert errors(at)[-1].startswith("**usage**") and "overlaps by 20" in errors(at)[-1]


def test_the_command_line_sweeps_the_column_its_policy_option_gives(tmp_path: Path) -> None:
    out = tmp_path / "sweep.json"
    result = run_cli(
        "evaluate", LIBRARY / "manifest.json", "--questions", QUESTIONS,
        "--sweep", "heading-aware:100:200:100",
        "--policy", "heading-aware", "--grammar", "markdown", "--overlap", "20", "--out", out,
    )  # fmt: skip
    assert result.code == 0, result.err
    configs = [p["config"] for p in json.loads(out.read_text("utf-8"))["policies"]]
    assert [(c["max_chars"], c.get("grammar"), c.get("overlap")) for c in configs] == [
        (100, "markdown", 20),
        (200, "markdown", 20),
    ]
    other = run_cli(
        "evaluate", LIBRARY / "manifest.json", "--questions", QUESTIONS,
        "--sweep", "heading-aware:100:200:100", "--policy", "fixed-char",
    )  # fmt: skip
    assert other.code == 2 and other.err.startswith("error: usage: ") and "not both" in other.err


def test_the_curve_keeps_its_columns_under_long_names() -> None:
    questions = parse_questions(QUESTIONS.read_bytes())
    swept = sweep_columns("langchain-recursive:900:1000:100")
    lines = curve(evaluate(library_load(), questions, swept)).splitlines()
    assert len({len(line) for line in lines}) == 1  # every line as wide as the head
    assert lines[2].split()[:2] == ["langchain-recursive@1000", "1000"]
