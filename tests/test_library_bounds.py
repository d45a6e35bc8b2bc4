"""Issue #23, items 1, 2, 6 and 9: a library call made for a link, an upload or a file is
bounded (a regex parameter is refused where no deadline can stop it; on the command line
a call past --library-seconds is `library_timeout`), whatever a library raises is one
line with exit 2, chonkie-token places its chunks on any UTF-8 text, and a Ray address
that takes no connection is refused at once."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from contextlib import suppress
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from explorer.checking.chunk_map import chunk_maps
from explorer.checking.validate import validate_index, validate_index_bytes
from explorer.chunking.config import ParameterValue
from explorer.chunking.index import build_index
from explorer.chunking.policies import LIBRARY_POLICIES, make_config
from explorer.chunking.policies.libraries import LibraryPolicy
from explorer.errors import ErrorCode, ExplorerError
from explorer.jsonio import dump_json
from explorer.limits import Limits
from explorer.pipeline import MAX_COLUMNS, Settings
from explorer.sources.documents import DocumentRecord, document_record
from explorer.sources.loading import DirectoryReader, load_documents
from explorer.sources.manifest import parse_manifest
from tests import embedders
from tests.conftest import ROOT, ManifestBuilder, run_cli, run_module, sha256_hex
from tests.test_workers import ended

APP = str(ROOT / "app.py")
# Item 1's separator: catastrophic backtracking on any line without "Q!".
BACKTRACKING: dict[str, ParameterValue] = {"separators": ["(.+)+Q!"], "is_separator_regex": True}
LINK = {
    "langchain-recursive": "200",
    "langchain-recursive.separators": json.dumps(BACKTRACKING["separators"]),
    "langchain-recursive.is_separator_regex": "true",
}
EMOJI = "# Café\n\nDéjà vu 😀 naïve façade — 漢字 👩‍👩‍👧 ñ\n"


def refused(code: str, *args: str | Path, exit_code: int = 2) -> str:
    """Run the CLI; assert one line `error: code: …`, no traceback; return the line."""
    result = run_cli(*args)
    assert result.code == exit_code, result.err
    assert "Traceback" not in result.err
    lines = result.err.splitlines()
    assert len(lines) == 1, result.err
    assert lines[0].startswith(f"error: {code}: "), result.err
    return lines[0]


def one_document(make_manifest: ManifestBuilder, text: str) -> Path:
    data = text.encode()
    entry = {"source_id": "doc", "version": "1", "path": "doc.md", "sha256": sha256_hex(data)}
    return make_manifest({"doc.md": data}, documents=[entry])


def record(text: str) -> DocumentRecord:
    return document_record(
        {"source_id": "doc", "version": "1", "path": "doc.md", "sha256": "0" * 64}, text
    )


def forged_index(
    monkeypatch: pytest.MonkeyPatch, policy: str, parameters: dict[str, Any], text: str
) -> dict[str, Any]:
    """An index of `policy` with `parameters`, every digest right, built without calling
    the library (it would hang or fail): one chunk per document, as a library could give."""
    config = make_config(policy, 200, parameters=parameters)
    kind = type(LIBRARY_POLICIES[policy])
    with monkeypatch.context() as patch:
        patch.setattr(kind, "spans", lambda self, text, *_: [(0, len(text))])
        patch.setattr(kind, "require_stoppable", lambda *_: None)
        index = build_index([record(text)], config)
    return json.loads(json.dumps(index))  # type: ignore[no-any-return]


# -- item 6: one line, exit 2 ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("policy", "parameters", "code"),
    [
        ("langchain-markdown", ['headers_to_split_on=[["#"]]'], "library_failed"),
        ("chonkie-recursive", ["min_characters_per_chunk=0"], "unsupported_chunk_config"),
        ("chonkie-recursive", [f"min_characters_per_chunk={10**23}"], "unsupported_chunk_config"),
        (
            "langchain-recursive",
            ['separators=["("]', "is_separator_regex=true"],
            "library_failed",
        ),
    ],
)
def test_a_parameter_the_library_refuses_is_one_line(
    make_manifest: ManifestBuilder, policy: str, parameters: list[str], code: str
) -> None:
    manifest = one_document(make_manifest, "# Title\n\nSome text here.\n")
    given = [part for parameter in parameters for part in ("--param", parameter)]
    line = refused(code, "index", manifest, "--policy", policy, *given)
    assert policy in line


def test_semchunk_at_one_token_on_an_emoji_is_one_line(make_manifest: ManifestBuilder) -> None:
    manifest = one_document(make_manifest, EMOJI)
    line = refused("library_failed", "index", manifest, "--policy", "semchunk", "--max-tokens", "1")
    assert "RecursionError" in line and "'doc'" in line


def test_semchunk_at_one_token_on_pasted_emoji_is_an_error_not_an_exception() -> None:
    app = AppTest.from_file(APP, default_timeout=60)
    app.query_params["semchunk"] = "1t"
    app.run()
    app.radio(key="source").set_value("Paste text").run()
    app.text_area(key="paste").set_value(EMOJI).run()
    assert not app.exception
    assert any("library_failed" in e.value and "RecursionError" in e.value for e in app.error)


def test_validate_of_an_index_whose_headers_are_not_pairs_is_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    index = forged_index(monkeypatch, "langchain-markdown", {"headers_to_split_on": [["#"]]}, EMOJI)
    path = tmp_path / "index.json"
    path.write_text(json.dumps(index), encoding="utf-8")
    assert "langchain-markdown" in refused("library_failed", "validate", path)


def test_a_link_of_nine_columns_shows_eight_and_says_so() -> None:
    own = ";".join(f"fixed-char:{10 * n}" for n in range(1, 10 - len(LIBRARY_POLICIES)))
    query = {"columns": own}  # with every library's column, nine in all
    query.update((name, "100") for name in LIBRARY_POLICIES)
    settings, notes = Settings.from_query(query)
    assert len(settings.configs) == MAX_COLUMNS
    assert notes == ["Ignored the semchunk column from the link: a page shows at most 8 columns."]
    app = AppTest.from_file(APP, default_timeout=60)
    for key, value in query.items():
        app.query_params[key] = value
    app.run()
    assert not app.exception


class Narrow(embedders.Counting):
    """The test embedder's name with half its dimensions: a new model under an old name."""

    dimensions = embedders.DIMENSIONS // 2

    def embed(self, texts: list[str]) -> Any:
        wide = super().embed(texts)  # folded in half: never all zeros where it was not
        return wide[:, : self.dimensions] + wide[:, self.dimensions :]


def narrow() -> Narrow:
    return Narrow()


@pytest.mark.parametrize("mode", ["vector", "hybrid"])
def test_a_search_over_one_name_of_two_dimension_counts_is_one_line(
    make_manifest: ManifestBuilder, mode: str
) -> None:
    first = make_manifest(
        {"a.md": b"# A\n\nRefunds take ten days.\n"},
        documents=[
            {
                "source_id": "a",
                "version": "1",
                "path": "a.md",
                "sha256": sha256_hex(b"# A\n\nRefunds take ten days.\n"),
                "access_scope": "acme",
            }
        ],
    )
    db = first.parent / "index.db"
    assert run_cli("ingest", first, "--db", db, "--embedder", "tests.embedders:counting").code == 0
    text = b"# B\n\nParcels ship on Mondays.\n"
    entry = {"source_id": "b", "version": "1", "path": "b.md", "sha256": sha256_hex(text)}
    (first.parent / "b.md").write_bytes(text)
    manifest = json.loads(first.read_text())
    manifest["documents"].append({**entry, "access_scope": "acme"})
    first.write_text(json.dumps(manifest))
    narrow_name = f"{__name__}:narrow"
    assert run_cli("ingest", first, "--db", db, "--embedder", narrow_name).code == 0
    line = refused(
        "invalid_embedder",
        "search", "refunds", "--tenant", "acme", "--db", db, "--mode", mode,
        "--embedder", narrow_name,
    )  # fmt: skip
    assert "16 dimensions" in line and "32" in line


# -- chonkie-token on any UTF-8 text --------------------------------------------------------


def random_text(seed: int) -> str:
    pieces = ["😀", "é", "a", " ", "漢", "👩‍👩‍👧", "\n", "ñ", "x", "—"]
    generator = random.Random(seed)
    return "# Café\n\n" + "".join(generator.choice(pieces) for _ in range(2_000))


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize(("size", "overlap"), [(64, 0), (64, 16), (1, 0), (7, 3)])
def test_chonkie_token_places_its_windows_on_any_text(seed: int, size: int, overlap: int) -> None:
    text = random_text(seed)
    config = make_config("chonkie-token", max_tokens=size, overlap=overlap)
    index = build_index([record(text)], config)
    assert validate_index(json.loads(json.dumps(index))) == index
    spans = [(c["start"], c["end"]) for c in index["chunks"]]
    assert spans == sorted(spans) and len(set(spans)) == len(spans)
    assert spans[0][0] == 0 and spans[-1][1] == len(text)
    if overlap == 0:  # windows follow each other, a split character in both
        assert all(b[0] <= a[1] for a, b in pairwise(spans))


@settings(max_examples=60, deadline=None)
@given(
    st.text(
        st.characters(exclude_categories=["Cs"], exclude_characters="\r\x00"), min_size=1
    ).filter(str.strip),
    st.integers(1, 9),
)
def test_chonkie_token_places_any_text(body: str, size: int) -> None:
    text = "# T\n\n" + body  # validate admits a v1 document: a leading heading
    index = build_index([record(text)], make_config("chonkie-token", max_tokens=size))
    assert validate_index(json.loads(json.dumps(index))) == index
    assert index["chunks"][0]["start"] == 0 and index["chunks"][-1]["end"] == len(text)


def test_chonkie_token_indexes_accents_and_emoji_on_the_command_line(
    make_manifest: ManifestBuilder, tmp_path: Path
) -> None:
    manifest = one_document(make_manifest, random_text(0))
    out = tmp_path / "index.json"
    result = run_cli(
        "index", manifest, "--policy", "chonkie-token", "--max-tokens", "64", "--out", out
    )
    assert result.code == 0, result.err
    assert run_cli("validate", out).code == 0


@pytest.mark.parametrize("policy", ["chonkie-token", "chonkie-recursive"])
def test_chonkie_in_tokens_reads_special_token_text_as_text(policy: str) -> None:
    text = "# T\n\nhello <|endoftext|> world, and more words after it.\n"
    index = build_index([record(text)], make_config(policy, max_tokens=4))
    assert "".join(c["text"] for c in index["chunks"]).count("<|endoftext|>") >= 1


# -- items 1 and 2: a regex runs only where a deadline can stop it --------------------------


def test_a_link_with_a_regex_parameter_is_ignored_with_a_note() -> None:
    settings, notes = Settings.from_query(LINK)
    assert all(config.library is None for config in settings.configs)
    [note] = notes
    assert note.startswith("Ignored the langchain-recursive column from the link: ")
    assert "is_separator_regex=true" in note


def test_the_sidebar_refuses_a_regex_parameter() -> None:
    app = AppTest.from_file(APP, default_timeout=60)
    app.run()
    app.checkbox(key="live_langchain-recursive_on").check().run()
    app.text_area(key="live_langchain-recursive_parameters").input(json.dumps(BACKTRACKING)).run()
    assert not app.exception
    assert any("unsafe_parameter" in e.value for e in app.error)


def test_the_apps_validator_refuses_a_regex_index_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    index = forged_index(monkeypatch, "langchain-recursive", BACKTRACKING, "# T\n\n" + "a" * 60)
    data = json.dumps(index).encode()
    began = time.monotonic()
    with pytest.raises(ExplorerError) as caught:
        validate_index_bytes(data)
    assert caught.value.code is ErrorCode.UNSAFE_PARAMETER
    app = AppTest.from_file(APP, default_timeout=60)
    app.run()
    app.file_uploader(key="validate_upload").set_value(
        [("index.json", data, "application/json")]
    ).run()
    assert any("unsafe_parameter" in e.value for e in app.error)
    assert time.monotonic() - began < 30


def test_the_apps_validator_names_a_config_in_tokens() -> None:
    config = make_config("chonkie-token", max_tokens=64)
    index = build_index([record(random_text(2))], config)
    app = AppTest.from_file(APP, default_timeout=60)
    app.run()
    app.file_uploader(key="validate_upload").set_value(
        [("index.json", json.dumps(index).encode(), "application/json")]
    ).run()
    assert not app.exception
    [success] = app.success
    assert "max_tokens 64" in success.value.replace("\\_", "_")


def test_validate_stops_a_regex_past_its_time_limit(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    index = forged_index(monkeypatch, "langchain-recursive", BACKTRACKING, "# T\n\n" + "a" * 60)
    path = tmp_path / "index.json"
    path.write_text(json.dumps(index), encoding="utf-8")
    began = time.monotonic()
    line = refused("library_timeout", "validate", path, "--library-seconds", "1")
    assert time.monotonic() - began < 10  # once, not again on the strict path
    assert "langchain-recursive, max_chars 200" in line and "--library-seconds" in line


def test_chunk_map_check_stops_a_regex_past_its_time_limit(
    monkeypatch: pytest.MonkeyPatch, make_manifest: ManifestBuilder
) -> None:
    manifest = one_document(make_manifest, "# T\n\n" + "a" * 60 + "\n")
    load = load_documents(parse_manifest(manifest.read_bytes()), DirectoryReader(manifest.parent))
    config = make_config("langchain-recursive", 200, parameters=BACKTRACKING)
    kind = type(LIBRARY_POLICIES["langchain-recursive"])
    with monkeypatch.context() as patch:  # built without calling the library
        patch.setattr(kind, "spans", lambda self, text, *_: [(0, len(text))])
        patch.setattr(kind, "require_stoppable", lambda *_: None)
        [payload] = chunk_maps(load.documents, config)
    path = manifest.parent / "chunk-map.json"
    path.write_text(dump_json(payload), encoding="utf-8")
    began = time.monotonic()
    refused("library_timeout", "chunk-map", manifest, "--check", path, "--library-seconds", "1")
    assert time.monotonic() - began < 10


def test_index_stops_a_regex_past_its_time_limit_and_the_next_call_works(
    make_manifest: ManifestBuilder,
) -> None:
    manifest = one_document(make_manifest, "# T\n\n" + "a" * 60 + "\n")
    regex = ["--param", 'separators=["(.+)+Q!"]', "--param", "is_separator_regex=true"]
    began = time.monotonic()
    refused("library_timeout", "index", manifest, "--policy", "langchain-recursive", *regex,
            "--library-seconds", "1")  # fmt: skip
    assert time.monotonic() - began < 10
    result = run_cli("index", manifest, "--policy", "langchain-recursive", "--max-chars", "20")
    assert result.code == 0, result.err


def test_a_library_call_under_a_time_limit_gives_the_same_chunks() -> None:
    text = (ROOT / "fixtures" / "library" / "docs" / "shipping.md").read_text(encoding="utf-8")
    for policy in LIBRARY_POLICIES.values():
        assert isinstance(policy, LibraryPolicy)
        sized = policy.default_max_chars is not None
        config = make_config(policy.name, max_tokens=32) if sized else make_config(policy.name)
        assert build_index([record(text)], config, Limits(library_seconds=30)) == build_index(
            [record(text)], config
        )


# -- item 9 -----------------------------------------------------------------------------------


def test_a_ray_address_that_takes_no_connection_is_refused_at_once() -> None:
    pytest.importorskip("ray")
    manifest = ROOT / "fixtures" / "aster" / "manifest.json"
    began = time.monotonic()
    result = run_module("index", manifest, "--policy", "heading-aware", "--engine", "ray",
                        "--address", "127.0.0.1:1")  # fmt: skip
    assert time.monotonic() - began < 30
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "error: engine_unavailable: cannot join the Ray cluster at '127.0.0.1:1': no connection "
        "within 5 s (Connection refused)"
    ]


def _open_descriptors() -> list[tuple[int, int]]:
    """Each descriptor this process has open, with the inode it refers to."""
    found = []
    for name in os.listdir("/proc/self/fd"):
        try:
            found.append((int(name), os.fstat(int(name)).st_ino))
        except OSError:  # the listing's own descriptor, closed by now
            continue
    return sorted(found)


def _children(pid: int) -> set[int]:
    """The processes `pid` has forked and not yet reaped, from every thread of it."""
    found: set[int] = set()
    with suppress(OSError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            with suppress(OSError):
                found.update(int(child) for child in (task / "children").read_text().split())
    return found


def _busy(pid: int) -> bool:
    """Running on a CPU or ready to (`R`), as a backtracking regex is."""
    with suppress(OSError):
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "R"
    return False


@pytest.mark.parametrize("command", ["compare", "validate"])
def test_a_serving_child_dies_with_its_command_killed_outright(
    monkeypatch: pytest.MonkeyPatch,
    make_manifest: ManifestBuilder,
    tmp_path: Path,
    command: str,
) -> None:
    """Issue #37 item 15: SIGKILL (a CI timeout's) runs none of the command's cleanup;
    the kernel ends the child serving its library call (PR_SET_PDEATHSIG), which would
    otherwise backtrack at full CPU for ever, adopted by init."""
    text = "# T\n\n" + "a" * 60 + "\n"
    if command == "compare":
        regex = ["--param", 'separators=["(.+)+Q!"]', "--param", "is_separator_regex=true"]
        args = [str(one_document(make_manifest, text)), "--policy", "langchain-recursive", *regex]
    else:
        path = tmp_path / "index.json"
        path.write_text(
            json.dumps(forged_index(monkeypatch, "langchain-recursive", BACKTRACKING, text))
        )
        args = [str(path)]
    running = subprocess.Popen(
        [sys.executable, "-m", "explorer", command, *args, "--library-seconds", "600"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        serving: set[int] = set()
        while not serving and running.poll() is None and time.monotonic() < deadline:
            serving = {pid for pid in _children(running.pid) if _busy(pid)}
            time.sleep(0.01)
        assert serving, "the command ended before its serving child was seen at work"
        running.kill()
        running.wait(timeout=30)
        deadline = time.monotonic() + 2
        while not all(map(ended, serving)) and time.monotonic() < deadline:
            time.sleep(0.01)
        left = [pid for pid in serving if not ended(pid)]
    finally:
        running.kill()
    for pid in left:  # leave no runaway behind, whatever the outcome
        with suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    assert left == [], "the serving child outlived its command by 2 s"


def test_a_serving_child_outlives_the_thread_that_first_called_it() -> None:
    """The death signal comes when the thread that forked the child ends, and the app's
    script threads end after each run: the child must serve the next run still."""
    from explorer.chunking import deadline

    if deadline._child is not None:
        deadline._child.end()
        deadline._child = None
    timed_out = lambda: ExplorerError(ErrorCode.USAGE, "timed out")  # noqa: E731
    first: list[int] = []
    thread = threading.Thread(
        target=lambda: first.append(deadline.call_within(30, timed_out, os.getpid))
    )
    thread.start()
    thread.join()
    time.sleep(0.2)
    assert first and deadline.call_within(30, timed_out, os.getpid) == first[0]


def test_the_serving_child_keeps_no_descriptor_of_the_parent() -> None:
    """A pipe the parent holds (a browser driver's, a reader's of its output) must close
    when the parent closes it: the child that serves library calls keeps none of it."""
    from explorer.chunking.deadline import call_within

    reading, writing = os.pipe()
    pipe = os.fstat(reading).st_ino
    try:
        held = call_within(
            30, lambda: ExplorerError(ErrorCode.USAGE, "timed out"), _open_descriptors
        )
    finally:
        os.close(writing)
        os.close(reading)
    assert pipe not in {inode for _, inode in held}
    assert len(held) <= 4, held  # the standard three and its pipe to the parent


def _answer_after(value: int, text: str) -> tuple[int, str]:
    time.sleep(0.01 * (value % 3))
    return value, text[:10]


def test_library_calls_from_threads_at_once_each_get_their_own_answer() -> None:
    """The app's sessions are threads of one process sharing one serving child: each call
    gets its own answer, never another session's."""
    from explorer.chunking import deadline

    answers: dict[int, tuple[int, str]] = {}

    def call(n: int) -> None:
        timed_out = lambda: ExplorerError(ErrorCode.LIBRARY_TIMEOUT, "too slow")  # noqa: E731
        text = f"{n:010d}" * 40_000  # 400 KB: a pipe takes it in several writes
        answers[n] = deadline.call_within(30, timed_out, _answer_after, n, text)

    threads = [threading.Thread(target=call, args=(n,)) for n in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert answers == {n: (n, f"{n:010d}") for n in range(12)}
