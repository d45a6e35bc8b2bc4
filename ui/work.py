"""What a person adds on the page, span checks and questions, kept across uploads: adding
or removing a file keeps those whose document is still there (`explorer.sources.kept`),
and both can be downloaded. Session state and widgets only."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial

import streamlit as st

from explorer import Manifest
from explorer.retrieval.questions import QuestionSet, questions_json
from explorer.sources.kept import Digests, carried, document_digests
from explorer.sources.manifest import with_span_checks
from explorer.sources.uploads import manifest_json

WORK = "added_work"


@dataclass
class Work:
    """The checks and questions added to the documents of cache key `key` (raw, as the
    manifest and the questions file spell them); the lists are changed in place."""

    key: str
    digests: Digests
    checks: list[dict[str, object]] = field(default_factory=list)
    questions: list[dict[str, object]] = field(default_factory=list)


def kept_work(key: str, manifest: Manifest) -> Work:
    """This session's work on the documents of `key`: when they changed, what was added to
    a document that is still there, with the same bytes, is carried over."""
    work: Work | None = st.session_state.get(WORK)
    if work is None or work.key != key:
        digests = document_digests(manifest.documents)
        taken = {check.id for check in manifest.span_checks}
        work = (
            Work(key, digests)
            if work is None
            else Work(
                key,
                digests,
                carried(work.checks, work.digests, digests, taken),
                carried(work.questions, work.digests, digests),
            )
        )
        st.session_state[WORK] = work
    return work


def manifest_download(manifest: Manifest, checks: Sequence[Mapping[str, object]]) -> None:
    """The manifest with its own checks and those added here, to keep and load again."""
    st.download_button(
        "Download the manifest with these checks",
        partial(_manifest_json, manifest, checks),
        "manifest.json",
        "application/json",
        key="dl_manifest_checks",
        on_click="ignore",
        icon=":material/download:",
        help="The manifest of these documents with every span check shown here, the "
        "manifest's and those added on this page: upload it with the files to go on.",
    )


def _manifest_json(manifest: Manifest, checks: Sequence[Mapping[str, object]]) -> str:
    return manifest_json(with_span_checks(manifest, checks))


def questions_download(questions: QuestionSet) -> None:
    """The questions measured here, the file's and those added, as a questions file."""
    st.download_button(
        f"Download these questions ({len(questions.questions):,})",
        partial(questions_json, questions),
        "questions.json",
        "application/json",
        key="dl_questions",
        on_click="ignore",
        icon=":material/download:",
        help="A questions file (questions_version 1): upload it here again, or give it to "
        "`python -m explorer evaluate --questions`.",
    )
