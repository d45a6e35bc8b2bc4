"""The app and the operator's endpoints (issue 35): a visitor picks among the names in
`.streamlit/secrets.toml`, never a URL, a model id or a module; a link naming an
embedder that is not configured is ignored with a note; requests go to a real local
server (pytest-httpserver)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import partial
from typing import Any

import pytest
from pytest_httpserver import HTTPServer
from streamlit.testing.v1 import AppTest

from explorer import Settings
from explorer.retrieval.evaluate import evaluate
from explorer.retrieval.questions import parse_questions
from explorer.retrieval.vectors import VectorCache
from tests import embedders
from tests.conftest import ROOT, open_tab
from tests.test_app import errors, shown
from tests.test_endpoint import KEY, KEY_ENV, asking, embeddings, requests, serve
from tests.test_retrieval_app import LIBRARY, assert_scoreboard_is, library_load
from tests.test_store_app import library_upload

APP = str(ROOT / "app.py")
pytestmark = pytest.mark.usefixtures("private_index")


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[HTTPServer]:
    monkeypatch.setenv(KEY_ENV, KEY)
    stub = HTTPServer(host="127.0.0.1", port=0, threaded=True)
    stub.start()
    yield stub
    stub.clear()
    stub.stop()


def configured(server: HTTPServer, **query: str) -> AppTest:
    """The app with one embedder and one generator configured, on the stub server."""
    at = open_tab(AppTest.from_file(APP, default_timeout=120), "Retrieval")
    endpoint = {"base_url": server.url_for("/v1"), "api_key_env": KEY_ENV}
    at.secrets["embedders"] = {"team": {**endpoint, "model": "stub-embed", "batch": 64}}
    at.secrets["generators"] = {"writer": {**endpoint, "model": "stub-chat"}}
    for name, value in query.items():
        at.query_params[name] = value
    return at.run()


def everything_shown(at: AppTest) -> str:
    parts: list[Any] = [*at.markdown, *at.caption, *at.warning, *at.error, *at.info]
    return "\n".join(str(part.value) for part in parts)


def test_a_visitor_picks_a_configured_embedder_and_it_ranks_as_its_vectors(
    server: HTTPServer,
) -> None:
    serve(server, embeddings)
    at = configured(server)
    library_upload(at, "manifest.json")
    at.radio(key="retriever").set_value("embedding").run()
    picker = at.selectbox(key="embedder")
    assert picker.options == ["WordLlama (bundled)", "team"]  # names only: no URL, no model
    assert requests(server) == []
    picker.set_value("team").run()
    assert not at.exception and not errors(at), errors(at)
    assert requests(server) and all(b["model"] == "stub-embed" for b in requests(server))
    settings = Settings.default()
    columns = list(zip(settings.config_names, settings.configs, strict=True))
    questions = parse_questions((LIBRARY / "questions.json").read_bytes())
    same_vectors = partial(VectorCache.open("none").vectors, embedders.Counting())
    wanted = evaluate(library_load(), questions, columns, "embedding", 5, embed=same_vectors)
    assert_scoreboard_is(at, wanted)
    assert at.query_params["embedder"] == "team"  # the link keeps the name
    assert KEY not in everything_shown(at)


def test_a_link_naming_an_embedder_not_configured_is_ignored_with_a_note(
    server: HTTPServer,
) -> None:
    at = configured(server, embedder="http://evil.example/v1")
    notes = [shown(w.value) for w in at.warning]
    assert any(
        "names the embedder 'http://evil.example/v1', which is not configured" in n for n in notes
    )
    library_upload(at, "manifest.json")
    assert at.selectbox(key="embedder").value == ""  # the bundled one
    assert "embedder" not in at.query_params
    linked = configured(server, embedder="team")
    assert linked.selectbox(key="embedder").value == "team"


def test_without_configured_endpoints_there_is_no_picker() -> None:
    at = open_tab(AppTest.from_file(APP, default_timeout=120), "Retrieval")
    at.query_params["embedder"] = "team"
    at.run()
    library_upload(at, "manifest.json")
    assert not [s for s in at.selectbox if s.key in ("embedder", "draft_generator")]
    assert any("not configured" in shown(w.value) for w in at.warning)


def test_a_bad_endpoint_entry_is_not_offered(server: HTTPServer) -> None:
    at = open_tab(AppTest.from_file(APP, default_timeout=120), "Retrieval")
    at.secrets["embedders"] = {
        "files": {"base_url": "file:///etc/passwd", "model": "m"},
        "nomodel": {"base_url": server.url_for("/v1")},
        "good": {"base_url": server.url_for("/v1"), "model": "m"},
    }
    at.run()
    library_upload(at, "manifest.json")
    assert at.selectbox(key="embedder").options == ["WordLlama (bundled)", "good"]


def test_draft_from_a_boundary_with_a_configured_writer(server: HTTPServer) -> None:
    serve(server, asking, path="/v1/chat/completions")
    at = configured(server)
    library_upload(at, "manifest.json")
    assert at.selectbox(key="draft_generator").options == ["you", "writer"]
    at.selectbox(key="draft_generator").set_value("writer").run()
    at.button(key="draft_passage").click().run()
    assert not at.exception and not errors(at), errors(at)
    [sent] = requests(server, "/v1/chat/completions")
    assert sent["model"] == "stub-chat" and sent["temperature"] == 0
    question = at.text_input(key="new_question_text").value
    assert question and question.startswith("How does ")
    quote = at.text_area(key="new_question_quote").value
    assert quote and quote.split()[0] in sent["messages"][1]["content"]
    assert any("Check the question written for it" in shown(c.value) for c in at.caption)


def test_a_failing_writer_is_said_by_its_name_not_its_host(server: HTTPServer) -> None:
    down = json.dumps({"error": {"message": f"down, key {KEY}"}})
    server.expect_request("/v1/chat/completions").respond_with_data(down, status=401)
    at = configured(server)
    library_upload(at, "manifest.json")
    at.selectbox(key="draft_generator").set_value("writer").run()
    at.button(key="draft_passage").click().run()
    note = next(shown(c.value) for c in at.caption if "No question was written" in shown(c.value))
    assert "endpoint_unauthorized: writer answered 401" in note
    assert "127.0.0.1" not in note and KEY not in note
    assert at.text_input(key="new_question_text").value == ""
