"""The boundary diff of two columns (explorer/checking/diff.py): matching, F1, and Pk and
WindowDiff held to naive references, by hand and by Hypothesis."""

from __future__ import annotations

from time import perf_counter

from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.checking.diff import (
    MAX_LISTED,
    boundaries,
    diff_documents,
    document_diff,
    match,
    window_errors,
    window_k,
)


def naive_errors(a: list[int], b: list[int], length: int, k: int) -> tuple[int, int, int]:
    """Pk's and WindowDiff's errors as the definitions read, O(N·k): every pair of
    positions (i, i+k) of the text, and the boundaries between them."""
    pk = wd = 0
    windows = 0
    for i in range(length - k):
        in_a = sum(1 for offset in a if i < offset <= i + k)
        in_b = sum(1 for offset in b if i < offset <= i + k)
        pk += (in_a > 0) != (in_b > 0)
        wd += in_a != in_b
        windows += 1
    return pk, wd, windows


def nltk_pk(ref: str, hyp: str, k: int) -> float:
    """nltk.metrics.segmentation.pk, as nltk 3.9 writes it (nltk is not a dependency)."""
    err = 0
    for i in range(len(ref) - k + 1):
        r = ref[i : i + k].count("1") > 0
        h = hyp[i : i + k].count("1") > 0
        if r != h:
            err += 1
    return err / (len(ref) - k + 1.0)


def nltk_windowdiff(seg1: str, seg2: str, k: int) -> float:
    """nltk.metrics.segmentation.windowdiff (unweighted), as nltk 3.9 writes it."""
    wd = 0
    for i in range(len(seg1) - k + 1):
        ndiff = abs(seg1[i : i + k].count("1") - seg2[i : i + k].count("1"))
        wd += min(1, ndiff)
    return wd / (len(seg1) - k + 1.0)


def gaps(offsets: list[int], length: int) -> str:
    """One character per gap between neighbouring characters: "1" where a boundary is."""
    marked = set(offsets)
    return "".join("1" if gap in marked else "0" for gap in range(1, length))


@st.composite
def segmentations(draw: st.DrawFn) -> tuple[list[int], list[int], int]:
    length = draw(st.integers(1, 120))
    inner = st.integers(1, max(1, length - 1))
    a = sorted(set(draw(st.lists(inner, max_size=20)))) if length > 1 else []
    b = sorted(set(draw(st.lists(inner, max_size=20)))) if length > 1 else []
    return a, b, length


def test_boundaries_are_starts_and_ends_without_the_text_edges() -> None:
    assert boundaries([(0, 10), (10, 25), (20, 30)], 30) == [10, 20, 25]
    assert boundaries([(2, 8), (12, 30)], 30) == [2, 8, 12]  # gaps: both edges count
    assert boundaries([], 5) == []


def test_matching_is_one_to_one_and_greedy_in_offset_order() -> None:
    assert match([10, 20], [10, 21], 0) == ([20], [21], 1)
    assert match([10, 20], [10, 21], 1) == ([], [], 2)
    # B's 11 is within 1 of both 10 and 12: it takes the first, 12 stays unmatched.
    assert match([10, 12], [11], 1) == ([12], [], 1)
    assert match([11], [10, 12], 1) == ([], [12], 1)


def test_figures_by_hand() -> None:
    found = document_diff("d", [10, 20], [10, 15, 25], 30)
    assert found["shared"] == 1
    assert (found["only_a"], found["only_b"]) == ([20], [15, 25])
    assert found["boundary_precision"] == round(1 / 3, 6)
    assert found["boundary_recall"] == 0.5
    assert found["boundary_f1"] == 0.4
    assert found["k"] == 5  # 30 / 3 segments / 2
    pk, wd, windows = naive_errors([10, 20], [10, 15, 25], 30, 5)
    assert found["windows"] == windows == 25
    assert found["pk"] == round(pk / windows, 6)
    assert found["windowdiff"] == round(wd / windows, 6)


def test_identical_and_empty_segmentations() -> None:
    same = document_diff("d", [4, 9], [4, 9], 20)
    assert (same["boundary_f1"], same["pk"], same["windowdiff"]) == (1.0, 0.0, 0.0)
    none = document_diff("d", [], [], 20)
    assert (none["boundary_precision"], none["boundary_recall"], none["boundary_f1"]) == (
        1.0,
        1.0,
        1.0,
    )
    missing = document_diff("d", [4], [], 20)
    assert (missing["boundary_precision"], missing["boundary_recall"]) == (1.0, 0.0)
    assert missing["boundary_f1"] == 0.0
    short = document_diff("d", [1], [], 2)  # k = 1 and one window
    assert (short["k"], short["windows"], short["pk"]) == (1, 1, 1.0)
    tiny = document_diff("d", [], [], 1)  # no window at all
    assert (tiny["windows"], tiny["pk"], tiny["windowdiff"]) == (0, 0.0, 0.0)


def test_k_rounds_half_of_the_mean_segment() -> None:
    assert window_k([], 3) == 2  # 1.5 rounds to 2
    assert window_k([], 5) == 2  # 2.5 rounds to even
    assert window_k([1, 2, 3], 4) == 1  # 0.5 rounds to 0: at least 1


def test_listing_is_capped_and_counts_are_not() -> None:
    many = list(range(1, MAX_LISTED + 501))
    found = document_diff("d", many, [], MAX_LISTED + 1000)
    assert len(found["only_a"]) == MAX_LISTED
    assert found["only_a_count"] == MAX_LISTED + 500


@settings(max_examples=300, deadline=None)
@given(segmentations(), st.integers(1, 40))
def test_the_sweep_equals_the_naive_definition(
    segmented: tuple[list[int], list[int], int], k: int
) -> None:
    a, b, length = segmented
    assert tuple(window_errors(a, b, length, k)) == naive_errors(a, b, length, k)


@settings(max_examples=300, deadline=None)
@given(segmentations())
def test_pk_and_windowdiff_are_nltks_on_the_gaps(
    segmented: tuple[list[int], list[int], int],
) -> None:
    a, b, length = segmented
    found = document_diff("d", a, b, length)
    k = found["k"]
    ref, hyp = gaps(a, length), gaps(b, length)
    if k > len(ref):  # nltk refuses a window wider than the text; we count no window
        assert found["windows"] == 0
        return
    assert found["pk"] == round(nltk_pk(ref, hyp, k), 6)
    assert found["windowdiff"] == round(nltk_windowdiff(ref, hyp, k), 6)


@settings(max_examples=200, deadline=None)
@given(segmentations(), st.integers(0, 5))
def test_matching_accounts_for_every_boundary(
    segmented: tuple[list[int], list[int], int], tolerance: int
) -> None:
    a, b, _ = segmented
    only_a, only_b, shared = match(a, b, tolerance)
    assert len(only_a) + shared == len(a) and len(only_b) + shared == len(b)
    assert set(only_a) <= set(a) and set(only_b) <= set(b)
    if tolerance == 0:
        assert shared == len(set(a) & set(b))


def test_the_summary_adds_up_documents() -> None:
    texts = {"x": "a" * 30, "y": "b" * 50}
    found = diff_documents(texts, {"x": [10, 20], "y": [25]}, {"x": [10], "y": [25, 40]})
    x, y = found.documents
    summary = found.summary
    assert summary["shared"] == x["shared"] + y["shared"] == 2
    assert summary["only_a_count"] == 1 and summary["only_b_count"] == 1
    assert summary["boundary_precision"] == round(2 / 3, 6)
    assert summary["boundary_recall"] == round(2 / 3, 6)
    x_errors = naive_errors([10, 20], [10], 30, x["k"])
    y_errors = naive_errors([25], [25, 40], 50, y["k"])
    windows = x_errors[2] + y_errors[2]
    assert summary["pk"] == round((x_errors[0] + y_errors[0]) / windows, 6)
    assert summary["windowdiff"] == round((x_errors[1] + y_errors[1]) / windows, 6)


def test_a_mebibyte_document_is_diffed_in_linear_time() -> None:
    """Two columns of a 1 MiB text, one cut every 220 characters, one every 800: the
    work grows with the boundaries, not the characters."""
    length = 1024 * 1024
    a = list(range(220, length, 220))
    b = list(range(800, length, 800))
    began = perf_counter()
    found = document_diff("d", a, b, length)
    assert perf_counter() - began < 0.5
    assert found["only_a_count"] + found["shared"] == len(a)
