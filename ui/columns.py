"""Our policies' columns in the sidebar: which ones, in what order, each with its size (in
characters or in cl100k_base tokens) and overlap, and the grammar they cut under.

The default is every registered policy once, at its default size in characters. A
column's widgets are keyed by the column (its policy, or `policy (2)` for a second one of
it), so the first column of each policy keeps the keys a link or a test knows it by.
"""

from __future__ import annotations

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from explorer import ChunkConfig, ExplorerError, Settings
from explorer.chunking.config import DEFAULT_GRAMMAR, DEFAULT_PERCENTILE, DEFAULT_WINDOW, MAX_WINDOW
from explorer.chunking.policies import OWN_POLICIES, POLICIES, SEMANTIC, make_config
from explorer.grammars import GRAMMARS
from explorer.pipeline import MAX_OWN_COLUMNS
from explorer.view.display import markdown_literal

from .common import held

COLUMNS = "own_columns"  # the columns' keys, in the order they are shown
GRAMMAR = "grammar"
GRAMMAR_WORDS = {
    "v1": "v1: '#' headings, blank lines",
    "markdown": "markdown: CommonMark blocks",
}


def _policy(key: str) -> str:
    return key.partition("_")[0]


def _name(key: str) -> str:
    """How the sidebar names a column: its policy, `policy (2)` for a second one of it."""
    policy, _, number = key.partition("_")
    return f"{policy} ({number})" if number else policy


def _tokens(key: str) -> str:
    return f"{key}-in-tokens"


def _size(key: str, tokens: bool) -> str:
    """The key of a column's size slider; its number box adds `-box`."""
    return f"{key}-tokens" if tokens else key


def _overlap(key: str) -> str:
    return f"{key}-overlap"


def _percentile(key: str) -> str:
    return f"{key}-percentile"


def _window(key: str) -> str:
    return f"{key}-window"


def _new_key(policy: str, keys: list[str]) -> str:
    if policy not in keys:
        return policy
    return next(f"{policy}_{n}" for n in range(2, len(keys) + 3) if f"{policy}_{n}" not in keys)


def _set(key: str, config: ChunkConfig) -> None:
    """A column's widgets at `config`'s values."""
    if not config.sized:
        return
    tokens = config.unit is not None
    st.session_state[_tokens(key)] = tokens
    st.session_state[_size(key, tokens)] = st.session_state[f"{_size(key, tokens)}-box"] = (
        config.size()
    )
    st.session_state[_overlap(key)] = config.overlap or 0
    if config.semantic is not None:
        st.session_state[_percentile(key)] = config.semantic.breakpoint_percentile
        st.session_state[_window(key)] = config.semantic.window


def seed_columns(settings: Settings) -> None:
    """A link's columns of our policies and their grammar, as the widgets' first values."""
    keys: list[str] = []
    for config in settings.configs:
        if config.library is None:
            keys.append(_new_key(config.strategy, keys))
            _set(keys[-1], config)
    st.session_state[COLUMNS] = keys
    own = [config for config in settings.configs if config.library is None]
    st.session_state[GRAMMAR] = own[0].grammar_name if own else DEFAULT_GRAMMAR


def _add() -> None:
    """Add the column the picker names, at a size no column of its policy has yet."""
    policy = st.session_state.pop("add_column", None)
    keys: list[str] = st.session_state[COLUMNS]
    if policy is None or len(keys) >= MAX_OWN_COLUMNS:
        return
    key = _new_key(policy, keys)
    default = OWN_POLICIES[policy].default_max_chars
    if default is not None:
        taken = {st.session_state.get(k) for k in keys if _policy(k) == policy}
        size = next(s for s in (default * 2**n for n in range(len(keys) + 1)) if s not in taken)
        _set(key, make_config(policy, size))
    keys.append(key)


def _remove(key: str) -> None:
    st.session_state[COLUMNS].remove(key)


def _copy(source: str, target: str) -> None:
    st.session_state[target] = st.session_state[source]


def column_controls(sidebar: DeltaGenerator, high: int) -> tuple[ChunkConfig, ...]:
    """The grammar, then one box per column (its name, its size as a slider beside a
    number box, its unit and overlap, a button that removes it), then a picker that adds
    one."""
    grammars = list(GRAMMARS)
    chosen = held(GRAMMAR, DEFAULT_GRAMMAR)
    grammar = sidebar.radio(
        "Grammar",
        grammars,
        index=grammars.index(chosen) if chosen in grammars else 0,
        format_func=GRAMMAR_WORDS.__getitem__,
        key=GRAMMAR,
        help="How a document falls into sections and blocks, for every column of ours. "
        "markdown reads CommonMark (a '#' in a code block is no heading, a code block is "
        "one block) and needs no leading heading.",
    )
    keys: list[str] = st.session_state.setdefault(COLUMNS, list(POLICIES))
    # Each box and its widgets are named as the scoreboard, the views and the report name
    # the column: the names of the values the session holds, and again once drawn.
    planned = _names(keys, [_planned(key, grammar) for key in keys])
    drawn = [
        _column(sidebar, key, name, grammar, high, removable=len(keys) > 1)
        for key, name in zip(keys, planned, strict=True)
    ]
    configs = [config for config, _ in drawn]
    for (_, title), name in zip(drawn, _names(keys, configs), strict=True):
        title.markdown(f"**{markdown_literal(name)}**")
    sidebar.selectbox(
        f"Add a column (up to {MAX_OWN_COLUMNS})",
        list(OWN_POLICIES),
        index=None,
        key="add_column",
        placeholder="choose a policy",
        on_change=_add,
        disabled=len(keys) >= MAX_OWN_COLUMNS,
        help="The same policy twice compares two sizes, two units or two overlaps. "
        "semantic cuts where the distance between neighbouring sentences' embeddings "
        "(WordLlama) peaks, within its size; its view draws that curve.",
    )
    return tuple(configs)


def _names(keys: list[str], configs: list[ChunkConfig]) -> list[str]:
    """The columns' names (`Settings.config_names`); by their keys while two are alike
    (the page says so)."""
    try:
        return Settings(tuple(configs)).config_names
    except ExplorerError:
        return [_name(key) for key in keys]


def _planned(key: str, grammar: str) -> ChunkConfig:
    """A column's config from the values its widgets hold before they are drawn."""
    policy = OWN_POLICIES[_policy(key)]
    default = policy.default_max_chars
    if default is None:
        return make_config(policy.name, grammar=grammar)
    tokens = bool(st.session_state.get(_tokens(key), False))
    size = int(st.session_state.get(_size(key, tokens)) or (default // 4 if tokens else default))
    if policy.name == SEMANTIC.name:
        return make_config(
            SEMANTIC.name,
            None if tokens else size,
            max_tokens=size if tokens else None,
            grammar=grammar,
            breakpoint_percentile=int(st.session_state.get(_percentile(key), DEFAULT_PERCENTILE)),
            window=int(st.session_state.get(_window(key), DEFAULT_WINDOW)),
        )
    overlap = min(int(st.session_state.get(_overlap(key)) or 0), size - 1)
    if tokens:
        return make_config(policy.name, max_tokens=size, overlap=overlap, grammar=grammar)
    return make_config(policy.name, size, overlap=overlap, grammar=grammar)


def _column(
    sidebar: DeltaGenerator, key: str, name: str, grammar: str, high: int, removable: bool
) -> tuple[ChunkConfig, DeltaGenerator]:
    """One column's box: a place for its name, its size (and unit and overlap), a button
    that removes it."""
    policy = OWN_POLICIES[_policy(key)]
    box = sidebar.container(border=True)
    title = box.empty()
    default = policy.default_max_chars
    if default is None:
        box.caption("No size: one chunk per paragraph of a section.")
        config = make_config(policy.name, grammar=grammar)
    else:
        config = _sized(box, key, name, grammar, high, default)
    box.button(
        "Remove column",
        key=f"{key}-remove",
        help=f"Remove the {name} column",
        icon=":material/close:",
        type="tertiary",
        on_click=_remove,
        args=(key,),
        disabled=not removable,
    )
    return config, title


def _sized(
    box: DeltaGenerator, key: str, name: str, grammar: str, high: int, default: int
) -> ChunkConfig:
    tokens = bool(held(_tokens(key), False))
    size = _size_widgets(box, key, name, tokens, default, high)
    if _policy(key) == SEMANTIC.name:
        return _semantic(box, key, name, grammar, size, tokens)
    if st.session_state.get(_overlap(key), 0) >= size:  # the size went below it
        st.session_state[_overlap(key)] = size - 1
    with box.expander("Unit and overlap"):
        st.toggle("Size in cl100k_base tokens", tokens, key=_tokens(key))
        overlap = int(
            st.number_input(
                f"{name} overlap",
                0,
                size - 1,
                held(_overlap(key), 0),
                key=_overlap(key),
                help="How much of a chunk the next chunk of its section repeats, in the "
                "size's unit: fixed-char windows advance by size minus overlap; heading-aware "
                "repeats the previous chunk's last blocks that fit in it.",
            )
            if size > 1
            else 0
        )
    if tokens:
        return make_config(_policy(key), max_tokens=size, overlap=overlap, grammar=grammar)
    return make_config(_policy(key), size, overlap=overlap, grammar=grammar)


def _semantic(
    box: DeltaGenerator, key: str, name: str, grammar: str, size: int, tokens: bool
) -> ChunkConfig:
    """A semantic column's percentile (a slider, like the size) and, with its unit, its
    window; its size is a hard maximum, and it takes no overlap."""
    percentile = box.slider(
        f"{name} breakpoint percentile",
        0,
        100,
        held(_percentile(key), DEFAULT_PERCENTILE),
        key=_percentile(key),
        help="A gap between sentences is a breakpoint when its distance is above this "
        "percentile of the document's distances. Its embeddings are kept: a step "
        "embeds nothing again.",
    )
    with box.expander("Unit and window"):
        st.toggle("Size in cl100k_base tokens", tokens, key=_tokens(key))
        window = st.number_input(
            f"{name} window",
            1,
            MAX_WINDOW,
            held(_window(key), DEFAULT_WINDOW),
            key=_window(key),
            help="How many sentences each side of a gap are embedded.",
        )
    return make_config(
        SEMANTIC.name,
        None if tokens else size,
        max_tokens=size if tokens else None,
        grammar=grammar,
        breakpoint_percentile=int(percentile),
        window=int(window),
    )


def _size_widgets(
    box: DeltaGenerator, key: str, name: str, tokens: bool, default: int, high: int
) -> int:
    """A slider and a number box that hold one size, named as the headers name it."""
    slider_key = _size(key, tokens)
    box_key = f"{slider_key}-box"
    value = held(slider_key, default // 4 if tokens else default)
    held(box_key, value)
    label = f"{name} {'max_tokens' if tokens else 'max_chars'}"
    slider, number = box.columns([3, 2], vertical_alignment="bottom")
    size = slider.slider(
        label, 1, high, value, key=slider_key, on_change=_copy, args=(slider_key, box_key)
    )
    number.number_input(
        label,
        1,
        high,
        st.session_state[box_key],
        step=1,
        key=box_key,
        on_change=_copy,
        args=(box_key, slider_key),
        label_visibility="hidden",
    )
    return int(size)
