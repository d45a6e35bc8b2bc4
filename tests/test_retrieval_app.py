"""AppTest: every widget path of the Retrieval tab, its figures against `evaluate`'s,
its refusals with their codes; and the ranked view it draws."""

from __future__ import annotations

import html
import json
import re
from typing import Any

import pytest
from markdown_it import MarkdownIt
from streamlit.testing.v1 import AppTest

from explorer import (
    DirectoryReader,
    LoadResult,
    Settings,
    explore,
    load_documents,
    parse_manifest,
)
from explorer.chunking.imports import ChunkFile
from explorer.chunking.index import build_index, document_chunks
from explorer.chunking.policies import make_config
from explorer.chunking.snippet import snippet
from explorer.pipeline import export_column
from explorer.retrieval.evaluate import (
    Budget,
    ColumnFigures,
    Evaluation,
    Judging,
    evaluate,
    evaluation_of,
    not_measured,
    sweep_columns,
)
from explorer.retrieval.questions import QuestionSet, parse_questions, place_question
from explorer.retrieval.retrievers import RetrieverName
from explorer.sources.documents import document_record
from explorer.view.display import markdown_literal
from explorer.view.render import render_ranked_view
from tests.conftest import MANIFEST, ROOT, open_tab
from tests.test_app import errors, shown
from tests.test_store_app import library_upload
from ui import retrieval
from ui.export import FORMATS
from ui.retrieval import (
    ADDED_ONLY,
    MAX_QUESTIONS_BYTES,
    UPLOAD,
    bundled_for,
    chosen_column,
    decision_line,
    scoreboard_rows,
    verdict_rows,
)

APP = str(ROOT / "app.py")
LIBRARY = ROOT / "fixtures" / "library"
BUNDLED_LIBRARY = "fixtures/library/questions.json (5)"
COLUMNS = ["fixed-char", "paragraph", "heading-aware"]


pytestmark = pytest.mark.usefixtures("private_index")


def start() -> AppTest:
    """The app with its Retrieval tab open."""
    return open_tab(AppTest.from_file(APP, default_timeout=120), "Retrieval").run()


def library() -> AppTest:
    at = start()
    library_upload(at, "manifest.json")
    return at


def library_load() -> LoadResult:
    manifest = parse_manifest((LIBRARY / "manifest.json").read_bytes())
    return load_documents(manifest, DirectoryReader(LIBRARY))


def expected(
    retriever: RetrieverName = "bm25", k: int = 5, judging: Judging | None = None
) -> Evaluation:
    settings = Settings.default()
    columns = list(zip(settings.config_names, settings.configs, strict=True))
    questions = parse_questions((LIBRARY / "questions.json").read_bytes())
    return evaluate(library_load(), questions, columns, retriever, k, judging=judging)


def scoreboard(at: AppTest, which: int = 0) -> list[dict[str, str]]:
    """The scoreboard's rows (`which` -1: the sweep's figures), as shown."""
    tables = [t for t in at.table if "Recall" in t.value.columns]
    assert tables, "no scoreboard"
    return [{k: shown(v) for k, v in r.items()} for r in tables[which].value.to_dict("records")]


def assert_scoreboard_is(at: AppTest, evaluation: Evaluation, which: int = 0) -> None:
    rows = scoreboard(at, which)
    assert [r["Column"] for r in rows] == [p["name"] for p in evaluation["policies"]]
    for row, policy in zip(rows, evaluation["policies"], strict=True):
        s = policy["summary"]
        assert s["measured"] and s["mean_chunk_chars"] is not None
        assert int(row["Chunks"].replace(",", "")) == s["chunk_count"]
        assert float(row["Mean size (chars)"].replace(",", "")) == round(s["mean_chunk_chars"])
        for label, value in (
            ("Recall", s["recall"]),
            ("Precision", s["precision"]),
            ("IoU", s["iou"]),
            ("Hit rate", s["hit"]),
            ("Precision Ω", s["precision_omega"]),
            ("MRR", s["mrr"]),
            ("nDCG", s["ndcg"]),
        ):
            assert row[label] == f"{value:.3f}", (policy["name"], label)
        assert s["ci"] is not None
        assert row["Recall 95 %"] == f"{s['ci']['recall'][0]:.3f} to {s['ci']['recall'][1]:.3f}"
        assert row["Tokens retrieved"] == f"{s['retrieved_tokens']:,.0f}"
    decision = evaluation["decision"]
    assert decision is not None
    line = [m.value for m in at.markdown if "**Choose " in m.value][which]
    assert markdown_literal(decision["why"]) in line


def ranked_views(at: AppTest) -> dict[str, str]:
    """Each column's ranked view of the chosen question, by column name."""
    found = {}
    for element in at.get("html"):
        match = re.search(r'data-ranked="([^"]+)"', element.proto.body)
        if match:
            found[match.group(1)] = element.proto.body
    return found


def add_question(at: AppTest, question: str, source_id: str, quote: str, second: str = "") -> None:
    at.text_input(key="new_question_text").input(question)
    at.selectbox(key="new_question_doc").set_value(source_id)
    at.text_area(key="new_question_quote").input(quote)
    at.text_area(key="new_question_quote_2").input(second)
    next(b for b in at.button if b.label == "Add question").click().run()


def upload_questions(at: AppTest, data: bytes) -> None:
    at.radio(key="questions_source").set_value(UPLOAD).run()
    at.file_uploader(key="questions_upload").set_value(
        [("questions.json", data, "application/json")]
    ).run()


# -- choosing the questions -------------------------------------------------------------------


def test_the_bundled_example_has_no_questions_file_and_offers_adding_one() -> None:
    at = start()
    assert not at.exception
    assert at.radio(key="questions_source").options == [ADDED_ONLY, UPLOAD]
    assert any("No questions yet" in m.value for m in at.markdown)
    assert not [t for t in at.table if "Recall" in t.value.columns]


def test_the_library_documents_offer_their_questions_and_score_them_as_evaluate_does() -> None:
    at = library()
    assert not at.exception and not errors(at)
    assert at.radio(key="questions_source").options == [BUNDLED_LIBRARY, ADDED_ONLY, UPLOAD]
    assert at.radio(key="questions_source").value == BUNDLED_LIBRARY
    assert_scoreboard_is(at, expected())
    # heading-aware keeps every answer whole in one chunk; fixed-char never does
    assert [r["Hit rate"] for r in scoreboard(at)] == ["0.000", "0.200", "1.000"]


def test_the_second_run_of_the_library_is_not_offered_its_questions() -> None:
    at = start()
    library_upload(at, "manifest-run2.json")  # refund-policy v2: other bytes
    assert at.radio(key="questions_source").options == [ADDED_ONLY, UPLOAD]


def test_changing_k_and_the_retriever_scores_again() -> None:
    at = library()
    at.slider(key="retrieval_k").set_value(1).run()
    assert_scoreboard_is(at, expected("bm25", 1))
    at.radio(key="retriever").set_value("embedding").run()
    assert not at.exception and not errors(at)
    assert_scoreboard_is(at, expected("embedding", 1))
    at.radio(key="retriever").set_value("hybrid").run()
    assert_scoreboard_is(at, expected("hybrid", 1))
    views = ranked_views(at)
    assert all(v.count('class="cbx-hitref"') == 1 for v in views.values())


def test_an_uploaded_questions_file_is_scored() -> None:
    at = library()
    questions = json.loads((LIBRARY / "questions.json").read_bytes())
    questions["questions"] = questions["questions"][:2]
    upload_questions(at, json.dumps(questions).encode())
    assert not errors(at)
    rows = scoreboard(at)
    assert len(rows) == 3
    assert at.selectbox(key="question").options[0].startswith("refund-window")
    assert len(at.selectbox(key="question").options) == 2


def test_an_uploaded_questions_file_is_parsed_once_per_content(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A rerun (another k, another retriever) reads the file again only if it changed."""
    parsed: list[bytes] = []

    def counted(data: bytes) -> QuestionSet:
        parsed.append(data)
        return parse_questions(data)

    monkeypatch.setattr(retrieval, "parse_questions", counted)
    retrieval.questions_parsed.clear()
    at = library()
    questions = json.loads((LIBRARY / "questions.json").read_bytes())
    questions["questions"] = questions["questions"][:3]
    data = json.dumps(questions).encode()
    upload_questions(at, data)
    at.slider(key="retrieval_k").set_value(1).run()
    at.radio(key="retriever").set_value("embedding").run()
    assert not at.exception and not errors(at)
    assert len(scoreboard(at)) == 3 and parsed.count(data) == 1


@pytest.mark.parametrize(
    ("data", "code", "words"),
    [
        (b"{not json", "invalid_questions", ""),
        (b'{"questions_version": 2, "questions": []}', "invalid_questions", ""),
        (
            json.dumps(
                {
                    "questions_version": 1,
                    "questions": [
                        {
                            "id": "q",
                            "question": "?",
                            "source_id": "shipping",
                            "references": [{"quote": "not in the text"}],
                        }
                    ],
                }
            ).encode(),
            "span_quote_not_found",
            "not in the text",
        ),
        (
            json.dumps(
                {
                    "questions_version": 1,
                    "questions": [
                        {
                            "id": "q",
                            "question": "?",
                            "source_id": "elsewhere",
                            "references": [{"quote": "x"}],
                        }
                    ],
                }
            ).encode(),
            "invalid_questions",
            "elsewhere",
        ),
        (b" " * (MAX_QUESTIONS_BYTES + 1), "invalid_questions", "at most 1,048,576"),
    ],
)
def test_a_bad_questions_file_is_refused_with_its_code(data: bytes, code: str, words: str) -> None:
    at = library()
    upload_questions(at, data)
    assert not at.exception
    shown_errors = errors(at)
    assert len(shown_errors) == 1, shown_errors
    assert shown_errors[0].startswith(f"**{code}**"), shown_errors
    assert words in shown_errors[0]
    assert not [t for t in at.table if "Recall" in t.value.columns]
    assert "sweep_run" not in [b.key for b in at.button]  # nothing to sweep either


# -- one question ---------------------------------------------------------------------------


def test_picking_a_question_shows_its_answer_and_each_columns_ranked_hits() -> None:
    at = library()
    at.selectbox(key="question").set_value("warranty-void").run()
    assert not at.exception
    assert [c.value for c in at.code][-2:] == [  # the tab's are the page's last
        "two-year warranty against manufacturing defects",
        "The warranty is void if the device was opened",
    ]
    views = ranked_views(at)
    assert list(views) == COLUMNS
    evaluation = expected()
    for policy in evaluation["policies"]:
        view = views[policy["name"]]
        result = next(q for q in policy["questions"] if q["id"] == "warranty-void")
        for hit in result["retrieved"]:
            assert f'data-r="#{hit["rank"]}"' in view
        assert f"recall <b>{result['recall']:.3f}</b>" in view
        assert view.count('class="cbx-hl"') == 2  # both answers outlined and labelled
    assert "✓ one chunk holds it all" in views["heading-aware"]
    assert "✗ no chunk holds it all" in views["fixed-char"]


# -- adding a question ----------------------------------------------------------------------


def test_a_question_added_to_the_bundled_example_is_scored_and_chosen() -> None:
    at = start()
    at.radio(key="questions_source").set_value(ADDED_ONLY).run()
    add_question(
        at,
        "May save_copy overwrite an existing path?",
        "aster-copy-v1",
        "This operation refuses an existing path.",
        "save_copy never overwrites a document.",
    )
    assert not at.exception and not errors(at)
    rows = scoreboard(at)
    assert [r["Column"] for r in rows] == COLUMNS
    chosen = at.selectbox(key="question")
    assert chosen.value is not None and chosen.value.startswith("q-")
    assert len(ranked_views(at)) == 3
    assert any("1 of 50 added here" in expander.label for expander in at.expander)
    # Kept across reruns, and cleared on demand.
    at.slider(key="retrieval_k").set_value(2).run()
    assert len(at.selectbox(key="question").options) == 1
    at.button(key="clear_questions").click().run()
    assert any("No questions yet" in m.value for m in at.markdown)


def test_an_added_question_joins_the_file_and_a_bad_quote_is_refused() -> None:
    at = library()
    add_question(at, "Who signs for parcels?", "shipping", "no such sentence", "nor this")
    assert errors(at)[0].startswith("**span_quote_not_found**")
    assert "the question, reference 1" in errors(at)[0]  # not an id nobody was shown
    assert len(at.selectbox(key="question").options) == 5
    # Refused, the form keeps what was typed, to be mended.
    assert at.text_input(key="new_question_text").value == "Who signs for parcels?"
    assert at.text_area(key="new_question_quote_2").value == "nor this"
    add_question(at, "Where do I send the serial number?", "warranty", "Send the serial number")
    assert not errors(at)
    options = at.selectbox(key="question").options
    assert len(options) == 6 and options[-1].startswith("q-")
    assert at.selectbox(key="question").value == options[-1].split(":")[0]
    # Added, it starts empty: nothing of this question slips into the next.
    assert not at.text_input(key="new_question_text").value
    for key in ("new_question_quote", "new_question_quote_2"):
        assert not at.text_area(key=key).value


def test_the_decision_replaces_the_best_line_and_few_questions_are_warned_of() -> None:
    at = library()
    evaluation = expected()
    decision = evaluation["decision"]
    assert decision is not None
    assert not [m for m in at.markdown if m.value.startswith("Best —")]
    [line] = [m.value for m in at.markdown if "**Choose " in m.value]
    assert markdown_literal(decision["choice"]) in line and markdown_literal("5 questions") in line
    [warning] = [w.value for w in at.warning if "stand behind these verdicts" in w.value]
    assert warning.startswith("Only 5 questions stand behind these verdicts. With fewer than 30")
    verdicts = [t for t in at.table if "95 % interval" in t.value.columns]
    assert len(verdicts) == 1 and len(verdicts[0].value) == 3  # three pairs, on recall


def test_under_the_decision_the_chosen_column_is_offered_for_download_and_as_code() -> None:
    """Deciding by hit rate chooses heading-aware (fixed-char, the export picker's first
    column, is chosen by recall): its three downloads and its snippet are under the
    decision, and what the downloads give is its chunks."""
    at = library()
    at.selectbox(key="retrieval_decide_by").set_value("hit").run()
    assert not at.exception and not errors(at)
    evaluation = expected(judging=Judging(decide_by="hit"))
    decision = evaluation["decision"]
    assert decision is not None and decision["choice"] == "heading-aware"
    manifest = parse_manifest((LIBRARY / "manifest.json").read_bytes())
    columns = explore(library_load(), manifest.span_checks, Settings.default()).columns
    chosen = chosen_column(evaluation, columns)
    assert chosen is not None and chosen.name == "heading-aware"
    [panel] = [e for e in at.expander if e.label.startswith("Ship ")]
    assert panel.label.startswith(f"Ship {markdown_literal('heading-aware')}: its chunks")
    buttons = {b.proto.id.rsplit("-dl_", 1)[-1]: b.proto for b in panel.get("download_button")}
    assert set(buttons) == {f"choice_{shape}" for shape, _ in FORMATS}
    for shape, label in FORMATS:
        assert buttons[f"choice_{shape}"].label == f"Download for {label}"
        assert markdown_literal("heading-aware") in buttons[f"choice_{shape}"].help
    [code] = [c for c in panel.code if "def chunk(text: str)" in c.value]
    assert code.value == snippet("heading-aware", chosen.config).rstrip("\n")
    # What each download gives (`export_column`, called on a click): the chosen
    # column's chunks, in its order, each its document's slice.
    texts = {d["source_id"]: d["text"] for d in library_load().documents}
    chunks = chosen.index["chunks"]
    for shape, _ in FORMATS:
        lines = export_column(chosen, shape).decode().splitlines()
        assert len(lines) == len(chunks)
    records = [json.loads(x) for x in export_column(chosen, "langchain").decode().splitlines()]
    for record, chunk in zip(records, chunks, strict=True):
        meta = record["metadata"]
        assert meta["chunk_id"] == chunk["chunk_id"]
        assert meta["index_id"] == chosen.result["index_id"]
        assert record["page_content"] == texts[meta["source_id"]][meta["start"] : meta["end"]]
    # Back on recall, the choice (fixed-char) follows.
    at.selectbox(key="retrieval_decide_by").set_value("recall").run()
    [panel] = [e for e in at.expander if e.label.startswith("Ship ")]
    assert panel.label.startswith(f"Ship {markdown_literal('fixed-char')}: its chunks")


def test_no_decision_offers_no_choice_to_ship() -> None:
    evaluation = expected()
    assert chosen_column({**evaluation, "decision": None}, []) is None
    assert chosen_column(evaluation, []) is None  # the page no longer shows it


def test_deciding_by_another_metric_and_a_budget_measure_as_evaluate_does() -> None:
    at = library()
    at.selectbox(key="retrieval_decide_by").set_value("precision_omega").run()
    assert_scoreboard_is(at, expected(judging=Judging(decide_by="precision_omega")))
    assert "Precision Ω 95 %" in scoreboard(at)[0]
    at.radio(key="retrieval_budget_unit").set_value("tokens")
    at.number_input(key="retrieval_budget").set_value(120).run()
    assert not at.exception and not errors(at)
    budget: Budget = {"size": 120, "unit": "tokens"}
    judging = Judging(budget=budget, decide_by="precision_omega")
    assert_scoreboard_is(at, expected("bm25", 100, judging))
    assert any("fit in 120 tokens" in c.value for c in at.caption)


def test_an_added_question_is_the_only_one_ranked_again(monkeypatch: pytest.MonkeyPatch) -> None:
    at = library()
    ranked: list[int] = []
    original = ColumnFigures.results

    def counting(self: Any, questions: Any, best: Any, budget: Any) -> Any:
        ranked.append(len(questions))
        return original(self, questions, best, budget)

    monkeypatch.setattr(ColumnFigures, "results", counting)
    # A question no other test asks (the caches outlive a session, as on a server).
    add_question(at, "Where does the serial number go, to this test?", "warranty", "serial number")
    assert not at.exception and not errors(at)
    assert ranked == [1, 1, 1]  # one question, in each of the three columns
    ranked.clear()
    at.radio(key="retriever").set_value("embedding").run()
    assert len(ranked) == 3 and all(1 <= n <= 6 for n in ranked)  # what it has not measured


def test_a_column_not_measured_shows_why_and_is_in_no_verdict_nor_decision() -> None:
    judged = expected()
    note = "heading_required: grammar v1 cuts only a text that starts with a heading"
    nothing = not_measured("v1", make_config("paragraph").as_json(), [note])
    policies = [nothing, *judged["policies"]]
    evaluation = evaluation_of(judged["retriever"], judged["k"], policies, Judging())
    rows = scoreboard_rows(evaluation)
    assert rows[0]["Recall"] == f"not measured: {note}"
    assert set(rows[0]) == set(rows[1])  # the same cells, every other one a dash
    assert {v for k, v in rows[0].items() if k not in ("Column", "Recall")} == {"—"}
    assert rows[1:] == scoreboard_rows(judged)
    assert evaluation["comparisons"] == judged["comparisons"]
    assert evaluation["decision"] == judged["decision"]
    assert "v1" not in decision_line(evaluation)
    assert all("v1" not in row.values() for row in verdict_rows(evaluation, "recall"))


# -- the sweep ------------------------------------------------------------------------------


def sweep_charts(at: AppTest) -> list[dict[str, object]]:
    specs = [json.loads(chart.proto.spec) for chart in at.get("vega_lite_chart")]
    return [spec for spec in specs if "mean over the questions" in json.dumps(spec)]


def run_sweep(at: AppTest, policy: str, low: int, high: int, step: int) -> None:
    at.selectbox(key="sweep_policy").set_value(policy)
    at.number_input(key="sweep_from").set_value(low)
    at.number_input(key="sweep_to").set_value(high)
    at.number_input(key="sweep_step").set_value(step).run()
    at.button(key="sweep_run").click().run()


def test_a_sweep_runs_on_demand_and_draws_recall_and_iou() -> None:
    at = library()
    assert not sweep_charts(at)
    run_sweep(at, "heading-aware", 100, 300, 100)
    assert not at.exception and not errors(at)
    charts = sweep_charts(at)
    assert len(charts) == 1
    assert "heading-aware max_chars" in json.dumps(charts[0])  # the x axis
    questions = parse_questions((LIBRARY / "questions.json").read_bytes())
    swept = sweep_columns("heading-aware:100:300:100")
    assert_scoreboard_is(at, evaluate(library_load(), questions, swept), which=-1)
    names = [r["Column"] for r in scoreboard(at, -1)]
    assert names == ["heading-aware@100", "heading-aware@200", "heading-aware@300"]


def test_a_sweep_cuts_under_the_grammar_the_page_chose() -> None:
    """Text without a leading heading loads only under the markdown grammar: the sweep's
    columns cut under it too (they once took grammar v1, and refused the text)."""
    text = "Refunds are possible within 30 days.\n\n" * 20 + "Only after an inspection.\n"
    at = start()
    at.radio(key="grammar").set_value("markdown").run()
    at.radio(key="source").set_value("Paste text").run()
    at.text_area(key="paste").set_value(text).run()
    at.radio(key="questions_source").set_value(ADDED_ONLY).run()
    add_question(at, "When is a refund possible?", "pasted", "Only after an inspection.")
    run_sweep(at, "heading-aware", 100, 300, 100)
    assert not at.exception and not errors(at)
    names = [r["Column"] for r in scoreboard(at, -1)]
    assert names == ["heading-aware@100", "heading-aware@200", "heading-aware@300"]
    entry = {"source_id": "pasted", "version": "1", "path": "pasted.md", "sha256": "0" * 64}
    pasted = document_record(entry, text)
    swept = sweep_columns("heading-aware:100:300:100", "markdown")
    counts = [str(len(document_chunks(pasted, config))) for _, config in swept]
    assert [r["Chunks"] for r in scoreboard(at, -1)] == counts


def test_a_sweep_of_too_many_sizes_is_refused() -> None:
    at = library()
    at.number_input(key="sweep_from").set_value(1)
    at.number_input(key="sweep_to").set_value(2000)
    at.number_input(key="sweep_step").set_value(1).run()
    at.button(key="sweep_run").click().run()
    assert errors(at)[-1].startswith("**usage**")
    assert "at most 20" in errors(at)[-1]


# -- the drawing ----------------------------------------------------------------------------


def drawn_text(view: str) -> str:
    body = view.split('class="cbx-doc">', 1)[1]
    return html.unescape(re.sub(r"<[^>]+>", "", body))


def window_of(view: str, text: str) -> tuple[int, int]:
    match = re.search(r'data-window="(\d+) (\d+)"', view)
    return (int(match.group(1)), int(match.group(2))) if match else (0, len(text))


def assert_ranked_views_are_faithful(load: LoadResult, questions: QuestionSet, k: int) -> None:
    """Each view draws exactly its window of the document, holding the whole answer, with
    a rank badge on each retrieved chunk that starts in it; the header lists all k."""
    settings = Settings.default()
    columns = list(zip(settings.config_names, settings.configs, strict=True))
    evaluation = evaluate(load, questions, columns, "bm25", k)
    texts = {d["source_id"]: d["text"] for d in load.documents}
    for (name, config), policy in zip(columns, evaluation["policies"], strict=True):
        index = build_index(load.documents, config)
        starts = {c["chunk_id"]: c["start"] for c in index["chunks"]}
        for result in policy["questions"]:
            text = texts[result["source_id"]]
            view = render_ranked_view(text, name, policy["config"], index, result)
            low, high = window_of(view, text)
            assert drawn_text(view) == text[low:high]
            assert all(low <= r["start"] and r["end"] <= high for r in result["references"])
            badged = [
                h
                for h in result["retrieved"]
                if h["source_id"] == result["source_id"] and low <= starts[h["chunk_id"]] < high
            ]
            assert view.split('class="cbx-doc">', 1)[1].count('class="cbx-r"') == len(badged)
            assert view.count('class="cbx-hitref"') == k


def test_the_ranked_view_draws_the_library_documents_whole() -> None:
    questions = parse_questions((LIBRARY / "questions.json").read_bytes())
    assert_ranked_views_are_faithful(library_load(), questions, 3)


def test_a_long_documents_ranked_view_draws_the_answer_and_its_neighbours() -> None:
    folder = ROOT / "fixtures" / "markdown-docs"
    manifest = parse_manifest((folder / "manifest.json").read_bytes())
    load = load_documents(manifest, DirectoryReader(folder))
    questions = parse_questions((folder / "questions.json").read_bytes())
    assert_ranked_views_are_faithful(load, questions, 5)
    # e.g. a Rust book question: a window of the chapter, not all of it
    text = next(d["text"] for d in load.documents if d["source_id"].endswith("borrowing"))
    asked = next(q for q in questions.questions if q.id == "borrow-scope-ends")
    placed = place_question(asked, text)
    config = Settings.default().configs[2]
    index = build_index(load.documents, config)
    result = evaluate(load, QuestionSet(questions_version=1, questions=[asked]), [("h", config)])
    view = render_ranked_view(
        text, "h", config.as_json(), index, result["policies"][0]["questions"][0]
    )
    low, high = window_of(view, text)
    assert 0 < high - low < len(text) / 2
    assert low <= placed.references[0][1] and placed.references[-1][2] <= high


def test_the_aster_manifest_is_not_matched_to_any_bundled_questions() -> None:
    assert bundled_for(parse_manifest(MANIFEST.read_bytes())) == []
    labels = [
        b.label for b in bundled_for(parse_manifest((LIBRARY / "manifest.json").read_bytes()))
    ]
    assert labels == [BUNDLED_LIBRARY]


def test_a_hostile_question_is_shown_as_text() -> None:
    at = library()
    hostile = "![p](http://evil.example/p.png) [x](http://evil.example) **b** \u202eevil?"
    questions = {
        "questions_version": 1,
        "questions": [
            {
                "id": "\u202eid",
                "question": hostile,
                "source_id": "warranty",
                "references": [{"quote": "The warranty is void if the device was opened"}],
            }
        ],
    }
    upload_questions(at, json.dumps(questions).encode())
    assert not at.exception and not errors(at)
    shown_line = next(m.value for m in at.markdown if "evil" in m.value)
    rendered = MarkdownIt().render(shown_line)
    assert "<img" not in rendered and "<a " not in rendered
    assert rendered.count("<strong>") == 1  # the page's own bold, around the question
    assert "**b**" in rendered.replace("\\", "")
    assert "\u202e" not in shown_line and "\\u202e" in shown_line
    option = at.selectbox(key="question").options[0]
    assert "\u202e" not in option and "\\u202eid" in option
    for view in ranked_views(at).values():
        assert "evil.example" not in view and "\u202e" not in view


def test_a_search_too_large_for_the_server_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(retrieval, "MAX_SEARCH_CELLS", 100)  # 5 questions, 23 chunks: 115
    at = library()
    refused = errors(at)
    assert len(refused) == 1 and refused[0].startswith("**too_many_chunks**")
    assert "5 questions times 23 chunks (fixed-char)" in refused[0]
    assert not [t for t in at.table if "Recall" in t.value.columns]
    monkeypatch.setattr(retrieval, "MAX_SEARCH_CELLS", 200)
    at.slider(key="retrieval_k").set_value(4).run()
    assert not errors(at)
    at.number_input(key="sweep_from").set_value(10)
    at.number_input(key="sweep_to").set_value(100)
    at.button(key="sweep_run").click().run()  # at 10 characters: about 165 chunks
    assert errors(at)[-1].startswith("**too_many_chunks**")
    assert not sweep_charts(at)


def test_an_imported_chunk_file_is_measured_beside_the_columns() -> None:
    at = library()
    chunk_file = ROOT / "fixtures" / "chunk-files" / "llamaindex-library.json"
    data = chunk_file.read_bytes()
    at.file_uploader(key="chunk_files").set_value([(chunk_file.name, data, "application/json")])
    at.run()
    assert not at.exception and not errors(at)
    settings = Settings.default()
    columns = list(zip(settings.config_names, settings.configs, strict=True))
    questions = parse_questions((LIBRARY / "questions.json").read_bytes())
    name = scoreboard(at)[-1]["Column"]
    assert name.startswith("llamaindex")
    imported = (ChunkFile(name, data),)
    assert_scoreboard_is(
        at, evaluate(library_load(), questions, columns, "bm25", 5, chunk_files=imported)
    )


def test_markdown_beside_an_imported_file_on_a_text_without_a_heading() -> None:
    """Choosing markdown, then uploading your pipeline's chunks, measures both: the
    imported column never forces grammar v1 on a text that opens without a heading."""
    from tests.test_app import PASTE, column_names

    text = "Install it first.\n\nThen run the server.\n"
    at = start()
    at.radio(key="source").set_value(PASTE).run()
    at.text_area(key="paste").set_value(text).run()
    at.radio(key="grammar").set_value("markdown").run()
    chunks = json.dumps([{"source_id": "pasted", "text": "Install it first."}]).encode()
    at.file_uploader(key="chunk_files").set_value([("mine.json", chunks, "application/json")])
    at.run()
    assert not at.exception and not errors(at)
    assert column_names(at)[-1] == "mine"


def test_a_closed_retrieval_tab_ranks_nothing_and_keeps_its_choices() -> None:
    """A step on the Explore tab runs no retrieval; the tab opened again shows the same
    choices (k, the uploaded questions file) and its scoreboard."""
    at = library()
    at.slider(key="retrieval_k").set_value(3).run()
    upload_questions(at, (LIBRARY / "questions.json").read_bytes())
    assert scoreboard(at)
    open_tab(at, "Explore boundaries").run()
    at.slider(key="heading-aware").set_value(300).run()
    assert not at.exception
    assert not [t for t in at.table if "Recall" in t.value.columns]
    assert not [s for s in at.slider if s.key == "retrieval_k"]
    open_tab(at, "Retrieval").run()
    assert at.slider(key="retrieval_k").value == 3
    assert at.radio(key="questions_source").value == UPLOAD
    assert "Questions from questions.json, uploaded before." in [shown(c.value) for c in at.caption]
    assert [r["Column"] for r in scoreboard(at)] == COLUMNS
