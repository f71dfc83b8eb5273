"""What a server log and the log dirs say together about the last startup: the totals it
works towards, and whether the broker is still running when the log just ends.

The log dirs (:mod:`.log_dir_totals`) are read NOW; the log tells what happened. So the dirs
give the totals only while the log shows log loading under way, and once the log's startup is
over they can only say whether the broker is gone (markers, checkpoints it no longer writes).
"""

from __future__ import annotations

from offsets_auditor.restart.fold import ProgressFold
from offsets_auditor.restart.log_dir_totals import LogDirTotals


def partitions_total_of(f: ProgressFold) -> tuple[int | None, str | None]:
    """The partitions this startup loads. Once log loading is over, the broker's own count is
    the total: the log dirs as listed now also hold partitions created since."""
    if f.loading_completed_at is not None:
        if f.announced_logs is not None:
            return f.announced_logs, 'broker log (log loading complete: "Loaded N logs")'
        return len(f.loaded), "broker log (log loading complete: the partitions it loaded)"
    if f.shutting_down_at is not None:
        return len(f.loaded), "broker log (it shut down before log loading completed)"
    if f.totals is not None:
        return f.totals.partition_count, "log dir listing (partition directories)"
    if f.announced_logs is not None:
        return f.announced_logs, 'broker log ("Loaded N logs")'
    if f.announced_by_dir:
        dirs = len(f.announced_by_dir)
        return sum(f.announced_by_dir.values()), f"broker log (per-log-dir counts, {dirs} dir(s))"
    return None, None


def segments_total_of(f: ProgressFold) -> tuple[int | None, str | None]:
    """The segments this startup recovers.

    - Once log loading is over (or the broker shut down first), what it recovered is all it
      recovers: the log dirs as listed now describe a later state (the broker deletes the
      clean-shutdown marker when it loads, and writes it again at a clean shutdown).
    - While it loads, the log dirs give the total: segments from each partition's recovery
      point on, in the dirs without a clean shutdown. From 2.8.0 the broker deletes the marker
      as it starts loading (KAFKA-10471; 2.8.0 ``LogManager.loadLogs``) and says per dir whether
      it recovers ("Skipping recovery for all logs in ..."/"Attempting recovery ...", 3.5+
      "Skipping recovery of N logs from ..."/"Recovering N logs from ..."): those lines decide.
    """
    if f.loading_completed_at is not None:
        return (
            len(f.recovering),
            "broker log (log loading complete: the segments whose recovery it logged)",
        )
    if f.shutting_down_at is not None:
        return (
            len(f.recovering),
            "broker log (it shut down before log loading completed)",
        )
    if f.clean_by_dir and all(f.clean_by_dir.values()):
        return 0, "broker log (clean shutdown file found in every log dir: no recovery)"
    if f.totals is not None:
        if f.clean_by_dir:
            unclean = _listed_dirs(f.totals, {d for d, c in f.clean_by_dir.items() if not c})
            return (
                f.totals.segments_from_recovery_points(unclean),
                "log dir listing (segments from each partition's recovery point on, in the"
                " log dirs the broker says it recovers)",
            )
        if f.totals.clean_shutdown and all(f.totals.clean_shutdown.values()):
            return 0, "log dir listing (clean shutdown marker present: no recovery)"
        return (
            f.totals.segments_to_recover,
            "log dir listing (segments from each partition's recovery point on)",
        )
    if f.unflushed_by_partition:
        return (
            sum(f.unflushed_by_partition.values()),
            f"broker log (k/n counters, {len(f.unflushed_by_partition)} partition(s) so far)",
        )
    return None, None


def _listed_dirs(totals: LogDirTotals, logged: set[str]) -> set[str] | None:
    """The listed log dirs the broker's paths name (same path, else same last component);
    ``None`` (every listed dir) when one cannot be matched."""
    found: set[str] = set()
    for path in logged:
        name = path.rstrip("/").rsplit("/", 1)[-1]
        match = [d for d in totals.log_dirs if d == path or d.rstrip("/").endswith("/" + name)]
        if not match and name not in totals.log_dirs:
            return None
        found.update(match or [name])
    return found


#: A running broker rewrites replication-offset-checkpoint every 5 s by default; twelve missed
#: rewrites, with the server log silent as long, mean it is not running.
STALE_MS = 60_000


def stopped_phase(f: ProgressFold) -> tuple[str, str] | None:
    """(phase, why) when the log dirs show that a broker whose log ends after its start is no
    longer running: ``stopped`` when every dir holds a clean-shutdown marker again (the
    broker deletes it while loading and writes it at a clean shutdown: 0.9.0.1, 2.3.0
    ``LogManager``), ``not-running`` when no dir's replication-offset-checkpoint and not the
    server log were written for ``STALE_MS`` (a broker killed with SIGKILL, an OOM kill or a
    lost host leaves no line). Only judged after log loading (the checkpoint is first written
    once the broker leads or follows partitions)."""
    t = f.totals
    if t is None or f.loading_completed_at is None:
        return None
    dirs = [d for d in t.log_dirs if t.partition_dirs_in(d) > 0]
    if not dirs:
        return None
    if all(t.clean_shutdown.get(d) for d in dirs):
        return (
            "stopped",
            "every log dir holds a clean-shutdown marker again: the broker shut down cleanly"
            " after this startup (its shutdown lines are not in this log)",
        )
    if t.read_at_ms is None or f.log_mtime_ms is None:
        return None
    stale = t.read_at_ms - STALE_MS
    written = [t.checkpoint_written_ms.get(d) for d in dirs]
    if f.log_mtime_ms < stale and all(w is None or w < stale for w in written):
        newest = max((w for w in written if w is not None), default=None)
        ages = f"server log {(t.read_at_ms - f.log_mtime_ms) // 1000:,} s ago" + (
            ""
            if newest is None
            else f", replication-offset-checkpoint {(t.read_at_ms - newest) // 1000:,} s ago"
        )
        return (
            "not-running",
            f"the log ends without a shutdown line, no clean-shutdown marker, and the broker"
            f" last wrote {ages} (a running broker rewrites that checkpoint every 5 s,"
            " replica.high.watermark.checkpoint.interval.ms): it stopped without shutting"
            " down (kill -9, OOM kill, host loss) or hangs",
        )
    return None


def state_notes(f: ProgressFold) -> list[str]:
    """What the log dirs say beyond the log, once log loading is over."""
    if f.loading_completed_at is None or f.shutting_down_at is not None:
        return []
    stopped = stopped_phase(f)
    if stopped is not None:
        return [stopped[1]]
    notes = []
    if f.totals is None:
        if f.broker_started_at is not None:
            notes.append(
                "'started' is as of the log's last line: a broker killed with SIGKILL leaves no"
                " line; give LOGDIR to check that it still writes its checkpoints"
            )
        return notes
    unclean = [d for d, clean in f.totals.clean_shutdown.items() if not clean]
    if unclean:
        segments = f.totals.segments_from_recovery_points(set(unclean))
        notes.append(
            f"log dirs now: no clean-shutdown marker in {len(unclean)} of"
            f" {len(f.totals.clean_shutdown)} (a running broker keeps none); an unclean restart"
            f" from this state would re-read {segments:,} segments"
        )
    return notes
