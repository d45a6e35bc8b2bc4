"""Where the documents came from, and what to change when one did not load.

Widgets and layout only: `explorer.sources.drafts` builds manifests and says what to change.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import streamlit as st

from explorer import LoadResult
from explorer.checking.report import SkippedCheck
from explorer.digests import sha_bytes
from explorer.sources.drafts import failure_advice
from explorer.sources.uploads import Bundle, manifest_json
from explorer.view.display import count_words, markdown_literal, markdown_rows
from explorer.view.render import document_rows


def show_drafted(bundle: Bundle) -> None:
    """A manifest built for files that came without one: its digests, and a download."""
    documents = bundle.manifest.documents
    pinned = "pinned" if len(documents) == 1 else "each pinned"
    with st.expander(
        f"No manifest came with these files, so one was built: "
        f"{count_words(len(documents), 'document')}, {pinned} to the SHA-256 of its bytes",
        expanded=False,
    ):
        st.caption(
            "Download it to keep it and to add span checks (on the command line: "
            "`python -m explorer manifest DIR`)."
        )
        rows = [
            {"Source": d["source_id"], "Path": d["path"], "SHA-256": d["sha256"]} for d in documents
        ]
        st.table(markdown_rows(rows))
        st.download_button(
            "Download the built manifest",
            manifest_json(bundle.manifest),
            "manifest.json",
            "application/json",
            key="dl_drafted_manifest",
            on_click="ignore",
            icon=":material/download:",
        )


def show_documents(
    load: LoadResult,
    files: Mapping[str, bytes],
    skipped: Sequence[SkippedCheck] = (),
    drafted: bool = False,
) -> None:
    """Every document with its status; for each that failed, what to change (`drafted`:
    under a manifest built here), the full SHA-256 of the file that came (copyable), and
    the checks it takes out."""
    st.table(markdown_rows(document_rows(load)))
    for status in load.failures:
        advice = failure_advice(str(status.status), drafted)
        st.markdown(
            f"**{markdown_literal(status.source_id)}** did not load "
            f"({markdown_literal(str(status.status))}). {advice}"
        )
        data = files.get(status.path)
        if data is not None:
            st.caption(f"SHA-256 of the file that came for {markdown_literal(status.path)}:")
            st.code(sha_bytes(data), language=None)
        lost = [s["id"] for s in skipped if s["source_id"] == status.source_id]
        if lost:
            st.caption(
                "Not evaluated until it loads: "
                + ", ".join(markdown_literal(check) for check in lost)
            )
