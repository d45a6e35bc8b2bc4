"""The work a person does on the page outlives the upload: span checks and questions added
in the app survive adding or removing files (those whose document is still there), and
download as a manifest with its checks and a questions file."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from explorer import ExplorerError, parse_manifest
from explorer.retrieval.questions import QuestionSet, parse_questions, questions_json
from explorer.sources.kept import carried, document_digests
from explorer.sources.manifest import with_span_checks
from explorer.sources.uploads import bundle_from_files, manifest_json
from tests.conftest import MANIFEST, open_tab
from tests.test_app import UPLOAD, add_check, download_labels, errors, matrix, start
from tests.test_retrieval_app import add_question
from ui.retrieval import ADDED_ONLY

ALPHA = b"# Alpha\n\nThe key rotates every 30 days.\n\nOnly after the new key is deployed.\n"
BETA = b"# Beta\n\nRefunds are possible within 14 days.\n"
GAMMA = b"# Gamma\n\nA third document.\n"
CHECK = {"id": "rotation", "source_id": "alpha", "spans": [{"label": "a", "quote": "30 days"}]}


pytestmark = pytest.mark.usefixtures("private_index")


def plain(*files: tuple[str, bytes]) -> list[tuple[str, bytes, str]]:
    return [(name, data, "text/markdown") for name, data in files]


# -- the core --------------------------------------------------------------------------------


def digests(**documents: bytes) -> dict[str, frozenset[str]]:
    files = {f"{source_id}.md": data for source_id, data in documents.items()}
    return document_digests(bundle_from_files(sorted(files.items())).manifest.documents)


def test_an_item_is_carried_while_its_document_keeps_its_bytes() -> None:
    items = [
        {"id": "a1", "source_id": "alpha"},
        {"id": "b1", "source_id": "beta"},
        {"id": "g1", "source_id": "gamma"},
    ]
    before = digests(alpha=ALPHA, beta=BETA, gamma=GAMMA)
    after = digests(alpha=ALPHA, beta=BETA + b"\nchanged\n")  # gamma removed, beta changed
    assert carried(items, before, after) == [items[0]]
    assert carried(items, before, before) == items
    assert carried(items, before, before, taken={"b1"}) == [items[0], items[2]]
    assert carried(items, {}, before) == []  # nothing is known of where they came from


def test_a_source_id_listed_by_two_scopes_is_kept_only_with_both_digests() -> None:
    documents = [
        {"source_id": "s", "version": "1", "path": "a.md", "sha256": "a" * 64},
        {"source_id": "s", "version": "1", "path": "b.md", "sha256": "b" * 64},
    ]
    both = document_digests(documents)  # type: ignore[arg-type]
    one = document_digests(documents[:1])  # type: ignore[arg-type]
    assert both == {"s": frozenset({"a" * 64, "b" * 64})}
    assert carried([{"id": "x", "source_id": "s"}], both, one) == []


def test_the_manifest_with_its_checks_reads_back_with_them() -> None:
    manifest = parse_manifest(MANIFEST.read_bytes())
    added = {
        "id": "mine",
        "source_id": "aster-copy-v1",
        "spans": [
            {"label": "a", "quote": "Listing documents"},
            {"label": "b", "start": 1, "end": 4},
        ],
    }
    saved = parse_manifest(manifest_json(with_span_checks(manifest, [added])).encode())
    assert [c.id for c in saved.span_checks] == [*(c.id for c in manifest.span_checks), "mine"]
    assert saved.span_checks[-1].model_dump(exclude_none=True) == added
    assert saved.documents == manifest.documents
    again = json.loads(manifest_json(with_span_checks(manifest, [])))
    assert again == json.loads(MANIFEST.read_bytes())  # nothing added: the same manifest


def test_a_check_the_manifest_cannot_hold_is_refused_with_its_code() -> None:
    manifest = parse_manifest(MANIFEST.read_bytes())
    with pytest.raises(ExplorerError) as raised:
        with_span_checks(manifest, [{**CHECK, "source_id": "nowhere"}])
    assert raised.value.code.value == "invalid_manifest"


def test_a_questions_file_reads_back_the_same() -> None:
    questions = QuestionSet.model_validate(
        {
            "questions_version": 1,
            "questions": [
                {
                    "id": "q",
                    "question": "When?",
                    "source_id": "alpha",
                    "references": [{"quote": "30 days"}, {"start": 0, "end": 7}],
                },
            ],
        }
    )
    text = questions_json(questions)
    assert parse_questions(text.encode()) == questions
    assert "null" not in text


# -- the app ---------------------------------------------------------------------------------


def uploaded(*files: tuple[str, bytes]) -> AppTest:
    at = start()
    at.radio(key="source").set_value(UPLOAD).run()
    at.file_uploader(key="upload").set_value(plain(*files)).run()
    assert not at.exception
    return at


def upload_again(at: AppTest, *files: tuple[str, bytes]) -> None:
    at.file_uploader(key="upload").set_value(plain(*files)).run()
    assert not at.exception and not errors(at), errors(at)


def added_questions(at: AppTest) -> list[str]:
    return [str(q["source_id"]) for q in at.session_state["added_work"].questions]


def test_a_check_survives_adding_a_file_and_goes_with_its_document() -> None:
    at = uploaded(("alpha.md", ALPHA))
    add_check(at, "rotation", check_a_quote="30 days", check_b_quote="Only after")
    assert "rotation" in matrix(at)
    upload_again(at, ("alpha.md", ALPHA), ("beta.md", BETA))
    assert "rotation" in matrix(at)
    assert at.selectbox(key="doc").options == ["alpha", "beta"]
    upload_again(at, ("beta.md", BETA))  # its document removed: the check goes with it
    assert "rotation" not in matrix(at)
    upload_again(at, ("alpha.md", ALPHA + b"\nMore.\n"))  # other bytes: another document
    assert "rotation" not in matrix(at)


def test_a_check_on_a_document_that_changed_is_not_carried() -> None:
    at = uploaded(("alpha.md", ALPHA), ("beta.md", BETA))
    add_check(at, "rotation", check_a_quote="30 days")
    upload_again(at, ("alpha.md", ALPHA.replace(b"30", b"31")), ("beta.md", BETA))
    assert "rotation" not in matrix(at)


def test_a_question_survives_adding_a_file_and_removing_another() -> None:
    at = open_tab(uploaded(("alpha.md", ALPHA), ("beta.md", BETA)), "Retrieval").run()
    at.radio(key="questions_source").set_value(ADDED_ONLY).run()
    add_question(at, "How often does the key rotate?", "alpha", "every 30 days")
    add_question(at, "How long for a refund?", "beta", "within 14 days")
    assert added_questions(at) == ["alpha", "beta"]
    upload_again(at, ("alpha.md", ALPHA), ("beta.md", BETA), ("gamma.md", GAMMA))
    assert added_questions(at) == ["alpha", "beta"]
    shown = [option.split(":")[0] for option in at.selectbox(key="question").options]
    assert shown == [q["id"] for q in at.session_state["added_work"].questions]
    upload_again(at, ("alpha.md", ALPHA), ("gamma.md", GAMMA))
    assert added_questions(at) == ["alpha"]
    assert len(at.selectbox(key="question").options) == 1


def test_the_work_is_offered_for_download() -> None:
    at = open_tab(uploaded(("alpha.md", ALPHA)), "Retrieval").run()
    assert "Download the manifest with these checks" in download_labels(at)
    assert not any("questions" in label for label in download_labels(at))
    at.radio(key="questions_source").set_value(ADDED_ONLY).run()
    add_question(at, "How often does the key rotate?", "alpha", "every 30 days")
    assert "Download these questions (1)" in download_labels(at)


def test_the_downloaded_manifest_uploaded_again_holds_the_check_once() -> None:
    at = uploaded(("alpha.md", ALPHA))
    add_check(at, "rotation", check_a_quote="30 days")
    bundle = bundle_from_files([("alpha.md", ALPHA)])
    work = at.session_state["added_work"]
    saved = manifest_json(with_span_checks(bundle.manifest, work.checks)).encode()
    at.file_uploader(key="upload").set_value(
        [("manifest.json", saved, "application/json"), *plain(("alpha.md", ALPHA))]
    ).run()
    assert not at.exception and not errors(at), errors(at)
    assert list(matrix(at)) == ["rotation"]  # the manifest's own now, not twice
    assert at.session_state["added_work"].checks == []


ids = st.sampled_from(["a", "b", "c"])
digest_maps = st.dictionaries(ids, st.frozensets(st.sampled_from(["1" * 64, "2" * 64]), min_size=1))


@given(
    st.lists(st.fixed_dictionaries({"id": st.text(max_size=3), "source_id": ids})),
    digest_maps,
    digest_maps,
    st.sets(st.text(max_size=3)),
)
def test_carried_keeps_an_ordered_part_and_carrying_again_changes_nothing(
    items: list[dict[str, str]],
    before: dict[str, frozenset[str]],
    after: dict[str, frozenset[str]],
    taken: set[str],
) -> None:
    kept = carried(items, before, after, taken)
    assert kept == [item for item in items if item in kept]  # in order, none made up
    assert all(
        after.get(i["source_id"]) == before.get(i["source_id"]) and i["id"] not in taken
        for i in kept
    )
    assert carried(kept, after, after, taken) == kept
