"""Models behind an OpenAI-compatible API, in the app: only those the operator names in
`.streamlit/secrets.toml`, e.g.

    [embedders.team-e5]
    base_url = "http://gpu-box:8000/v1"
    model = "intfloat/e5-large-v2"
    api_key_env = "TEAM_API_KEY"

    [generators.team-chat]
    base_url = "http://gpu-box:8001/v1"
    model = "Qwen/Qwen2.5-7B-Instruct"

A visitor picks among those NAMES: never a URL, a model id or a module. A link's
`embedder=NAME` is kept only when NAME is configured, and ignored with a note otherwise.
A request made for a visitor has the command line's bounds (`request_seconds`,
`max_retries`, the answer's size) and runs in that visitor's script thread, so a slow
endpoint holds that session only: the server keeps answering (`/_stcore/health`).
Widgets and session state only: `explorer.retrieval.endpoint` speaks the API."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from functools import partial
from typing import Literal

import streamlit as st
from pydantic import ValidationError
from streamlit.delta_generator import DeltaGenerator

from explorer.errors import ExplorerError
from explorer.retrieval.drafting import ApiGenerator, Passage, ask_checked
from explorer.retrieval.embedding import ApiEmbedder
from explorer.retrieval.endpoint import Endpoint, NamedEndpoint
from explorer.retrieval.retrievers import Embed
from explorer.retrieval.vectors import NO_CACHE, VectorCache
from explorer.view.display import markdown_literal

Kind = Literal["embedders", "generators"]
EMBEDDER = "embedder"  # the picker's key and the link's parameter
# The embedder picked, kept apart from the widget's state: Streamlit drops that in a run
# that does not draw the tab (no document loaded yet, e.g. while files are uploaded).
PICKED = "embedder_picked"
GENERATOR = "draft_generator"
WORDLLAMA = ""  # the bundled WordLlama: the picker's first option
NO_GENERATOR = ""


def configured(kind: Kind) -> dict[str, NamedEndpoint]:
    """The operator's endpoints of one kind, by name; an entry that is not a complete
    endpoint (see `NamedEndpoint`) is not offered."""
    table: object = {}
    with suppress(FileNotFoundError):  # no secrets file: none configured
        table = st.secrets.get(kind, {})
    if not isinstance(table, Mapping):
        return {}
    found: dict[str, NamedEndpoint] = {}
    for name, entry in table.items():
        with suppress(ValidationError, TypeError, ValueError):
            found[str(name)] = NamedEndpoint.model_validate(dict(entry))
    return found


def link_embedder(query: Mapping[str, str]) -> list[str]:
    """Once per session, from the link: the embedder it names, if configured; else a note
    (markdown) that it was ignored."""
    named = query.get(EMBEDDER)
    if named is None:
        return []
    if named in configured("embedders"):
        st.session_state[PICKED] = named
        return []
    return [
        f"The link names the embedder {markdown_literal(repr(named[:80]))}, which is not "
        "configured on this server: the bundled WordLlama embeds instead."
    ]


def embedder_query() -> dict[str, str]:
    """The link's parameter for the embedder picked (none for the bundled one)."""
    picked = picked_embedder()
    return {EMBEDDER: picked} if picked else {}


def embedder_picker(place: DeltaGenerator) -> None:
    """A choice among the configured embedders, when there is one to choose."""
    names = list(configured("embedders"))
    if not names:
        return
    if st.session_state.get(EMBEDDER) not in [WORDLLAMA, *names]:
        st.session_state[EMBEDDER] = picked_embedder()
    st.session_state[PICKED] = place.selectbox(
        "Embedder",
        [WORDLLAMA, *names],
        key=EMBEDDER,
        format_func=lambda name: name or "WordLlama (bundled)",
        help="What the embedding and hybrid retrievers embed with: the bundled model, or "
        "one this server's operator configured (its chunk texts and questions are sent to "
        "that endpoint).",
    )


def picked_embedder() -> str:
    """The configured embedder's name picked, or `WORDLLAMA`: the picker's value (set
    before the run, so the link written earlier in the run has it), else the one kept."""
    picked = st.session_state.get(EMBEDDER, st.session_state.get(PICKED, WORDLLAMA))
    return picked if picked in configured("embedders") else WORDLLAMA


@contextmanager
def embedding_for(name: str) -> Iterator[Embed | None]:
    """How the retrievers embed with the embedder `name` (None: the bundled one): through
    a vector cache of this evaluation only, so a sweep sends a text once."""
    entry = configured("embedders").get(name) if name else None
    if entry is None:
        yield None
        return
    embedder = ApiEmbedder(entry.model, entry.options(), entry.batch, entry.dimensions)
    cache = VectorCache.open(NO_CACHE)
    try:
        yield partial(cache.vectors, embedder)
    except ExplorerError as error:
        raise named(error, embedder.endpoint, name, embedder.name) from None
    finally:
        cache.close()
        embedder.endpoint.close()


def named(error: ExplorerError, endpoint: Endpoint, name: str, *aliases: str) -> ExplorerError:
    """The error as a visitor may read it: the endpoint called by its configured `name`
    (its cache identity and host are the operator's), the key masked."""
    detail = endpoint.masked(error.detail)
    for alias in (*aliases, endpoint.host):
        detail = detail.replace(alias, name)
    return ExplorerError(error.code, detail)


def generator_picker(place: DeltaGenerator) -> None:
    """A choice among the configured question writers, when there is one."""
    names = list(configured("generators"))
    if not names:
        return
    place.selectbox(
        "Question written by",
        [NO_GENERATOR, *names],
        key=GENERATOR,
        persist_state="session",
        format_func=lambda name: name or "you",
        help="Leave it to you, or ask a model this server's operator configured (the "
        "passage is sent to that endpoint).",
    )


def written_question(passage: Passage) -> tuple[str | None, str]:
    """The picked generator's question about `passage` (checked, asked at most three
    times), or None and why not; None and "" when no generator is picked."""
    name = st.session_state.get(GENERATOR, NO_GENERATOR)
    entry = configured("generators").get(name) if name else None
    if entry is None:
        return None, ""
    generator = ApiGenerator(entry.model, entry.options(), seed=1)
    try:
        question, problem = ask_checked(generator, passage, set())
    except ExplorerError as error:
        shown = named(error, generator.endpoint, name, generator.name)
        return None, f"{shown.code.value}: {shown.detail}"
    finally:
        generator.endpoint.close()
    return question, problem
