"""Models behind an OpenAI-compatible API (issue 35), against a real HTTP server on
127.0.0.1 (pytest-httpserver): `--embedder openai:MODEL` and `questions draft --generator
openai:MODEL`, their bounded waiting, their refusals, the vector cache and the key."""

from __future__ import annotations

import ast
import base64
import contextlib
import email.utils
import functools
import json
import re
import socket
import sqlite3
import ssl
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from explorer.chunking.index import build_index
from explorer.chunking.policies import make_config
from explorer.errors import ErrorCode
from explorer.retrieval.drafting import COPIED_WORDS, PROMPT, SYSTEM
from explorer.retrieval.endpoint import (
    MAX_BODY_BYTES,
    MAX_WAIT_SECONDS,
    Endpoint,
    EndpointOptions,
    _retry_after,
    backoff,
)
from explorer.sources.loading import DirectoryReader, load_documents
from explorer.sources.manifest import parse_manifest
from tests import embedders
from tests.conftest import ROOT, run_cli

LIBRARY = ROOT / "fixtures" / "library" / "manifest.json"
MARKDOWN_DOCS = ROOT / "fixtures" / "markdown-docs" / "manifest.json"
SMALL = ("--policy", "heading-aware", "--max-tokens", "64", "--grammar", "markdown")
KEY_ENV = "STUB_API_KEY"
KEY = "sk-stub-5eCr3t-0123456789abcdef"
Handler = Callable[[Request], Response]


@pytest.fixture
def server() -> Iterator[HTTPServer]:
    """A threaded server: a request that hangs does not hold the next one."""
    stub = HTTPServer(host="127.0.0.1", port=0, threaded=True)
    stub.start()
    yield stub
    stub.clear()
    stub.stop()


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def json_response(body: object, status: int = 200, **headers: str) -> Response:
    return Response(
        json.dumps(body), status=status, headers=headers, content_type="application/json"
    )


def vectors_of(texts: list[str]) -> dict[str, Any]:
    """The answer the module plug-in `tests.embedders` would give, as the API gives it."""
    data = [
        {"object": "embedding", "index": i, "embedding": embedders._vector(t).tolist()}
        for i, t in enumerate(texts)
    ]
    return {"object": "list", "data": data, "usage": {"prompt_tokens": 3 * len(texts)}}


def embeddings(request: Request) -> Response:
    if request.headers.get("Authorization") != f"Bearer {KEY}":
        return json_response({"error": {"message": "no key"}}, 401)
    return json_response(vectors_of(request.get_json()["input"]))


def serve(server: HTTPServer, *handlers: Handler, path: str = "/v1/embeddings") -> None:
    """Each handler answers one request in turn; the last answers every later one."""
    calls = iter(range(10**6))

    def answer(request: Request) -> Response:
        return handlers[min(next(calls), len(handlers) - 1)](request)

    server.expect_request(path, method="POST").respond_with_handler(answer)


def requests(server: HTTPServer, path: str = "/v1/embeddings") -> list[dict[str, Any]]:
    return [json.loads(request.get_data()) for request, _ in server.log if request.path == path]


def api(server: HTTPServer, model: str = "stub-embed") -> tuple[str, ...]:
    return (
        "--embedder", f"openai:{model}", "--base-url", server.url_for("/v1"),
        "--api-key-env", KEY_ENV,
    )  # fmt: skip


def evaluate(tmp_path: Path, *extra: str | Path, questions: Path | None = None) -> Any:
    questions = questions or ROOT / "fixtures" / "library" / "questions.json"
    return run_cli(
        "evaluate", LIBRARY, "--questions", questions, "--policy", "paragraph",
        "--retriever", "embedding", "--vector-cache", tmp_path / "vectors.db", *extra,
    )  # fmt: skip


def no_key_anywhere(*texts: str, files: tuple[Path, ...] = ()) -> None:
    for text in texts:
        assert KEY not in text
    for path in files:
        assert KEY.encode() not in path.read_bytes()


# --- evaluate: the same ranking as the module plug-in, then nothing sent again -----------


def test_evaluate_ranks_as_the_module_plugin_and_a_rerun_sends_nothing(
    server: HTTPServer, tmp_path: Path
) -> None:
    serve(server, embeddings)
    out = tmp_path / "api.json"
    first = evaluate(tmp_path, *api(server), "--embed-batch", "7", "--out", out)
    assert first.code == 0, first.err
    sent = requests(server)
    texts = [text for body in sent for text in body["input"]]
    assert len(texts) == len(set(texts)) > 7 and all(len(b["input"]) <= 7 for b in sent)
    assert all(b["model"] == "stub-embed" and "dimensions" not in b for b in sent)
    plugin = evaluate(
        tmp_path, "--embedder", "tests.embedders:counting", "--out", tmp_path / "m.json"
    )
    assert plugin.code == 0, plugin.err
    by_api, by_module = json.loads(out.read_text()), json.loads((tmp_path / "m.json").read_text())
    assert by_api["policies"] == by_module["policies"]  # every ranking and figure
    name = f"openai:{server.host}:{server.port}/stub-embed"
    assert by_api["embedder"] == {
        "name": name,
        "model": "stub-embed",
        "dimensions": embedders.DIMENSIONS,
        "requests": len(sent),
        "input_tokens": 3 * len(texts),
    }
    assert f"usage: {len(sent)} request(s), {3 * len(texts)} input token(s)" in first.err
    server.clear_log()
    again = evaluate(tmp_path, *api(server), "--out", out)
    assert again.code == 0, again.err
    assert requests(server) == []  # every text cached under the same identity
    assert json.loads(out.read_text())["embedder"]["requests"] == 0
    assert f"vectors: 0 computed, {len(texts)} reused (embedder '{name}'" in again.err
    cache = tmp_path / "vectors.db"
    names = sqlite3.connect(cache).execute("SELECT DISTINCT embedder FROM vectors").fetchall()
    assert sorted(names) == sorted([(name,), (embedders.NAME,)])
    no_key_anywhere(first.out, first.err, again.err, files=(cache, out))


def test_dimensions_are_asked_for_and_part_of_the_identity(
    server: HTTPServer, tmp_path: Path
) -> None:
    serve(server, embeddings)
    result = evaluate(tmp_path, *api(server), "--dimensions", "32", "--out", tmp_path / "e.json")
    assert result.code == 0, result.err
    assert {body["dimensions"] for body in requests(server)} == {32}
    recorded = json.loads((tmp_path / "e.json").read_text())["embedder"]
    assert recorded["name"].endswith("/stub-embed/32") and recorded["dimensions"] == 32
    wrong = evaluate(tmp_path, *api(server, "other"), "--dimensions", "16")
    assert wrong.code == 2
    assert "error: embedding_failed: column 'paragraph': " in wrong.err
    assert "answered with 32 dimensions, not the 16 asked for" in wrong.err


def test_batches_stored_survive_a_failure_later_in_the_run(
    server: HTTPServer, tmp_path: Path
) -> None:
    down = json_response({"error": {"message": "overloaded"}}, 503)
    serve(server, *[embeddings] * 4, lambda request: down)  # questions: 4 + 1
    options = (*api(server), "--embed-batch", "4", "--max-retries", "0")
    failed = evaluate(tmp_path, *options)
    assert failed.code == 2
    assert failed.err.splitlines()[-1].startswith(
        "error: endpoint_failed: column 'paragraph': the embedder"
    )
    assert (
        "failed after 8 of " in failed.err and "503" in failed.err and "'overloaded'" in failed.err
    )
    kept = sqlite3.connect(tmp_path / "vectors.db").execute("SELECT count(*) FROM vectors")
    assert kept.fetchone()[0] == 5 + 8  # the questions, then two batches of chunks
    server.clear()
    serve(server, embeddings)
    retried = evaluate(tmp_path, *options)
    assert retried.code == 0, retried.err
    sent = [text for body in requests(server) for text in body["input"]]
    assert f"vectors: {len(sent)} computed, 13 reused" in retried.err


# --- bounded waiting -----------------------------------------------------------------------


def test_429_with_retry_after_is_waited_for(server: HTTPServer, tmp_path: Path) -> None:
    busy = json_response({"error": {"message": "slow down"}}, 429, **{"Retry-After": "1"})
    serve(server, lambda request: busy, embeddings)
    started = time.monotonic()
    result = evaluate(tmp_path, *api(server), "--embed-batch", "1000")
    assert result.code == 0, result.err
    assert time.monotonic() - started >= 1.0  # the first backoff alone would be 0.5 s
    assert len(requests(server)) == 3  # the questions, again, then the chunks


@pytest.mark.parametrize("status", [500, 408, 409, 429, 502, 503])
def test_a_passing_failure_then_success(server: HTTPServer, tmp_path: Path, status: int) -> None:
    broken = json_response({"error": {"message": "boom"}}, status)
    serve(server, lambda request: broken, embeddings)
    result = evaluate(tmp_path, *api(server), "--embed-batch", "1000")
    assert result.code == 0, result.err
    assert len(requests(server)) == 3  # the questions, again, then the chunks


def test_500_forever_uses_up_the_retries(server: HTTPServer, tmp_path: Path) -> None:
    serve(server, lambda request: json_response({"error": {"message": "x" * 500}}, 500))
    result = evaluate(tmp_path, *api(server), "--max-retries", "2")
    assert result.code == 2
    assert result.err.splitlines()[-1].startswith("error: endpoint_failed: ")
    assert "failed 3 time(s) (--max-retries 2): it answered 500: 'xxx" in result.err
    assert "x" * 201 not in result.err  # the server's message, at most 200 characters
    assert len(requests(server)) == 3


def test_401_ends_at_once_and_the_key_is_masked(server: HTTPServer, tmp_path: Path) -> None:
    def echo(request: Request) -> Response:
        given = request.headers.get("Authorization", "")
        return json_response({"error": {"message": f"bad key {given}"}}, 401)

    serve(server, echo)
    result = evaluate(tmp_path, *api(server))
    assert result.code == 2
    assert result.err.splitlines()[-1].startswith("error: endpoint_unauthorized: ")
    assert f"answered 401: 'bad key Bearer ***': check the key in ${KEY_ENV}" in result.err
    assert len(requests(server)) == 1
    no_key_anywhere(result.out, result.err, files=(tmp_path / "vectors.db",))


def test_a_base_urls_password_is_never_shown(server: HTTPServer, tmp_path: Path) -> None:
    """The user and password of `http://user:password@host` are sent as Basic
    credentials: a server that echoes them gets them masked, as the key is."""

    def echo(request: Request) -> Response:
        given = request.headers.get("Authorization", "")
        return json_response({"error": {"message": f"bad credentials {given}"}}, 400)

    serve(server, echo)
    url = server.url_for("/v1").replace("http://", "http://alice:hunter%402@")
    result = evaluate(
        tmp_path, "--embedder", "openai:m", "--base-url", url, "--api-key-env", KEY_ENV
    )
    assert result.code == 2 and len(requests(server)) == 1
    assert "answered 400: 'bad credentials Basic ***'" in result.err
    encoded = base64.b64encode(b"alice:hunter@2").decode()
    for secret in ("hunter", encoded, "alice:"):
        assert secret not in result.err + result.out


@pytest.mark.parametrize("key", ["sk-stub-\u00e9t\u00e9", "sk-stub\nX-Injected: 1"])
def test_a_key_no_header_can_carry_is_refused_in_one_line(
    server: HTTPServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str
) -> None:
    monkeypatch.setenv(KEY_ENV, key)
    serve(server, embeddings)
    result = evaluate(tmp_path, *api(server))
    assert result.code == 2, result.err
    assert result.err.splitlines()[-1].startswith("error: endpoint_unauthorized: ")
    assert "Traceback" not in result.err and key not in result.err
    assert requests(server) == []


def test_another_4xx_ends_at_once_naming_status_and_message(
    server: HTTPServer, tmp_path: Path
) -> None:
    serve(server, lambda request: json_response({"error": {"message": "no such model"}}, 404))
    result = evaluate(tmp_path, *api(server))
    assert result.code == 2 and len(requests(server)) == 1
    assert "error: endpoint_failed: " in result.err and "404: 'no such model'" in result.err


def test_a_server_that_hangs_past_the_timeout(server: HTTPServer, tmp_path: Path) -> None:
    def hang(request: Request) -> Response:
        time.sleep(2.5)
        return embeddings(request)

    serve(server, hang)
    started = time.monotonic()
    result = evaluate(tmp_path, *api(server), "--request-seconds", "1", "--max-retries", "1")
    assert result.code == 2
    assert "error: endpoint_failed: " in result.err and "no answer within 1 s" in result.err
    assert time.monotonic() - started < 4  # two requests of 1 s and one backoff of 0.5 s


def trickling_server(wrap: Callable[[socket.socket], socket.socket]) -> Iterator[str]:
    """A raw server that answers each request's headers one byte every 0.2 s: every read
    is quick, the whole answer never comes (its base URL). `wrap` makes a connection TLS."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stop = threading.Event()

    def trickle(raw: socket.socket) -> None:
        with contextlib.suppress(OSError), wrap(raw) as connection:  # OSError: the client cut it
            connection.recv(65536)
            for byte in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 1000:
                if stop.wait(0.2):
                    return
                connection.sendall(bytes([byte]))

    def accept() -> None:
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            threading.Thread(target=trickle, args=(connection,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"127.0.0.1:{listener.getsockname()[1]}/v1"
    stop.set()
    thread.join()
    listener.close()


@pytest.fixture
def trickler() -> Iterator[str]:
    for place in trickling_server(lambda raw: raw):
        yield f"http://{place}"


@pytest.fixture
def tls_trickler(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The trickler behind TLS, its self-signed certificate trusted through SSL_CERT_FILE."""
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
         "-out", cert, "-days", "1", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True,
    )  # fmt: skip
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    for place in trickling_server(lambda raw: context.wrap_socket(raw, server_side=True)):
        yield f"https://{place}"


@pytest.mark.parametrize("served", ["trickler", "tls_trickler"])
def test_a_server_that_trickles_its_headers_is_cut_at_the_timeout(
    served: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """`--request-seconds` bounds the whole request, not each read, over TLS too."""
    url = request.getfixturevalue(served)
    started = time.monotonic()
    result = evaluate(
        tmp_path, "--embedder", "openai:m", "--base-url", url, "--api-key-env", KEY_ENV,
        "--request-seconds", "1", "--max-retries", "1",
    )  # fmt: skip
    assert result.code == 2, result.err
    assert "error: endpoint_failed: " in result.err and "no answer within 1 s" in result.err
    assert time.monotonic() - started < 6  # two requests of 1 s and one backoff of 0.5 s


# --- wrong answers -------------------------------------------------------------------------


def _short(request: Request) -> Response:
    body = vectors_of(request.get_json()["input"])
    body["data"].pop()
    return json_response(body)


def _nan(request: Request) -> Response:
    body = json.dumps(vectors_of(request.get_json()["input"]))
    return Response(body.replace("1.0", "NaN", 1), content_type="application/json")


def _changing(request: Request) -> Response:
    body = vectors_of(request.get_json()["input"])
    body["data"][-1]["embedding"].pop()
    return json_response(body)


def _not_the_shape(request: Request) -> Response:
    return json_response({"embeddings": [[1.0]]})


def _huge(request: Request) -> Response:
    def pieces() -> Iterator[bytes]:
        yield b'{"data": [{"index": 0, "embedding": ['
        piece = b"0.125," * (2**20 // 6)
        for _ in range(100 * 10**6 // len(piece)):
            _huge.sent += len(piece)  # type: ignore[attr-defined]
            yield piece
        yield b"1]}]}"

    return Response(pieces(), content_type="application/json")


def _nested(request: Request) -> Response:
    """200 KB of brackets: beyond orjson's depth, and Python's recursion in json."""
    return Response(b"[" * 100_000 + b"]" * 100_000, content_type="application/json")


@pytest.mark.parametrize(
    ("handler", "says"),
    [
        (_nested, "nested too deeply"),
        (_short, "vectors for "),
        (_nan, "a NaN value"),
        (_changing, "dimensions that change (31 after 32)"),
        (_not_the_shape, "a body that is not the API's shape"),
        (_huge, f"an answer larger than {MAX_BODY_BYTES // 2**20} MiB"),
    ],
)
def test_a_wrong_answer_is_embedding_failed(
    server: HTTPServer, tmp_path: Path, handler: Handler, says: str
) -> None:
    _huge.sent = 0  # type: ignore[attr-defined]
    serve(server, handler)
    result = evaluate(tmp_path, *api(server), "--max-retries", "0")
    assert result.code == 2
    assert result.err.splitlines()[-1].startswith("error: embedding_failed: column 'paragraph': ")
    assert says in result.err
    assert len(requests(server)) == 1  # a wrong answer is not retried
    assert _huge.sent < 100 * 10**6  # type: ignore[attr-defined]


# --- the store: ingest and search --------------------------------------------------------


def test_ingest_and_search_through_the_api(server: HTTPServer, tmp_path: Path) -> None:
    serve(server, embeddings)
    db = tmp_path / "index.db"
    ingested = run_cli("ingest", LIBRARY, "--db", db, *api(server), "--embed-batch", "16")
    assert ingested.code == 0, ingested.err
    assert "usage: " in ingested.err and "input token(s)" in ingested.err
    sent = len(requests(server))
    found = run_cli(
        "search", "refund", "--tenant", "acme", "--db", db, "--mode", "vector", *api(server),
        "--json",
    )  # fmt: skip
    assert found.code == 0, found.err
    assert found.json()["hits"] and len(requests(server)) == sent + 1  # the query only
    no_key_anywhere(ingested.out, ingested.err, found.out, found.err, files=(db,))


def test_endpoint_options_belong_to_openai(tmp_path: Path) -> None:
    result = evaluate(tmp_path, "--embedder", "tests.embedders:counting", "--dimensions", "8")
    assert result.err.startswith("error: usage: --dimensions is for --embedder openai:MODEL")
    bad = evaluate(tmp_path, "--embedder", "openai:m", "--base-url", "file:///etc/passwd")
    assert bad.err.startswith("error: invalid_embedder: the base URL must be an http")
    model = evaluate(tmp_path, "--embedder", "openai:")
    assert model.err.startswith("error: invalid_embedder: --embedder openai:MODEL takes")


# --- questions draft -----------------------------------------------------------------------


def sides(request: Request) -> tuple[str, str]:
    prompt = request.get_json()["messages"][1]["content"]
    before = re.search(r"<before>\n(.*)\n</before>", prompt, re.S)
    after = re.search(r"<after>\n(.*)\n</after>", prompt, re.S)
    assert before and after
    return before[1], after[1]


def asking(request: Request) -> Response:
    """A question naming a word of each side: every passage gets its own."""
    before, after = sides(request)
    first, last = re.findall(r"[a-z]{3,}", before)[0], re.findall(r"[a-z]{3,}", after)[-1]
    question = f"How does {first} lead to {last} ({len(before)})?"
    content = json.dumps({"question": question})
    return json_response({"choices": [{"message": {"role": "assistant", "content": content}}]})


def draft(tmp_path: Path, server: HTTPServer, *extra: str) -> Any:
    return run_cli(
        "questions", "draft", MARKDOWN_DOCS, *SMALL, "--generator", "openai:stub-chat",
        "--base-url", server.url_for("/v1"), "--api-key-env", KEY_ENV,
        "--out", tmp_path / "q.json", *extra,
    )  # fmt: skip


def test_draft_writes_n_questions_across_boundaries_that_evaluate_measures(
    server: HTTPServer, tmp_path: Path
) -> None:
    serve(server, asking, path="/v1/chat/completions")
    result = draft(tmp_path, server, "--n", "5", "--seed", "4")
    assert result.code == 0, result.err
    data = json.loads((tmp_path / "q.json").read_text())
    assert len(data["questions"]) == 5 and all(q["question"] for q in data["questions"])
    assert data["draft"] == {
        "generator": f"openai:{server.host}:{server.port}/stub-chat",
        "asked": 5,
        "kept": 5,
        "left_out": 0,
        "reasons": [],
    }
    sent = requests(server, "/v1/chat/completions")
    assert len(sent) == 5
    assert all(b["temperature"] == 0 and b["seed"] == 4 and b["model"] == "stub-chat" for b in sent)
    assert sent[0]["messages"][0] == {"role": "system", "content": SYSTEM}
    # each reference lies across a boundary of the policy it was drafted from
    manifest = parse_manifest(MARKDOWN_DOCS.read_bytes())
    documents = load_documents(manifest, DirectoryReader(MARKDOWN_DOCS.parent)).documents
    config = make_config("heading-aware", max_tokens=64, grammar="markdown")
    chunks = build_index(documents, config)["chunks"]
    for question in data["questions"]:
        [reference] = question["references"]
        start, end = reference["start"], reference["end"]
        own = [c for c in chunks if c["source_id"] == question["source_id"]]
        assert any(start < c["end"] < end for c in own)
        assert not any(c["start"] <= start and end <= c["end"] for c in own)
    measured = run_cli("evaluate", MARKDOWN_DOCS, "--questions", tmp_path / "q.json", *SMALL)
    assert measured.code == 0, measured.err
    assert len(measured.json()["policies"][0]["questions"]) == 5
    no_key_anywhere(result.out, result.err, files=(tmp_path / "q.json",))


def test_a_failed_question_is_reasked_twice_then_left_out(
    server: HTTPServer, tmp_path: Path
) -> None:
    def copying(request: Request) -> Response:
        before, after = sides(request)
        if before.startswith(first_before):  # the first passage: copied, every time
            content = json.dumps({"question": f"{before} {after}"})
            return json_response({"choices": [{"message": {"content": content}}]})
        return asking(request)

    serve(server, asking, path="/v1/chat/completions")
    plain = draft(tmp_path, server, "--n", "3")
    assert plain.code == 0, plain.err
    first_prompt = requests(server, "/v1/chat/completions")[0]["messages"][1]["content"]
    first_before = first_prompt.split("<before>\n")[1].split()[0]
    server.clear()
    serve(server, copying, path="/v1/chat/completions")
    result = draft(tmp_path, server, "--n", "3")
    assert result.code == 0, result.err
    data = json.loads((tmp_path / "q.json").read_text())
    report = data["draft"]
    assert (report["asked"], report["kept"], report["left_out"]) == (3, 2, 1)
    assert (
        report["reasons"][0]["reason"]
        == f"it copies {COPIED_WORDS} consecutive words of the passage"
    )
    seeds = [b["seed"] for b in requests(server, "/v1/chat/completions")]
    assert seeds == [1, 2, 3, 1, 1]  # asked three times with another seed, then left out
    assert "drafted: 3 asked, 2 kept, 1 left out" in result.err


def test_the_same_question_twice_and_answers_not_json_are_left_out(
    server: HTTPServer, tmp_path: Path
) -> None:
    same = {"choices": [{"message": {"content": '```json\n{"question": "Why?"}\n```'}}]}
    serve(server, lambda request: json_response(same), path="/v1/chat/completions")
    result = draft(tmp_path, server, "--n", "2")
    assert result.code == 0, result.err
    reasons = json.loads((tmp_path / "q.json").read_text())["draft"]["reasons"]
    assert [r["reason"] for r in reasons] == ["the same as another question"]
    server.clear()
    prose = {"choices": [{"message": {"content": "Sure! Here is a question."}}]}
    serve(server, lambda request: json_response(prose), path="/v1/chat/completions")
    none = draft(tmp_path, server, "--n", "2")
    assert none.code == 2
    assert none.err.startswith("error: generation_failed: ")
    assert 'the server answered with a message that is not JSON {"question": …}' in none.err


def test_a_server_without_seeds_is_asked_without(server: HTTPServer, tmp_path: Path) -> None:
    def no_seed(request: Request) -> Response:
        if "seed" in request.get_json():
            return json_response({"error": {"message": "Unknown parameter: 'seed'"}}, 400)
        return asking(request)

    serve(server, no_seed, path="/v1/chat/completions")
    result = draft(tmp_path, server, "--n", "2")
    assert result.code == 0, result.err
    assert ["seed" in b for b in requests(server, "/v1/chat/completions")] == [True, False, False]


def test_draft_keeps_the_key_rules(server: HTTPServer, tmp_path: Path) -> None:
    serve(
        server, lambda request: json_response({"error": "denied"}, 403), path="/v1/chat/completions"
    )
    result = draft(tmp_path, server, "--n", "2")
    assert result.code == 2 and result.err.startswith("error: endpoint_unauthorized: ")
    assert not (tmp_path / "q.json").exists()
    no_key_anywhere(result.out, result.err)


def test_the_prompt_marks_both_sides() -> None:
    assert "<before>\n{before}\n</before>" in PROMPT and "<after>\n{after}\n</after>" in PROMPT
    assert '{{"question": "..."}}' in PROMPT


def test_a_dropped_connection_is_retried(server: HTTPServer, tmp_path: Path) -> None:
    def dropped(request: Request) -> Response:
        def pieces() -> Iterator[bytes]:
            yield b'{"data": ['
            raise ConnectionAbortedError("the server went away")

        return Response(pieces(), headers={"Content-Length": "1000"})

    serve(server, dropped, embeddings)
    result = evaluate(tmp_path, *api(server))
    assert result.code == 0, result.err
    assert len(requests(server)) == 3  # the questions, again, then the chunks


def test_nothing_listening_uses_up_the_retries(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = evaluate(
        tmp_path, "--embedder", "openai:m", "--base-url", f"http://127.0.0.1:{port}/v1",
        "--max-retries", "1",
    )  # fmt: skip
    assert result.code == 2
    assert result.err.splitlines()[-1].startswith("error: endpoint_failed: ")
    assert "failed 2 time(s) (--max-retries 1): the connection failed (ConnectError)" in result.err


def test_ingest_records_a_refusing_endpoint_for_each_document(
    server: HTTPServer, tmp_path: Path
) -> None:
    serve(server, lambda request: json_response({"error": {"message": f"no {KEY}"}}, 401))
    db = tmp_path / "index.db"
    ingested = run_cli("ingest", LIBRARY, "--db", db, *api(server))
    assert ingested.code == 0, ingested.err
    warnings = [line for line in ingested.err.splitlines() if line.startswith("warning: ")]
    assert warnings and all("endpoint_unauthorized: acme/" in line for line in warnings)
    assert "failed" in ingested.out
    no_key_anywhere(ingested.out, ingested.err, files=(db,))


def test_a_sweep_through_the_api_revisits_no_text(server: HTTPServer, tmp_path: Path) -> None:
    serve(server, embeddings)
    sweep: tuple[str | Path, ...] = (
        "evaluate", LIBRARY, "--questions", ROOT / "fixtures" / "library" / "questions.json",
        "--sweep", "heading-aware:40:80:20", "--grammar", "markdown", "--retriever", "hybrid",
        "--vector-cache", tmp_path / "vectors.db", *api(server),
    )  # fmt: skip
    first = run_cli(*sweep)
    assert first.code == 0, first.err
    assert first.out.count("heading-aware@") == 3
    sent = requests(server)
    texts = [text for body in sent for text in body["input"]]
    assert len(texts) == len(set(texts))  # a chunk two sizes share is sent once
    server.clear_log()
    again = run_cli(*sweep)
    assert again.code == 0 and again.out == first.out
    assert requests(server) == [] and "usage: 0 request(s), 0 input token(s)" in again.err


@pytest.mark.parametrize(
    ("value", "seconds"),
    [("3", 3.0), ("0.5", 0.5), ("-4", 0.0), ("soon", None), ("", None), ("nan", None)],
)
def test_retry_after_in_seconds(value: str, seconds: float | None) -> None:
    assert _retry_after(httpx.Headers({"Retry-After": value})) == seconds


def test_retry_after_as_an_http_date() -> None:
    later = email.utils.format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    waited = _retry_after(httpx.Headers({"Retry-After": later}))
    assert waited is not None and 25 < waited <= 30
    assert backoff(0) == 0.5 and backoff(3) == 4.0 and backoff(20) == MAX_WAIT_SECONDS


@functools.cache
def keyed_endpoint() -> Endpoint:
    """An endpoint that holds `KEY` (made once: a client costs an SSL context)."""
    options = EndpointOptions(base_url="http://127.0.0.1:9/v1")
    return Endpoint(options, ErrorCode.USAGE, {"OPENAI_API_KEY": KEY})


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=600), st.integers(0, 600))
def test_a_server_message_is_short_and_never_shows_the_key(text: str, at: int) -> None:
    body = text[:at] + KEY + text[at:]
    for data in (body, json.dumps({"error": {"message": body}}), json.dumps({"detail": body})):
        message = keyed_endpoint()._message(bytearray(data.encode()))
        assert KEY not in message
        shown = message.removeprefix(": ")
        assert not shown or len(ast.literal_eval(shown).removesuffix("…")) <= 200


def test_dimensions_that_change_between_batches(server: HTTPServer, tmp_path: Path) -> None:
    serve(server, embeddings, _changing_all)
    result = evaluate(tmp_path, *api(server), "--max-retries", "0")
    assert result.code == 2
    assert "error: embedding_failed: " in result.err
    assert "dimensions that change (31 after 32)" in result.err
    kept = sqlite3.connect(tmp_path / "vectors.db").execute("SELECT count(*) FROM vectors")
    assert kept.fetchone()[0] == 5  # the first batch (the questions) stays


def _changing_all(request: Request) -> Response:
    body = vectors_of(request.get_json()["input"])
    for item in body["data"]:
        item["embedding"].pop()
    return json_response(body)


@pytest.mark.parametrize("url", ["http://[::1", "http://[::1]:99999/v1", "http://[nope]/v1"])
def test_a_base_url_urllib_cannot_read_is_one_line(tmp_path: Path, url: str) -> None:
    result = evaluate(tmp_path, "--embedder", "openai:m", "--base-url", url)
    assert result.code == 2 and "Traceback" not in result.err
    assert result.err.startswith("error: invalid_embedder: the base URL must be an http")


def test_request_seconds_of_0_is_refused_in_words_that_exclude_it(tmp_path: Path) -> None:
    endpoint = ("--embedder", "openai:m", "--base-url", "http://127.0.0.1:9/v1")
    result = evaluate(tmp_path, *endpoint, "--request-seconds", "0")
    assert result.err == (
        "error: usage: argument --request-seconds: '0' is not above 0 and at most 600 "
        "(see --help)\n"
    )


def test_a_chat_answer_nested_too_deeply_is_a_bad_answer() -> None:
    from explorer.retrieval.drafting import _question_of
    from explorer.retrieval.endpoint import BadAnswer

    content = '{"question": ' * 100_000 + '"q"' + "}" * 100_000
    with pytest.raises(BadAnswer, match="not JSON"):
        _question_of({"choices": [{"message": {"content": content}}]})
