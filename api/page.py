"""The status page at ``/``: server-rendered HTML, no script and nothing fetched from
elsewhere (it works offline). It leads with what is wrong: the partitions with a problem,
critical then warning (``api.standing``), each with its verdict, its dirty section against the
offset map's capacity (an inline SVG bar in the problem's colour), and the fix with its
arithmetic; then the open alerts and the recommendations; then the other partitions, folded
away with their counts (healthy, empty, nothing to clean). A group lookup box (a plain GET
form: ``/?group=ID``) sits above it all, its answer under it. Readable from a phone's width
up: nothing is wider than the screen."""

from __future__ import annotations

import time
from html import escape
from typing import Any

from api.alerts import Alert
from api.cluster_page import Matters, lookup_html
from api.results import partition_name
from api.standing import (
    NEVER_COMPACTED,
    Kind,
    Standing,
    headline,
    never_compacted_matters,
    standing,
)
from api.view import View, log_dir_key

_STYLE = """
*{box-sizing:border-box}
body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;padding:.8em 1em;color:#222;
max-width:1200px;overflow-wrap:break-word}
h1{font-size:1.35em;margin:0}h2{font-size:1.15em;margin:1.2em 0 .4em}
code{background:#f3f3f3;padding:0 3px;border-radius:2px}
.path{overflow-wrap:anywhere}
.muted{color:#555}.small{font-size:.87em}
.badge{display:inline-block;padding:0 6px;border-radius:3px;font-size:.85em;font-weight:600;
text-transform:uppercase;letter-spacing:.02em}
.critical .badge,.badge.critical{color:#fff;background:#b00020}
.warning .badge,.badge.warning{color:#000;background:#f0b400}
.badge.info{background:#cde}
.banner{padding:.45em .6em;border-radius:4px;background:#fdecea;border:1px solid #b00020;
margin:.4em 0}.banner.ok{background:#e8f5e9;border-color:#2e7d32}
#lookup{display:flex;flex-wrap:wrap;gap:.4em;align-items:center;margin:.6em 0}
#lookup input{flex:1 1 12em;max-width:28em;min-width:0;padding:4px}
#lookup-result{border:1px solid #ccc;padding:.5em .7em;border-radius:4px;margin-bottom:.6em}
#lookup-result p,#lookup-result ul{margin:.2em 0}
.card{border:1px solid #ddd;border-left:6px solid #999;border-radius:4px;padding:.5em .7em;
margin:.5em 0}
.card.critical{border-left-color:#b00020}.card.warning{border-left-color:#f0b400}
.card h3{font-size:1.05em;margin:0 0 .2em}.card p{margin:.25em 0}
.meta{color:#444;font-size:.9em}
.arith{font-family:monospace;font-size:.85em;overflow-wrap:anywhere}
.fix code{overflow-wrap:anywhere}
.never{font-weight:600;color:#b00020}
details{border:1px solid #ddd;border-radius:4px;margin:.4em 0;padding:.3em .7em}
summary{cursor:pointer;font-weight:600}
ul.plain{list-style:none;padding:0;margin:.3em 0}ul.plain li{padding:.15em 0;
border-top:1px solid #eee}
svg.map-chart{vertical-align:middle;max-width:100%}
"""


def _e(value: Any) -> str:
    return escape("" if value is None else str(value))


def _bytes(n: int | None) -> str:
    if n is None:
        return ""
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{size:,.0f} {unit}" if unit == "B" else f"{size:,.1f} {unit}"
        size /= 1024
    return str(n)


#: the bar's colour by how the partition stands: a partition that does not compact is never
#: green, whether or not its dirty section would fit the map
_BAR = {Kind.CRITICAL: "#b00020", Kind.WARNING: "#d08c00"}


def map_chart(needed: int | None, capacity: int | None, kind: Kind | None = None) -> str:
    """An inline SVG bar: the dirty section's keys against the offset map's capacity (the
    vertical line). Red for a critical partition, amber for a warning (or past the line:
    more than one pass), green only for one that compacts."""
    if not capacity or needed is None:
        return '<span class="muted">no offset map</span>'
    if needed == 0:
        return '<span class="muted">no dirty section: nothing for the offset map</span>'
    width, height = 180, 14
    scale = max(needed, capacity) or 1
    bar = round(width * needed / scale)
    line = round(width * capacity / scale)
    color = _BAR.get(kind or Kind.HEALTHY, "#b00020" if needed > capacity else "#2e7d32")
    share = needed / capacity
    title = f"{needed:,} of {capacity:,} entries ({share:.1%})"
    return (
        f'<svg class="map-chart" width="{width + 2}" height="{height}" role="img"'
        f' aria-label="{_e(title)}" data-color="{color}"><title>{_e(title)}</title>'
        f'<rect x="0" y="2" width="{width}" height="{height - 4}" fill="#eee"/>'
        f'<rect x="0" y="2" width="{bar}" height="{height - 4}" fill="{color}"/>'
        f'<line x1="{line}" y1="0" x2="{line}" y2="{height}" stroke="#000" stroke-width="2"/>'
        f"</svg> <small>{_e(title)}</small>"
    )


def render(
    run: View | None,
    ready_message: str,
    newest_unreadable: bool,
    alerts: list[Alert],
    lookup: dict[str, Any] | None,
    lookup_error: str | None,
    group: str | None,
    never_compacted_threshold_bytes: int = 100 * 1024 * 1024,
) -> str:
    parts = [
        "<!doctype html><html lang=en><head><meta charset=utf-8>",
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>offsets-auditor</title><style>{_STYLE}</style></head><body>",
        "<h1>offsets-auditor</h1>",
    ]
    if run is not None:
        age = time.time() - run.finished_at
        parts.append(
            f'<p id="run" class="small muted">Run <code>{_e(run.run_id)}</code>, finished'
            f" {_e(run.manifest.get('finished_at'))} ({age / 60:,.0f} min ago):"
            f" {len(run.brokers)} log dir(s), {len(run.partitions)} offsets partition(s),"
            f" {run.group_count:,} group(s).</p>"
        )
    css = "banner" if newest_unreadable or run is None else "banner ok"
    parts.append(f'<div id="readiness" class="{css} small">{_e(ready_message)}</div>')
    rows = {(log_dir_key(p), p["partition"]): p for p in run.partitions} if run is not None else {}

    def matters(replica: dict[str, Any], partition: int) -> bool:
        row = rows.get((log_dir_key(replica), partition))
        return row is not None and never_compacted_matters(row, never_compacted_threshold_bytes)

    parts.append(_lookup_box(group, lookup, lookup_error, matters))
    if run is not None:
        standings = [
            (
                p,
                standing(
                    p,
                    run.findings_of(p, p["partition"]),
                    never_compacted_threshold_bytes,
                ),
            )
            for p in run.partitions
        ]
        parts.append(_problems(run, standings))
        parts.append(_alerts(alerts))
        parts.append(_recommendations(run))
        parts.append(_the_rest(standings))
    else:
        parts.append(_alerts(alerts))
    parts.append(
        '<p class="muted small">JSON: <a href="/partitions">/partitions</a> <a href="/brokers">'
        '/brokers</a> <a href="/findings">/findings</a> <a href="/alerts">/alerts</a>'
        ' <a href="/runs">/runs</a> <a href="/metrics">/metrics</a>'
        ' <a href="/openapi.json">/openapi.json</a> (<a href="/docs">/docs</a>,'
        ' <a href="/redoc">/redoc</a>)</p></body></html>'
    )
    return "".join(parts)


# --- the group lookup ---------------------------------------------------------------------


def _lookup_box(
    group: str | None,
    lookup: dict[str, Any] | None,
    error: str | None,
    matters: Matters,
) -> str:
    value = _e(group) if group is not None else ""
    out = [
        '<form id="lookup" method="get" action="/"><label for="group">Which partition'
        " coordinates group</label>",
        f'<input type="text" id="group" name="group" value="{value}" autocomplete="off">',
        '<button type="submit" id="lookup-button">Look up</button></form>',
    ]
    if error is not None:
        out.append(f'<div id="lookup-result" class="banner">{_e(error)}</div>')
    elif lookup is not None:
        out.append(f'<div id="lookup-result">{_lookup_result(lookup, matters)}</div>')
    return "".join(out)


def _lookup_result(a: dict[str, Any], matters: Matters) -> str:
    return lookup_html(a, matters)


def _broker(broker_id: Any, log_dir: str | None) -> str:
    """``broker 0 …/cleaner-died/kafka-logs`` with the whole path on hover; never
    ``broker None``."""
    path = log_dir or ""
    tail = "/".join(path.rstrip("/").split("/")[-2:])
    shown = path if len(path) <= 40 else f"…/{tail}"
    who = "no broker.id" if broker_id is None else f"broker {_e(broker_id)}"
    return f'{who} <code class="path" title="{_e(path)}">{_e(shown)}</code>'


# --- what is wrong ------------------------------------------------------------------------


def _problems(run: View, standings: list[tuple[dict[str, Any], Standing]]) -> str:
    problems = [(p, s) for p, s in standings if s.kind.is_problem]
    order = {Kind.CRITICAL: 0, Kind.WARNING: 1}
    problems.sort(key=lambda ps: (order[ps[1].kind], -(ps[0]["size_bytes"] or 0), ps[0]["log_dir"]))
    critical = sum(s.kind == Kind.CRITICAL for _, s in problems)
    head = (
        f'<h2 id="problems-heading">Problems: {critical} critical,'
        f" {len(problems) - critical} warning</h2>"
    )
    if not problems:
        return head + '<p id="problems">None: every offsets partition compacts.</p>'
    cards = "".join(_card(p, s) for p, s in problems)
    return f'{head}<div id="problems">{cards}</div>'


def _card(p: dict[str, Any], s: Standing) -> str:
    kind = str(s.kind)
    load = p["load_estimate_seconds"]
    never = ' · <span class="never">never compacted</span>' if s.never_compacted_matters else ""
    first, *more = s.reasons
    also = [headline(r) for r in more if r != NEVER_COMPACTED]
    also_text = f'<p class="also small">Also: {_e("; ".join(also))}.</p>' if also else ""
    fix = ""
    if p["recommended_dedupe_buffer_size"]:
        fix = '<p class="fix">Fix: ' + _advice(p) + "</p>"
    return (
        f'<div class="card problem {kind}" data-kind="{kind}">'
        f'<h3><span class="badge">{kind}</span> {partition_name(p["partition"])}:'
        f" {_e(headline(first))}</h3>"
        f'<p class="meta">{_broker(p["broker_id"], p["log_dir"])} · {_bytes(p["size_bytes"])}'
        f" · {p['segment_count']} segment(s){never}"
        f"{'' if load is None else f' · load estimate {load:,.2f} s'}</p>"
        f'<p class="reason small">Verdict <strong>{_e(p["outcome"])}</strong>:'
        f" {_e(p['reason'])}</p>{also_text}"
        f'<p class="history small">The broker\'s last cleaning: {last_cleaning_cell(p)}</p>'
        f"<p>{map_chart(p['needed_entries'], p['capacity'], s.kind)}</p>{fix}</div>"
    )


def _alerts(alerts: list[Alert]) -> str:
    out = [f'<h2>Open alerts ({len(alerts)})</h2><div id="alerts">']
    if not alerts:
        return out[0] + "None.</div>"
    order = {"critical": 0, "warning": 1}
    for a in sorted(alerts, key=lambda a: (order.get(str(a.rule.severity), 2), a.rule.name)):
        where = " ".join(f"{k}={v}" for k, v in a.series if v and k != "log_dir")
        severity = str(a.rule.severity)
        out.append(
            f'<div class="card alert {_e(severity)}"><p><span class="badge">{_e(severity)}'
            f"</span> <strong>{_e(a.rule.name)}</strong>"
            f' <span class="muted small">{_e(where)}</span></p>'
            f"<p>{_e(a.summary)}</p>"
            f'<p class="muted small">{_e(a.description)}</p></div>'
        )
    out.append("</div>")
    return "".join(out)


def _recommendations(run: View) -> str:
    out = ['<h2>Recommendations</h2><ul id="recommendations">']
    found = False
    for b in run.brokers:
        if b["recommended_dedupe_buffer_size"]:
            found = True
            out.append(
                f"<li>{_broker(b['broker_id'], b['log_dir'])} (now"
                f" {_e(b['dedupe_buffer_size'])}, {_e(b['cleaner_threads'])} thread(s)):"
                f" {_advice(b)}</li>"
            )
    if not found:
        out.append("<li>None: every dirty section fits its offset map.</li>")
    out.append("</ul>")
    return "".join(out)


# --- the rest, folded away ------------------------------------------------------------------

_QUIET = (
    (Kind.HEALTHY, "Healthy", "compacted, or compacting in one pass of the offset map"),
    (
        Kind.NOTHING_TO_CLEAN,
        "Nothing to clean",
        "all their data is the active segment, or too little is dirty yet",
    ),
    (Kind.EMPTY, "Empty", "0 bytes"),
)


def _advice(row: dict[str, Any]) -> str:
    """The buffer to set with room for a day's growth and its heap, then the minimum, each
    with its arithmetic."""
    minimum = (
        f"<code>log.cleaner.dedupe.buffer.size={row['recommended_dedupe_buffer_size']}</code>"
        f' at least <span class="arith">({_e(row["recommendation_arithmetic"])})</span>'
    )
    roomy = row.get("recommended_dedupe_buffer_size_with_headroom")
    if not roomy:
        return minimum
    return (
        f'<span class="roomy"><code>log.cleaner.dedupe.buffer.size={roomy}</code>'
        f" ({_bytes(roomy)}) with room for a day's growth, costing"
        f" {_bytes(row['recommendation_heap_bytes'])} of broker heap</span>"
        f' <span class="arith">({_e(row["headroom_arithmetic"])})</span><br>'
        f'<span class="minimum">The minimum: {minimum}</span>'
    )


def _the_rest(standings: list[tuple[dict[str, Any], Standing]]) -> str:
    out = ['<h2>Other partitions</h2><div id="others">']
    for kind, title, what in _QUIET:
        rows = sorted(
            (p for p, s in standings if s.kind == kind),
            key=lambda p: (p["log_dir"], p["partition"]),
        )
        items = "".join(
            f"<li>{partition_name(p['partition'])} · {_broker(p['broker_id'], p['log_dir'])}"
            f" · {_bytes(p['size_bytes'])} · {_e(p['outcome'])}</li>"
            for p in rows
        )
        out.append(
            f'<details id="others-{kind}"><summary>{title} ({len(rows)})</summary>'
            f'<p class="muted small">{what}</p><ul class="plain">{items}</ul></details>'
        )
    out.append("</div>")
    return "".join(out)


def _utc(ms: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(ms / 1000))


def last_cleaning_cell(p: dict[str, Any]) -> str:
    """The broker's last real cleaning of the partition (from its log-cleaner.log), beside the
    verdict the emulation predicts: when, how many passes, over which offsets, how it ended,
    whether the emulation's passes are the broker's; and its uncleanable mark."""
    if p.get("cleanings_in_log") is None:
        return '<span class="muted">no cleaner log read</span>'
    out = []
    if p["marked_uncleanable_since_ms"] is not None:
        out.append(
            f'<span class="never">uncleanable since {_utc(p["marked_uncleanable_since_ms"])}'
            f"</span><br><small>{_e(p['marked_uncleanable_exception'])}</small><br>"
        )
    if p["last_cleaning_began_ms"] is None:
        out.append('<span class="muted">none in its log</span>')
        return "".join(out)
    start, end = p["last_cleaning_start_offset"], p["last_cleaning_end_offset"]
    offsets = (
        f" over [{start:,}, {end:,})"
        if start is not None and end is not None
        else f" from offset {start:,}"
        if start is not None
        else ""
    )
    difference = p["prediction_difference"]
    agreement = p["prediction_agreement"] + (f" ({difference})" if difference else "")
    out.append(
        f"{_utc(p['last_cleaning_began_ms'])}, {p['last_cleaning_passes']} pass(es)"
        f"{offsets}, {_e(p['last_cleaning_end'])}"
        f'<br><small title="{_e(p["prediction_detail"])}">beside the emulation:'
        f" {_e(agreement)}</small>"
    )
    return "".join(out)
