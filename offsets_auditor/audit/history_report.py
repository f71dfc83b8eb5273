"""The broker's own logs in the audit document (``audit --json``, and what the scan publishes):
``brokers[].cleaner_log`` (which files, its threads, its pace against the commit rate, the
partitions marked uncleanable), ``brokers[].coordinator_loads`` (the load model fitted to the
broker's own load times), ``partitions[].cleaner_log`` (the last real cleaning beside the
predicted one) and ``cleanings`` (each partition's newest cleanings).

Times are given twice: as the broker's log printed them (``YYYY-MM-DD HH:MM:SS.mmm``, its local
clock) and as epoch milliseconds in the zone the logs were read in (``--log-timezone``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from offsets_auditor.audit.broker_history import BrokerHistory, LastClean, PartitionHistory
from offsets_auditor.audit.report_types import (
    BrokerCleanerLogJson,
    CleaningJson,
    ComparisonJson,
    CoordinatorLoadsJson,
    LastCleaningJson,
    LoadModelJson,
    PaceJson,
    PartitionCleanerLogJson,
    PassJson,
)
from offsets_auditor.broker_logs.history import Cleaning, ThreadLife
from offsets_auditor.broker_logs.load_models import MIN_LOAD_MS, LoadModel
from offsets_auditor.broker_logs.reality import Comparison, RealPass
from offsets_auditor.broker_logs.zones import LogZone


def _iso(at: datetime | None) -> str | None:
    return None if at is None else at.isoformat(sep=" ", timespec="milliseconds")


def _ms(zone: LogZone, at: datetime | None) -> int | None:
    return None if at is None else zone.epoch_ms(at)


def broker_cleaner_log(h: BrokerHistory | None) -> BrokerCleanerLogJson | None:
    """``brokers[].cleaner_log``: None when no cleaner log was read."""
    if h is None or h.logs.history is None:
        return None
    zone, files, history, run = h.logs.files.zone, h.logs.files, h.logs.history, h.run
    threads = run.threads if run is not None else ()
    return {
        "files": list(h.logs.cleaner_files),
        "how": files.cleaner_log_how,
        "timezone": zone.name,
        "as_of": _iso(history.as_of),
        "as_of_ms": _ms(zone, history.as_of),
        "broker_started_at": _iso(max(h.logs.starts)) if h.logs.starts else None,
        "cleaner_started_at": _iso(run.started_at) if run is not None else None,
        "cleaner_shut_down_at": _iso(run.shut_down_at) if run is not None else None,
        "threads": [_thread(t) for t in threads],
        "threads_alive": len(run.alive) if run is not None else None,
        "threads_dead": len(run.dead) if run is not None else None,
        "cleanings": len(run.cleanings) if run is not None else 0,
        "uncleanable": [
            {
                "partition": name,
                "since": _iso(mark.at),
                "since_ms": zone.epoch_ms(mark.at),
                "exception": mark.failure.text if mark.failure is not None else None,
            }
            for name, mark in sorted(h.uncleanable.items())
        ],
        "throughput": None if h.pace is None else _pace(h),
        "commit_rate": None
        if h.commit is None
        else {
            "bytes_per_second": round(h.commit.bytes_per_second, 3),
            "bytes": round(h.commit.bytes),
            "seconds": round((h.commit.end_ms - h.commit.start_ms) / 1000, 3),
            "basis": "the uncleaned segments' bytes (from each partition's first dirty offset)"
            " over the time their records' timestamps span, summed over the partitions",
        },
        "keeps_up": None if h.keeping is None else h.keeping.keeps_up,
        "keeping_up": None if h.keeping is None else h.keeping.detail,
        "notes": list(h.logs.notes),
    }


def _thread(t: ThreadLife) -> dict[str, Any]:
    state = "dead" if t.died is not None else "stopped" if t.stopped_at is not None else "alive"
    return {
        "thread": t.thread,
        "state": state,
        "started_at": _iso(t.started_at),
        "died_at": _iso(t.died_at),
        "exception": t.died.text if t.died is not None else None,
        "died_cleaning": t.died_cleaning,
        "stopped_at": _iso(t.stopped_at),
    }


def _pace(h: BrokerHistory) -> PaceJson:
    pace = h.pace
    assert pace is not None
    return {
        "cleanings": pace.cleanings,
        "consumed_bytes_per_second": round(pace.consumed_bytes_per_second, 3),
        "processed_bytes_per_second": round(pace.processed_bytes_per_second, 3),
        "capacity_bytes_per_second": round(pace.consumed_bytes_per_second * pace.alive, 3),
        "busy_ratio": round(pace.busy_fraction, 6),
        "busy_seconds": round(pace.busy_seconds, 3),
        "run_seconds": round(pace.run_seconds, 3),
        "threads": pace.threads,
        "threads_alive": pace.alive,
        "basis": pace.basis,
    }


def broker_coordinator_loads(h: BrokerHistory | None) -> CoordinatorLoadsJson | None:
    """``brokers[].coordinator_loads``: the broker's own load times and the models fitted to
    them (best first); None without a server log."""
    if h is None or h.loads is None:
        return None
    models = h.loads.fit.models
    return {
        "server_log": h.loads.source,
        "loads": h.loads.loads,
        "of_partitions_here": h.loads.observed,
        "usable": h.loads.usable,
        "min_load_ms": MIN_LOAD_MS,
        "model": _model(models[0]) if models else None,
        "models": [_model(m) for m in models],
    }


def _model(m: LoadModel) -> LoadModelJson:
    return {
        "basis": m.basis.value,
        "affine": m.affine,
        "fixed_ms": round(m.fixed_ms, 3),
        "ms_per_unit": m.ms_per_unit,
        "loads": m.loads,
        "expected_error": round(m.expected_error, 4),
        "describe": m.describe(),
    }


def partition_cleaner_log(h: BrokerHistory | None, name: str) -> PartitionCleanerLogJson | None:
    """``partitions[].cleaner_log``: the broker's last cleaning of the partition beside the
    emulation's (None when no cleaner log was read)."""
    if h is None or h.logs.history is None:
        return None
    p = h.partitions.get(name)
    if p is None:
        return None
    zone = h.logs.files.zone
    mark = p.uncleanable
    done = p.last_completed
    return {
        "cleanings": p.count,
        "last_cleaning": None if p.last is None else last_cleaning_json(p.last, zone),
        "last_completed_at": None if done is None else _iso(done.ended_at),
        "last_completed_at_ms": None if done is None else _ms(zone, done.ended_at),
        "prediction": comparison_json(p.comparison),
        "uncleanable_since": None if mark is None else _iso(mark.at),
        "uncleanable_since_ms": None if mark is None else zone.epoch_ms(mark.at),
        "uncleanable_exception": None
        if mark is None or mark.failure is None
        else mark.failure.text,
    }


def last_cleaning_json(last: LastClean, zone: LogZone) -> LastCleaningJson:
    """The last clean: when, which dirty section, each pass, sizes, duration, MB/s (the
    broker's banners, summed over the passes)."""
    first, final = last.cleanings[0], last.cleanings[-1]
    stats = [c.stats for c in last.cleanings if c.stats is not None]
    mb_read = sum(s.mb_read for s in stats)
    seconds = sum(s.seconds for s in stats)
    opening = first.stats if first.stats is not None else None
    closing = final.stats if final.stats is not None else None
    return {
        "began_at": _iso(first.begun_at),
        "began_at_ms": zone.epoch_ms(first.begun_at),
        "ended_at": _iso(final.ended_at),
        "ended_at_ms": _ms(zone, final.ended_at),
        "thread": final.thread,
        "end": final.end.value,
        "dirty_section": [last.passes[0].start, last.passes[-1].end],
        "passes": [pass_json(c, r) for c, r in zip(last.cleanings, last.passes, strict=True)],
        "start_mb": opening.start_mb if opening is not None else None,
        "start_messages": opening.start_messages if opening is not None else None,
        "end_mb": closing.end_mb if closing is not None else None,
        "end_messages": closing.end_messages if closing is not None else None,
        "mb_read": round(mb_read, 3) if stats else None,
        "seconds": round(seconds, 3) if stats else None,
        "elapsed_seconds": round(sum(c.elapsed_seconds or 0.0 for c in last.cleanings), 3),
        "mb_per_second": round(mb_read / seconds, 3) if stats and seconds > 0 else None,
        "failure": final.failure.text if final.failure is not None else None,
        "file": first.place.file,
        "position": first.place.position,
    }


def pass_json(c: Cleaning, r: RealPass) -> PassJson:
    """One cleaning as one pass: the map's range, where it ended, the banner's numbers."""
    s = c.stats
    return {
        "start_offset": r.start,
        "upper_bound": r.upper,
        "end_offset": r.end,
        "segments": r.segments,
        "began_at": _iso(c.begun_at),
        "ended_at": _iso(c.ended_at),
        "end": c.end.value,
        "buffer_utilization": None if s is None else s.utilization,
        "start_mb": None if s is None else s.start_mb,
        "start_messages": r.start_messages,
        "end_mb": None if s is None else s.end_mb,
        "end_messages": r.end_messages,
        "mb_read": None if s is None else s.mb_read,
        "seconds": None if s is None else s.seconds,
        "mb_per_second": None if s is None else s.mb_per_second,
        "failure": c.failure.text if c.failure is not None else None,
    }


def comparison_json(c: Comparison) -> ComparisonJson:
    """The broker's passes beside the emulation's: ``agreement`` (``agrees``, ``differs``,
    ``not-comparable``), the named ``difference`` and why."""
    return {
        "agreement": c.agreement.value,
        "difference": None if c.cause is None else c.cause.value,
        "detail": c.detail,
        "passes": [
            {
                "number": check.number,
                "real": [check.real.start, check.real.upper, check.real.end],
                "predicted": None
                if check.predicted is None
                else [
                    check.predicted.start_offset,
                    check.predicted.upper_bound,
                    check.predicted.end_offset,
                ],
                "predicted_failure": check.predicted_failure,
                "real_failure": check.real.failure,
                "differences": list(check.differences),
            }
            for check in c.passes
        ],
    }


def cleanings_json(h: BrokerHistory | None, broker_id: int | None) -> list[CleaningJson]:
    """The top-level ``cleanings``: each offsets partition's newest cleanings in the log, oldest
    first per partition."""
    if h is None:
        return []
    zone = h.logs.files.zone
    out: list[CleaningJson] = []
    for _, p in sorted(h.partitions.items(), key=lambda kv: _number(kv[0])):
        out.extend(_cleaning_row(broker_id, p, c, r, zone) for c, r in p.recent)
    return out


def _cleaning_row(
    broker_id: int | None, p: PartitionHistory, c: Cleaning, r: RealPass, zone: LogZone
) -> CleaningJson:
    real = pass_json(c, r)
    return {
        "broker_id": broker_id,
        "partition": _number(p.partition),
        "thread": c.thread,
        "began_at": _iso(c.begun_at),
        "began_at_ms": zone.epoch_ms(c.begun_at),
        "ended_at_ms": _ms(zone, c.ended_at),
        "start_offset": real["start_offset"],
        "upper_bound": real["upper_bound"],
        "end_offset": real["end_offset"],
        "segments": real["segments"],
        "end": real["end"],
        "buffer_utilization": real["buffer_utilization"],
        "start_mb": real["start_mb"],
        "start_messages": real["start_messages"],
        "end_mb": real["end_mb"],
        "end_messages": real["end_messages"],
        "mb_read": real["mb_read"],
        "seconds": real["seconds"],
        "mb_per_second": real["mb_per_second"],
        "failure": real["failure"],
        "file": c.place.file,
        "position": c.place.position,
    }


def _number(name: str) -> int:
    return int(name.rpartition("-")[2])
