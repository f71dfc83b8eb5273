"""The status page's cluster parts, kept apart from ``api.page`` (its layout): the group
lookup's answer (partition, coordinator, loading, load estimate, each replica's health), and
one section per cluster: its brokers, each with its data's age, stale or missing ones first.
Plain HTML, no script."""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from typing import Any
from urllib.parse import quote

from api.cluster import ClusterState
from api.settings import Settings

_STYLE = (
    "<style>#clusters .stale,#clusters .missing{font-weight:bold;color:#b00020}"
    "#clusters li{margin:.1em 0}.uncertain{color:#8a5a00;font-weight:bold}</style>"
)


def _e(value: Any) -> str:
    return escape("" if value is None else str(value))


def _age(seconds: float | None) -> str:
    if seconds is None:
        return "unknown"
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:,.1f} {unit}"
    return f"{seconds:,.0f} s"


#: Whether a never compacted replica (``cluster_id``, ``broker_id``, ``log_dir``) of an offsets
#: partition is big enough to say so: brokers on their own hosts may share a log dir's path.
Matters = Callable[[dict[str, Any], int], bool]


def lookup_html(a: dict[str, Any], matters: Matters = lambda replica, partition: True) -> str:
    """The lookup's answer (``api.coordination.answer``) for people; ``matters``: whether a
    never compacted replica is big enough to say so."""
    q = quote(a["group"], safe="")
    shown = f"<code>{_e(a['group'])}</code>" if a["group"] else "the empty group id"
    out = [f"<p>Group {shown} (Java hashCode {a['java_hash_code']})"]
    out.append("." if a["in_run"] else ": no offsets of it in the served data.")
    out.append("</p>")
    for c in a["clusters"]:
        out.append(_cluster_answer(c, matters))
    out.append(
        f'<p class="muted">JSON: <a href="/group/coordinator-partition?group={q}">'
        f'coordinator-partition</a>, <a href="/group?group={q}">offsets</a>,'
        f' <a href="/group/reset-offsets.csv?group={q}">reset-offsets.csv</a></p>'
    )
    return "".join(out)


def _cluster_answer(c: dict[str, Any], matters: Matters) -> str:
    label = (
        f"cluster <code>{_e(c['cluster_id'])}</code>"
        if c["cluster_id"]
        else "the log dirs without a cluster.id"
    )
    flag = ' <span class="uncertain">(count uncertain)</span>' if c["partitions_uncertain"] else ""
    if c["partition"] is None:
        head = f"In {label}: no partition: the evidence supports no partition count{flag}."
    else:
        head = (
            f'In {label}: coordinated by <strong class="coordinator">__consumer_offsets-'
            f"{c['partition']}</strong> of {c['partitions']} ({_e(c['partitions_source'])})"
            f"{flag}"
        )
        coordinator = c["coordinator"]
        if coordinator is None:
            head += ", its leader unknown (see why)"
        else:
            where = (
                f"{coordinator['host']}:{coordinator['port']}"
                if coordinator["host"]
                else coordinator["listeners"]
            )
            head += f', led by <strong class="leader">broker {coordinator["broker_id"]}</strong>'
            head += f" ({_e(where)})" if where else ""
        if c["loading"] is not None:
            head += ", <strong>loading</strong>" if c["loading"] else ", loaded"
        elif c["live"] is not None and c["live"].get("pending"):
            head += ", FindCoordinator not answered yet"
        if c["load_estimate_seconds"] is not None:
            head += f", estimated load time {c['load_estimate_seconds']:,.2f} s"
        head += "."
    out = [f'<p class="answer">{head}</p><ul>']
    if c["partition"] is not None and not c["replicas"]:
        out.append("<li>no scanned log dir holds that partition</li>")
    for r in c["replicas"]:
        role = " leader" if r["leader"] else ""
        isr = "" if r["in_isr"] is None else (" in ISR" if r["in_isr"] else " out of ISR")
        replica = {**r, "cluster_id": c["cluster_id"]}
        shown = r["never_compacted"] and matters(replica, c["partition"])
        never = ' <span class="never">never compacted</span>' if shown else ""
        load = r["load_estimate_seconds"]
        out.append(
            f"<li>broker {_e(r['broker_id'])}{role}{isr} <code>{_e(r['log_dir'])}</code>:"
            f" {_e(r['size_bytes'])} B{never}, verdict <strong>{_e(r['verdict'])}</strong>"
            f" ({_e(r['reason'])}), load estimate {'' if load is None else f'{load:,.2f} s'},"
            f" data {_age(r['data_age_seconds'])} old, {len(r['open_findings'])} finding(s)</li>"
        )
    if c["replicas_not_scanned"]:
        out.append(
            "<li>not scanned: broker(s) "
            + ", ".join(str(b) for b in c["replicas_not_scanned"])
            + "</li>"
        )
    out.append("</ul>")
    out.append(
        "<details><summary>why</summary><ul>"
        + "".join(f"<li>{_e(r)}</li>" for r in c["reasons"])
        + "</ul></details>"
    )
    return "".join(out)


def broker_lines(state: ClusterState, now: float, stale_after: float) -> list[dict[str, Any]]:
    """Each broker of the cluster known to exist, scanned or not: its data's age and whether it
    is stale (older than ``stale_after``) or missing (no served run holds it). Missing and
    stale first."""
    lines = []
    for b in state.scanned:
        age = now - b.data_at
        lines.append(
            {
                "broker_id": b.broker_id,
                "state": "stale" if age > stale_after else "ok",
                "data_age_seconds": round(age, 3),
                "publishers": list(b.publishers),
                "log_dirs": list(b.log_dirs),
                "known_from": list(state.known.get(b.broker_id, ("scanned",)))
                if b.broker_id is not None
                else ["scanned"],
            }
        )
    for broker in state.missing:
        lines.append(
            {
                "broker_id": broker,
                "state": "missing",
                "data_age_seconds": None,
                "publishers": [],
                "log_dirs": [],
                "known_from": list(state.known[broker]),
            }
        )
    rank = {"missing": 0, "stale": 1, "ok": 2}
    return sorted(
        lines, key=lambda x: (rank[x["state"]], -1 if x["broker_id"] is None else x["broker_id"])
    )


def cluster_section(states: dict[str, ClusterState], now: float, settings: Settings) -> str:
    """``<section id="clusters">``: per cluster, the partition count and its brokers."""
    if not states:
        return ""
    stale_after = settings.thresholds().stale_after_seconds
    out = [_STYLE, '<section id="clusters"><h2>Clusters</h2>']
    for name, state in states.items():
        label = f"Cluster <code>{_e(name)}</code>" if name else "Log dirs without a cluster.id"
        count = state.count
        flag = ' <span class="uncertain">(uncertain)</span>' if count.uncertain else ""
        partitions = (
            f"{count.count} offsets partitions ({_e(count.source.value)}){flag}"
            if count.count is not None
            else f"no supported offsets partition count{flag}"
        )
        lines = broker_lines(state, now, stale_after)
        scanned = sum(1 for x in lines if x["state"] != "missing")
        out.append(
            f'<div class="cluster"><p><strong>{label}</strong>: {scanned} broker(s) scanned'
            f" of {len(lines)} known, {partitions}.</p><ul>"
        )
        for x in lines:
            who = f"broker {_e(x['broker_id'])}"
            if x["state"] == "missing":
                text = (
                    f'<span class="missing">{who}: missing</span>: known from'
                    f" {_e(', '.join(x['known_from']))}, but no served run holds its log dirs"
                )
            else:
                css = ' class="stale"' if x["state"] == "stale" else ""
                text = (
                    f"<span{css}>{who}: data {_age(x['data_age_seconds'])} old"
                    f"{' (stale)' if x['state'] == 'stale' else ''}</span>"
                    f" ({_e(', '.join(x['publishers']) or '-')})"
                )
            out.append(f'<li class="broker {x["state"]}">{text}</li>')
        out.append("</ul></div>")
    out.append('<p class="muted">JSON: <a href="/clusters">/clusters</a></p></section>')
    return "".join(out)


def with_cluster_section(html: str, section: str) -> str:
    """``section`` placed at the end of the page's body."""
    if not section or "</body>" not in html:
        return html
    head, _, tail = html.rpartition("</body>")
    return f"{head}{section}</body>{tail}"
