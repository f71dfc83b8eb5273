"""The status page at ``/``: server-rendered HTML, no script and nothing fetched from
elsewhere (it works offline). Never-compacted partitions first, each partition's dirty-section
demand against the offset map's capacity as an inline SVG bar, the recommendations with their
arithmetic, the open alerts, and a group lookup box (a plain GET form: ``/?group=ID``)."""

from __future__ import annotations

import time
from html import escape
from typing import Any
from urllib.parse import quote

from api.alerts import Alert
from api.results import partition_name
from api.view import View

_STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;max-width:1400px}
h1{font-size:1.4em;margin:0 0 .2em}h2{font-size:1.15em;margin:1.4em 0 .4em}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:3px 6px;
text-align:left;vertical-align:top}th{background:#f3f3f3}
.num{text-align:right;white-space:nowrap}
.critical{color:#fff;background:#b00020;padding:0 4px;border-radius:3px}
.warning{background:#f0b400;padding:0 4px;border-radius:3px}.info{background:#cde;padding:0 4px;
border-radius:3px}.never{font-weight:bold;color:#b00020}.banner{padding:.5em;border-radius:4px;
background:#fdecea;border:1px solid #b00020;margin:.5em 0}
.ok{background:#e8f5e9;border-color:#2e7d32}.muted{color:#666}
.arith{font-family:monospace;font-size:12px;word-break:break-word}td code{word-break:break-all}
form{margin:.3em 0 1em}
input[type=text]{width:28em;padding:3px}#lookup-result{border:1px solid #ccc;padding:.6em;
border-radius:4px}code{background:#f3f3f3;padding:0 3px}
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


def map_chart(needed: int | None, capacity: int | None) -> str:
    """An inline SVG bar: the dirty section's keys against the offset map's capacity (the
    vertical line); red past it (more than one pass)."""
    if not capacity or needed is None:
        return '<span class="muted">no map</span>'
    width, height = 180, 14
    scale = max(needed, capacity) or 1
    bar = round(width * needed / scale)
    line = round(width * capacity / scale)
    color = "#b00020" if needed > capacity else "#2e7d32"
    share = needed / capacity
    title = f"{needed:,} of {capacity:,} entries ({share:.1%})"
    return (
        f'<svg class="map-chart" width="{width + 2}" height="{height}" role="img"'
        f' aria-label="{_e(title)}"><title>{_e(title)}</title>'
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
            f'<p id="run">Run <code>{_e(run.run_id)}</code>, finished'
            f" {_e(run.manifest.get('finished_at'))} ({age / 60:,.0f} min ago),"
            f" {len(run.brokers)} log dir(s), {len(run.partitions)} offsets partition(s),"
            f" {len(run.groups):,} group(s).</p>"
        )
    css = "banner" if newest_unreadable or run is None else "banner ok"
    parts.append(f'<div id="readiness" class="{css}">{_e(ready_message)}</div>')
    parts.append(_lookup_box(group, lookup, lookup_error))
    parts.append(_alerts(alerts))
    if run is not None:
        parts.append(_recommendations(run))
        parts.append(_partitions(run))
    parts.append(
        '<p class="muted">JSON: <a href="/partitions">/partitions</a> <a href="/brokers">'
        '/brokers</a> <a href="/findings">/findings</a> <a href="/alerts">/alerts</a>'
        ' <a href="/runs">/runs</a> <a href="/metrics">/metrics</a>'
        ' <a href="/openapi.json">/openapi.json</a> (<a href="/docs">/docs</a> loads its'
        " viewer from a CDN)</p></body></html>"
    )
    return "".join(parts)


def _lookup_box(group: str | None, lookup: dict[str, Any] | None, error: str | None) -> str:
    value = _e(group) if group is not None else ""
    out = [
        "<h2>Which partition coordinates a group?</h2>",
        '<form id="lookup" method="get" action="/"><label for="group">Group id</label> ',
        f'<input type="text" id="group" name="group" value="{value}" autocomplete="off">',
        ' <button type="submit" id="lookup-button">Look up</button></form>',
    ]
    if error is not None:
        out.append(f'<div id="lookup-result" class="banner">{_e(error)}</div>')
    elif lookup is not None:
        out.append(f'<div id="lookup-result">{_lookup_result(lookup)}</div>')
    return "".join(out)


def _lookup_result(a: dict[str, Any]) -> str:
    q = quote(a["group"], safe="")
    out = [
        f"<p>Group <code>{_e(a['group'])}</code> (Java hashCode {a['java_hash_code']})"
        + ("" if a["in_run"] else " is not in this run's data, but")
    ]
    for c in a["clusters"]:
        label = (
            f"cluster <code>{_e(c['cluster_id'])}</code>"
            if c["cluster_id"]
            else "the log dirs without a cluster.id"
        )
        out.append(
            f'<p class="answer">In {label}: coordinated by <strong class="coordinator">'
            f"{partition_name(c['partition'])}</strong> of {c['partitions']}"
            f' <span class="muted">({_e(c["partitions_basis"])})</span></p><ul>'
        )
        if not c["health"]:
            out.append("<li>no log dir of this run holds that partition</li>")
        for h in c["health"]:
            never = ' <span class="never">never compacted</span>' if h["never_compacted"] else ""
            out.append(
                f"<li>broker {_e(h['broker_id'])} <code>{_e(h['log_dir'])}</code>:"
                f" {_bytes(h['size_bytes'])}{never}, verdict <strong>{_e(h['verdict'])}</strong>"
                f" ({_e(h['reason'])}), load estimate {_e(h['load_estimate_seconds'])} s,"
                f" {len(h['open_findings'])} finding(s)</li>"
            )
        out.append("</ul>")
    out.append(
        f'<p class="muted">JSON: <a href="/group/coordinator-partition?group={q}">'
        f'coordinator-partition</a>, <a href="/group?group={q}">offsets</a>,'
        f' <a href="/group/reset-offsets.csv?group={q}">reset-offsets.csv</a></p>'
    )
    return "".join(out)


def _alerts(alerts: list[Alert]) -> str:
    out = [f"<h2>Open alerts ({len(alerts)})</h2>"]
    if not alerts:
        return out[0] + '<p id="alerts">None.</p>'
    out.append(
        '<table id="alerts"><tr><th>severity</th><th>alert</th><th>where</th><th>summary</th></tr>'
    )
    for a in alerts:
        where = " ".join(f"{k}={v}" for k, v in a.series if v and k != "log_dir")
        severity = str(a.rule.severity)
        out.append(
            f'<tr><td><span class="{_e(severity)}">{_e(severity)}</span></td>'
            f"<td>{_e(a.rule.name)}</td><td>{_e(where)}</td>"
            f'<td>{_e(a.summary)}<br><small class="muted">{_e(a.description)}</small></td></tr>'
        )
    out.append("</table>")
    return "".join(out)


def _recommendations(run: View) -> str:
    out = ['<h2>Recommendations</h2><ul id="recommendations">']
    found = False
    for b in run.brokers:
        if b["recommended_dedupe_buffer_size"]:
            found = True
            out.append(
                f"<li>broker {_e(b['broker_id'])} <code>{_e(b['log_dir'])}</code>:"
                " <code>log.cleaner.dedupe.buffer.size="
                f"{b['recommended_dedupe_buffer_size']}</code>"
                f" (now {_e(b['dedupe_buffer_size'])}, {_e(b['cleaner_threads'])} thread(s))"
                f'<br><span class="arith">{_e(b["recommendation_arithmetic"])}</span></li>'
            )
    if not found:
        out.append("<li>None: every dirty section fits its offset map.</li>")
    out.append("</ul>")
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


def _partitions(run: View) -> str:
    rows = sorted(
        run.partitions,
        key=lambda p: (not p["never_compacted"], -(p["size_bytes"] or 0), p["log_dir"]),
    )
    out = [
        "<h2>Partitions (never compacted first)</h2>",
        '<table id="partitions"><tr><th>partition</th><th>broker / log dir</th>'
        '<th class="num">size</th><th>compacted?</th><th>verdict</th>'
        "<th>broker's last cleaning</th><th>dirty section vs offset map</th>"
        "<th class=num>load estimate</th>"
        "<th>recommendation</th></tr>",
    ]
    for p in rows:
        never = '<span class="never">never</span>' if p["never_compacted"] else "yes"
        advice = ""
        if p["recommended_dedupe_buffer_size"]:
            advice = (
                f"<code>log.cleaner.dedupe.buffer.size={p['recommended_dedupe_buffer_size']}</code>"
                f'<br><span class="arith">{_e(p["recommendation_arithmetic"])}</span>'
            )
        load = p["load_estimate_seconds"]
        out.append(
            f'<tr class="partition"><td>{partition_name(p["partition"])}</td>'
            f"<td>{_e(p['broker_id'])} <small><code>{_e(p['log_dir'])}</code></small></td>"
            f'<td class="num">{_bytes(p["size_bytes"])}</td><td>{never}</td>'
            f"<td><strong>{_e(p['outcome'])}</strong><br><small>{_e(p['reason'])}</small></td>"
            f"<td>{last_cleaning_cell(p)}</td>"
            f"<td>{map_chart(p['needed_entries'], p['capacity'])}</td>"
            f'<td class="num">{"" if load is None else f"{load:,.2f} s"}</td><td>{advice}</td></tr>'
        )
    out.append("</table>")
    return "".join(out)
