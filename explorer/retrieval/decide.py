"""How sure is a difference: percentile bootstrap intervals of each column's means, paired
intervals of the differences between columns, a verdict per pair and metric, and a choice.

Computed from the questions' figures alone (one number per question, column and metric),
never from the question-by-chunk scores. The figures are rounded to 6 places, so they are
held as whole millionths: every resampled sum is a whole number below 2^53, exact in
float64 however BLAS adds it up, and the same seed gives the same intervals on any machine.
The questions are resampled once, B draws of n with replacement, the same draws for every
column and metric, so the difference of two columns' resampled means is a paired one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, NamedTuple

from ..errors import ErrorCode, ExplorerError

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

DEFAULT_RESAMPLES = 2000
MAX_RESAMPLES = 100_000
DEFAULT_SEED = 0
LEVEL = 0.95
SCALE = 1_000_000  # figures are rounded to 6 places: whole millionths
DRAWS_PER_BLOCK = 1 << 20  # question indices drawn at once (8 MiB)


def require_resamples(resamples: int) -> None:
    if not 0 <= resamples <= MAX_RESAMPLES:
        raise ExplorerError(
            ErrorCode.INVALID_BOOTSTRAP,
            f"--bootstrap takes 0 (no intervals) to {MAX_RESAMPLES:,} resamples, not {resamples:,}",
        )


def resampled_sums(
    values: NDArray[np.int64], resamples: int, seed: int, held: int
) -> NDArray[np.float64]:
    """(resamples, columns): each resample's sums of `values` (questions by columns, whole
    millionths) over n questions drawn with replacement by `np.random.default_rng(seed)`,
    a block of draws at a time. At most `held` sums are kept (`--max-scores-held`)."""
    import numpy as np

    count, width = values.shape
    if resamples * width > held:
        raise ExplorerError(
            ErrorCode.INVALID_BOOTSTRAP,
            f"{resamples:,} resamples of {width:,} figures (columns times metrics) hold "
            f"{resamples * width:,} means, more than the limit of {held:,}; use fewer "
            "resamples or columns, or raise --max-scores-held",
        )
    generator = np.random.default_rng(seed)
    sums = np.empty((resamples, width), dtype=np.float64)
    exact = values.astype(np.float64)
    rows = max(1, DRAWS_PER_BLOCK // max(count, 1))
    for first in range(0, resamples, rows):
        block = min(rows, resamples - first)
        drawn = generator.integers(0, count, size=(block, count))
        offsets = (np.arange(block, dtype=np.int64) * count)[:, None]
        weights = np.bincount((drawn + offsets).ravel(), minlength=block * count)
        sums[first : first + block] = weights.reshape(block, count).astype(np.float64) @ exact
    return sums


def interval(means: NDArray[np.float64], level: float) -> tuple[float, float]:
    """The percentile interval of resampled means (numpy's linear interpolation),
    rounded to 6 places."""
    import numpy as np

    tail = (1 - level) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return round(float(low), 6), round(float(high), 6)


Winner = Literal["a", "b", "tie"]


def verdict(low: float, high: float) -> Winner:
    """ "a" when the whole interval of a - b is above 0, "b" when below, else "tie"."""
    return "a" if low > 0 else "b" if high < 0 else "tie"


class Verdict(NamedTuple):
    a: int  # columns by position, a declared before b
    b: int
    metric: int  # by position in the metrics
    difference: float
    low: float
    high: float
    winner: Winner


class Intervals(NamedTuple):
    per_column: list[list[tuple[float, float]]]  # [column][metric]
    verdicts: list[Verdict]  # by pair (a, b) in declaration order, then metric


def bootstrap(
    figures: Sequence[Sequence[Sequence[float]]],
    resamples: int,
    seed: int,
    held: int,
    level: float = LEVEL,
) -> Intervals:
    """`figures[column][metric][question]`: each column's and metric's interval of the
    mean, and every pair's verdict on every metric (the same draws throughout)."""
    import numpy as np

    columns = len(figures)
    metrics = len(figures[0]) if columns else 0
    questions = len(figures[0][0]) if metrics else 0
    values = np.rint(np.asarray(figures, dtype=np.float64) * SCALE).astype(np.int64)
    flat = values.reshape(columns * metrics, questions).T  # questions by (column, metric)
    sums = resampled_sums(np.ascontiguousarray(flat), resamples, seed, held) / (questions * SCALE)
    totals = flat.sum(axis=0)
    per_column = [
        [interval(sums[:, c * metrics + m], level) for m in range(metrics)] for c in range(columns)
    ]
    verdicts = []
    for a in range(columns):
        for b in range(a + 1, columns):
            for m in range(metrics):
                i, j = a * metrics + m, b * metrics + m
                low, high = interval(sums[:, i] - sums[:, j], level)
                difference = round(float(totals[i] - totals[j]) / (questions * SCALE), 6)
                verdicts.append(Verdict(a, b, m, difference, low, high, verdict(low, high)))
    return Intervals(per_column, verdicts)


class Choice(NamedTuple):
    best: list[int]  # the columns no verdict beats, by position
    choice: int
    why: str


def signed(value: float) -> str:
    """+0.123 or -0.123, and +0.000 for anything that rounds to zero (never -0.000)."""
    return f"{round(value, 3) + 0.0:+.3f}"


def _names(names: Sequence[str]) -> str:
    quoted = [f"'{name}'" for name in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def decide(
    names: Sequence[str],
    metric: str,
    means: Sequence[float],
    verdicts: Sequence[Verdict],
    tokens: Sequence[float],
    questions: int,
    level: float = LEVEL,
) -> Choice:
    """The columns no verdict on `metric` beats, the one of them with the fewest mean
    retrieved tokens (declaration order breaks ties), and why, in one sentence stating
    the margin, its interval and the question count. `verdicts` are those on `metric`."""
    beaten = {v.b if v.winner == "a" else v.a for v in verdicts if v.winner != "tie"}
    best = [c for c in range(len(names)) if c not in beaten]
    if not best:  # verdicts that go round in a circle: the highest means stand
        best = [c for c in range(len(names)) if means[c] == max(means)]
    choice = min(best, key=lambda c: (tokens[c], c))
    percent = f"{level:.0%}".replace("%", " %")
    if len(names) == 1:
        why = (
            f"{_names(names)} is the only column measured, over {questions} questions: "
            "there is nothing to compare it with."
        )
        return Choice(best, choice, why)
    rivals = [c for c in (best if len(best) > 1 else range(len(names))) if c != choice]
    rival = max(rivals, key=lambda c: (means[c], -c))
    pair = next(v for v in verdicts if {v.a, v.b} == {choice, rival})
    sign = 1 if pair.a == choice else -1  # the margin of the choice over its rival
    margin = sign * pair.difference
    low, high = sorted((sign * pair.low, sign * pair.high))
    stated = (
        f"{signed(margin)} ({percent} interval {signed(low)} to {signed(high)}) over "
        f"{questions} questions"
    )
    if len(best) == 1:
        why = (
            f"'{names[choice]}' is best on {metric}: no other column beats it; its margin "
            f"over the closest, '{names[rival]}', is {stated}."
        )
    else:
        why = (
            f"The {questions} questions cannot separate {_names([names[c] for c in best])} on "
            f"{metric}: '{names[choice]}' minus '{names[rival]}' is {stated}; the cheapest, "
            f"'{names[choice]}' ({tokens[choice]:,.0f} retrieved tokens per question), was "
            "taken."
        )
    return Choice(best, choice, why)
