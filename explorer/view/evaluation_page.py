"""`evaluate --report FILE.html`: one self-contained page of a run, as a pure function.

Inline CSS and SVG only: no script, no link, no font or image fetched, so the page opens
offline and asks nothing of any server. Every text of the run (names, ids, configs,
question ids, the decision's sentence) is escaped here.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from html import escape

from ..retrieval.evaluate import METRICS, Evaluation, Metric, PolicyEvaluation, summary_mean

LABELS = {
    "recall": "Recall",
    "precision": "Precision",
    "iou": "IoU",
    "hit": "Hit rate",
    "precision_omega": "Precision Ω",
    "mrr": "MRR",
    "ndcg": "nDCG",
}
STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:1200px;color:#1f2328;
padding:0 1rem}
h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:2rem}
table{border-collapse:collapse;margin:.5rem 0}
th,td{border-bottom:1px solid #d0d7de;padding:.25rem .5rem;text-align:right;vertical-align:middle}
th:first-child,td:first-child{text-align:left}
.decision{border:2px solid #1a7f37;border-radius:6px;padding:.75rem 1rem;background:#f0fff4}
.a,.b{font-weight:600;color:#1a7f37}.tie{color:#57606a}.wide{overflow-x:auto}
code{font-size:.9em;word-break:break-all}
small{color:#57606a}svg{vertical-align:middle}
"""
BAR_WIDTH, BAR_HEIGHT = 90, 16


def _text(value: object) -> str:
    return escape(str(value), quote=True)


def error_bar(mean: float, interval: Sequence[float] | None) -> str:
    """A 0-to-1 track, the interval as a bar with whiskers, the mean as a dot."""

    def x(value: float) -> float:
        return round(4 + max(0.0, min(1.0, value)) * (BAR_WIDTH - 8), 2)

    parts = [
        f'<svg width="{BAR_WIDTH}" height="{BAR_HEIGHT}" role="img" aria-label="'
        f'{_text(_interval_words(mean, interval))}">',
        f'<line x1="{x(0)}" x2="{x(1)}" y1="8" y2="8" stroke="#d0d7de"/>',
    ]
    if interval is not None:
        low, high = x(interval[0]), x(interval[1])
        parts += [
            f'<line x1="{low}" x2="{high}" y1="8" y2="8" stroke="#0969da" stroke-width="3"/>',
            f'<line x1="{low}" x2="{low}" y1="3" y2="13" stroke="#0969da"/>',
            f'<line x1="{high}" x2="{high}" y1="3" y2="13" stroke="#0969da"/>',
        ]
    parts.append(f'<circle cx="{x(mean)}" cy="8" r="3" fill="#1f2328"/></svg>')
    return "".join(parts)


def _interval_words(mean: float, interval: Sequence[float] | None) -> str:
    if interval is None:
        return f"{mean:.3f}"
    return f"{mean:.3f}, 95 % interval {interval[0]:.3f} to {interval[1]:.3f}"


def _not_measured(policy: PolicyEvaluation) -> str:
    """What a column that measured nothing shows in place of its figures, and why."""
    return "; ".join(["not measured", *policy.get("notes", [])])


def _summary_table(policies: Sequence[PolicyEvaluation]) -> str:
    head = "".join(f"<th>{_text(LABELS[m])}</th>" for m in METRICS)
    rows = []
    for policy in policies:
        summary = policy["summary"]
        if not summary["measured"]:
            rows.append(
                f"<tr><td>{_text(policy['name'])}</td>"
                f'<td colspan="{3 + len(METRICS)}" class="tie">{_text(_not_measured(policy))}'
                "</td></tr>"
            )
            continue
        ci = summary["ci"]
        cells = []
        for metric in METRICS:
            mean = float(summary[metric] or 0.0)  # measured: every figure is a number
            interval = ci[metric] if ci is not None else None
            cells.append(
                f"<td>{mean:.3f} {error_bar(mean, interval)}<br>"
                f"<small>{_text(_interval_words(mean, interval).partition(', ')[2])}</small></td>"
            )
        rows.append(
            f"<tr><td>{_text(policy['name'])}</td><td>{summary['chunk_count'] or 0:,}</td>"
            f"<td>{summary['mean_chunk_chars'] or 0.0:,.0f}</td>"
            f"<td>{summary['retrieved_tokens'] or 0.0:,.1f}</td>{''.join(cells)}</tr>"
        )
    return (
        "<table><tr><th>Column</th><th>Chunks</th><th>Mean size (chars)</th>"
        f"<th>Retrieved tokens</th>{head}</tr>{''.join(rows)}</table>"
    )


def _verdicts(evaluation: Evaluation) -> str:
    comparisons = evaluation["comparisons"]
    if not comparisons:
        return "<p>No verdicts: the run had no bootstrap, or a single column.</p>"
    rows = []
    for c in comparisons:
        winner = {"a": c["a"], "b": c["b"], "tie": "tie"}[c["verdict"]]
        rows.append(
            f"<tr><td>{_text(c['a'])}</td><td>{_text(c['b'])}</td>"
            f"<td>{_text(LABELS[c['metric']])}</td><td>{c['difference']:+.3f}</td>"
            f"<td>{c['ci'][0]:+.3f} to {c['ci'][1]:+.3f}</td>"
            f'<td class="{_text(c["verdict"])}">{_text(winner)}</td></tr>'
        )
    return (
        "<table><tr><th>a</th><th>b</th><th>Metric</th><th>a minus b</th><th>95 % interval</th>"
        f"<th>Better</th></tr>{''.join(rows)}</table>"
    )


def _decision(evaluation: Evaluation) -> str:
    decision = evaluation["decision"]
    if decision is None:
        return "<p>No decision: the run had no bootstrap (<code>--bootstrap 0</code>).</p>"
    best = ", ".join(decision["best"])
    return (
        f'<div class="decision"><p><strong>Choice: {_text(decision["choice"])}</strong> '
        f"(on {_text(LABELS[decision['metric']])}; not beaten: {_text(best)})</p>"
        f'<p id="why">{_text(decision["why"])}</p></div>'
    )


SWEEP_LINES: dict[Metric, str] = {
    "recall": "#0969da",
    "iou": "#bc4c00",
    "hit": "#1a7f37",
    "precision_omega": "#8250df",
}
CHART_WIDTH, CHART_HEIGHT, PAD, LEGEND = 820, 300, 40, 110


def _size(policy: PolicyEvaluation) -> float:
    """A swept column's size, in its unit."""
    size = policy["config"].get("max_tokens") or policy["config"].get("max_chars")
    return float(size) if isinstance(size, int) else 0.0


def sweep_chart(policies: Sequence[PolicyEvaluation]) -> str:
    """Recall, IoU, hit rate and Precision_Ω against the size, with recall's intervals."""
    sizes = [_size(p) for p in policies]
    low, high = min(sizes), max(sizes)
    span = (high - low) or 1.0

    def x(size: float) -> float:
        return round(PAD + (size - low) / span * (CHART_WIDTH - 2 * PAD - LEGEND), 2)

    def y(value: float) -> float:
        return round(CHART_HEIGHT - PAD - value * (CHART_HEIGHT - 2 * PAD), 2)

    parts = [
        f'<svg width="{CHART_WIDTH}" height="{CHART_HEIGHT}" role="img" '
        'aria-label="the sweep: figures against the size">',
        f'<line x1="{PAD}" x2="{x(high)}" y1="{y(0)}" y2="{y(0)}" stroke="#57606a"/>',
        f'<line x1="{PAD}" x2="{PAD}" y1="{y(0)}" y2="{y(1)}" stroke="#57606a"/>',
        f'<text x="{PAD - 6}" y="{y(1) + 4}" text-anchor="end" font-size="11">1</text>',
        f'<text x="{PAD - 6}" y="{y(0) + 4}" text-anchor="end" font-size="11">0</text>',
    ]
    for size in sizes:
        parts.append(
            f'<text x="{x(size)}" y="{y(0) + 16}" text-anchor="middle" font-size="11">'
            f"{size:g}</text>"
        )
    for row, (metric, colour) in enumerate(SWEEP_LINES.items()):
        points = [
            (x(size), y(mean))
            for size, p in zip(sizes, policies, strict=True)
            for mean in [summary_mean(p, metric)]
            if mean is not None  # a size not measured has no point
        ]
        path = " ".join(f"{px},{py}" for px, py in points)
        parts.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        parts += [f'<circle cx="{px}" cy="{py}" r="3" fill="{colour}"/>' for px, py in points]
        parts.append(
            f'<text x="{x(high) + 16}" y="{PAD + 14 * row}" font-size="11" '
            f'fill="{colour}">{_text(LABELS[metric])}</text>'
        )
    for size, policy in zip(sizes, policies, strict=True):
        ci = policy["summary"]["ci"]
        if ci is not None:
            top, bottom = y(ci["recall"][1]), y(ci["recall"][0])
            parts.append(
                f'<line x1="{x(size)}" x2="{x(size)}" y1="{top}" y2="{bottom}" '
                'stroke="#0969da" stroke-opacity=".5" stroke-width="6"/>'
            )
    parts.append("</svg>")
    return "".join(parts)


def _questions(policy: PolicyEvaluation) -> str:
    if not policy["summary"]["measured"]:
        return f"<p>{_text(policy['name'])}: {_text(_not_measured(policy))}</p>"
    head = "".join(f"<th>{_text(LABELS[m])}</th>" for m in METRICS)
    rows = []
    for q in policy["questions"]:
        cells = "".join(f"<td>{float(q[m]):.3f}</td>" for m in METRICS)
        over = " (over budget)" if q["over_budget"] else ""
        rows.append(
            f"<tr><td><code>{_text(q['id'])}</code></td><td>{_text(q['source_id'])}</td>"
            f"{cells}<td>{q['retrieved_tokens']:,}{over}</td><td>{len(q['retrieved'])}</td></tr>"
        )
    return (
        f"<details><summary>{_text(policy['name'])}: {len(policy['questions'])} questions"
        f"</summary><table><tr><th>Question</th><th>Document</th>{head}<th>Tokens</th>"
        f"<th>Chunks</th></tr>{''.join(rows)}</table></details>"
    )


def _indexes(policies: Sequence[PolicyEvaluation]) -> str:
    rows = "".join(
        f"<tr><td>{_text(p['name'])}</td><td><code>{_text(p['index_id'] or '—')}</code></td>"
        f"<td><code>{_text(json.dumps(p['config'], sort_keys=True))}</code></td></tr>"
        for p in policies
    )
    return f"<table><tr><th>Column</th><th>index_id</th><th>Config</th></tr>{rows}</table>"


def evaluation_page(evaluation: Evaluation, sweep: bool = False) -> str:
    """The whole page: the run's settings, the decision, the table with error bars, the
    verdicts, the sweep's chart (when `sweep`), each question's figures, and the index
    ids and configs that reproduce the run."""
    policies = evaluation["policies"]
    measured = [p for p in policies if p["summary"]["measured"]]
    questions = len(measured[0]["questions"]) if measured else 0
    budget = evaluation["budget"]
    boot = evaluation["bootstrap"]
    settings = [
        f"{questions} questions",
        f"retriever {evaluation['retriever']}",
        f"k = {evaluation['k']}",
        f"budget {budget['size']:,} {budget['unit']}" if budget else "no budget",
        (
            f"bootstrap: {boot['resamples']:,} resamples, seed {boot['seed']}, "
            f"level {boot['level']:.0%}"
            if boot
            else "no bootstrap"
        ),
    ]
    body = [
        "<h1>Retrieval evaluation</h1>",
        f"<p>{_text(' · '.join(settings))}</p>",
        "<h2>Decision</h2>",
        _decision(evaluation),
    ]
    if questions and questions < 30 and evaluation["comparisons"]:
        body.append(
            f"<p><strong>Few questions:</strong> only {questions} stand behind each verdict; "
            "with fewer than 30, a real difference often shows as a tie.</p>"
        )
    body += [
        "<h2>Means, with 95 % intervals</h2>",
        f'<div class="wide">{_summary_table(policies)}</div>',
    ]
    if sweep and policies:
        body += ["<h2>The sweep</h2>", sweep_chart(policies)]
    body += ["<h2>Verdicts</h2>", _verdicts(evaluation), "<h2>Each question</h2>"]
    body += [_questions(policy) for policy in policies]
    body += ["<h2>Indexes and configs</h2>", _indexes(policies)]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        "<title>Retrieval evaluation</title>"
        f"<style>{STYLE}</style></head><body>{''.join(body)}</body></html>\n"
    )
