"""What the broker's cleaner did, beside what the emulation says it does: pure rules, findings.

Per partition: the passes the broker logged ("Building offset map ... [start, end)" and where
each ended) set against the emulation's :class:`~offsets_auditor.cleaner.passes.PassResult` of
the same dirty section, with a named difference when they disagree. Per broker: the cleaner
threads that died since the cleaner last started, and the partitions marked uncleanable.

Where a pass ended: the banner's "dirty section = [start, end]" says so, except in 0.10.2.0 to
2.5.x, which print the start twice (``recordStats`` is called before ``endOffset`` is
assigned: 0.10.2.0 ``LogCleaner.scala`` lines 242-243, 2.5.1 lines 362-363; fixed in 2.6.0,
lines 374-375). There the next cleaning of the partition starts where it ended (the
checkpoint), and so does the cleaner-offset-checkpoint after the last one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Protocol

from offsets_auditor.broker_logs.history import (
    CleanerHistory,
    Cleaning,
    CleaningEnd,
    uncleanable_since,
)
from offsets_auditor.broker_logs.records import Place
from offsets_auditor.cleaner.passes import CleanerFailure, PassResult
from offsets_auditor.findings import Finding, FindingKind, Severity
from offsets_auditor.versions import KafkaVersion


def _iso(at: datetime) -> str:
    return at.isoformat(sep=" ", timespec="milliseconds")


def banner_end_is_start(version: KafkaVersion) -> bool:
    """0.10.2.0 to 2.5.x print the first dirty offset as the end of the dirty section."""
    return version.at_least("0.10.2") and not version.at_least("2.6")


# --- thread deaths and uncleanable partitions ---------------------------------------------


def thread_death_findings(history: CleanerHistory) -> list[Finding]:
    """``cleaner-thread-died``: each cleaner thread the broker's log shows dying since the
    cleaner last started, with Kafka's exception as printed. A fact from the log: distinct
    from the emulation's ``cleaner-thread-death`` (a prediction)."""
    run = history.last_run
    if run is None:
        return []
    found = []
    for life in run.dead:
        assert life.died is not None and life.died_at is not None
        where = f" cleaning {life.died_cleaning}" if life.died_cleaning else ""
        alive = len(run.alive)
        since = (
            f"; the cleaner was shut down at {_iso(run.shut_down_at)} (the broker stopped), and"
            " the next start runs into the same exception unless its cause is gone"
            if run.shut_down_at is not None
            else ""
        )
        found.append(
            Finding(
                kind=FindingKind.CLEANER_THREAD_DIED,
                severity=Severity.CRITICAL,
                detail=f"kafka-log-cleaner-thread-{life.thread} died at {_iso(life.died_at)}"
                f"{where}: {life.died.text}. It stays dead until the broker restarts;"
                f" {alive} cleaner thread(s) alive after it{since}",
                file=life.died_place.file if life.died_place else None,
                position=life.died_place.position if life.died_place else None,
                partition=life.died_cleaning,
            )
        )
    return found


def uncleanable_findings(
    history: CleanerHistory, broker_starts: Sequence[datetime] = ()
) -> list[Finding]:
    """``partition-uncleanable``: each partition marked uncleanable since the broker last
    started (2.1+), since when, and the exception behind it."""
    found = []
    for partition, mark in sorted(uncleanable_since(history, broker_starts).items()):
        cause = mark.failure.text if mark.failure is not None else "(no exception printed)"
        found.append(
            Finding(
                kind=FindingKind.PARTITION_UNCLEANABLE,
                severity=Severity.CRITICAL,
                detail=f"{partition} has been uncleanable since {_iso(mark.at)}: {cause}. The"
                " cleaner skips it until the broker restarts (the mark is kept in memory only),"
                " so it grows without bound",
                file=mark.place.file,
                position=mark.place.position,
                partition=partition,
            )
        )
    return found


# --- a partition's passes beside the emulation's --------------------------------------------


class Agreement(StrEnum):
    AGREES = "agrees"
    DIFFERS = "differs"
    #: the emulated section is not one the broker's log shows a cleaning of
    NOT_COMPARABLE = "not-comparable"


class Difference(StrEnum):
    """Why a real pass and the emulated one differ."""

    #: the broker's offset map held another number of entries, or its dirty ratio threshold
    #: differs: the config given is not the broker's
    CONFIG_DRIFT = "config-drift"
    #: what the broker printed belongs to another Kafka version than the one emulated
    OTHER_VERSION = "other-version"
    #: the broker saw another log than the one read (another active segment)
    LOG_CHANGED = "log-changed"
    #: same section, same config, same version, another result: a bug of ours
    OURS = "ours"


@dataclass(frozen=True, slots=True)
class RealPass:
    """One cleaning as the broker logged it: the map's range ``[start, upper)``, where it
    ended (``None`` when the log does not say), the banner's message counts, the exception
    that ended it (``None`` for a completed cleaning)."""

    at: datetime
    start: int | None
    upper: int | None
    end: int | None
    segments: int | None
    start_messages: int | None
    end_messages: int | None
    failure: str | None
    banner_end: int | None
    #: where the partition's next cleaning began (its checkpoint then), when it did
    next_start: int | None = None
    #: the cleaning's "Beginning cleaning of log" line (its file and byte position)
    place: Place | None = None


def real_passes(
    cleanings: Sequence[Cleaning], version: KafkaVersion, checkpoint: int | None = None
) -> tuple[RealPass, ...]:
    """``cleanings`` (one partition's, in order) as passes. ``checkpoint``: the partition's
    cleaner-offset-checkpoint entry read after the last of them, if known."""
    out = []
    for i, c in enumerate(cleanings):
        end: int | None = None
        banner_end = c.stats.dirty_end if c.stats is not None else None
        following = next((n.map_start for n in cleanings[i + 1 :] if n.map_start is not None), None)
        if c.end is CleaningEnd.COMPLETED:
            if banner_end is not None and not banner_end_is_start(version):
                end = banner_end
            elif following is not None:
                end = following
            elif checkpoint is not None and i == len(cleanings) - 1 and _within(c, checkpoint):
                end = checkpoint
        failure = None
        if c.end in (CleaningEnd.THREAD_DIED, CleaningEnd.MARKED_UNCLEANABLE):
            failure = c.failure.message if c.failure is not None else ""
        out.append(
            RealPass(
                at=c.begun_at,
                start=c.map_start,
                upper=c.map_end,
                end=end,
                segments=c.map_segments,
                start_messages=c.stats.start_messages if c.stats else None,
                end_messages=c.stats.end_messages if c.stats else None,
                failure=failure,
                banner_end=banner_end,
                next_start=following if c.end is CleaningEnd.COMPLETED else None,
                place=c.place,
            )
        )
    return tuple(out)


def _within(c: Cleaning, checkpoint: int) -> bool:
    """Whether ``checkpoint`` can be where ``c`` ended: a pass ends past its start and at most
    at its map's upper bound (a log dir read before the cleaning holds an older checkpoint)."""
    return (c.map_start is None or checkpoint > c.map_start) and (
        c.map_end is None or checkpoint <= c.map_end
    )


@dataclass(frozen=True, slots=True)
class PassCheck:
    """One real pass beside the emulated one of the same number (``None``: the emulation has
    no such pass); ``differences`` name the fields that disagree."""

    number: int
    real: RealPass
    predicted: PassResult | None
    predicted_failure: str | None
    differences: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Comparison:
    partition: str
    agreement: Agreement
    cause: Difference | None
    detail: str
    passes: tuple[PassCheck, ...] = ()


def compare(
    partition: str,
    real: Sequence[RealPass],
    predicted: Sequence[PassResult],
    *,
    first_dirty: int,
    predicted_failure: str | None,
    version: KafkaVersion,
    capacity: int | None = None,
    running: bool = False,
) -> Comparison:
    """The broker's passes of ``partition`` from the one that began at ``first_dirty`` (where
    the emulation began) beside the emulation's ``predicted`` passes (and the failure it
    predicts after them, Kafka's message without the exception class). ``running``: a broker
    runs on the log dir read (its ``.lock`` held)."""
    # 1. The emulation starts at the first dirty offset of the log dir it read; the broker's
    #    cleanings of that same section are the ones from the first that began there.
    aligned = next((i for i, r in enumerate(real) if r.start == first_dirty), None)
    if aligned is None:
        last = next((r for r in reversed(real) if r.end is not None), None)
        if last is not None and last.end == first_dirty:
            why = (
                f"the log dir was read after the broker's last cleaning of it (which ended at"
                f" {first_dirty:,}, its checkpoint): the emulation is of the next one"
            )
        elif real:
            why = f"no cleaning in the broker's log began at offset {first_dirty:,}"
        else:
            why = "the broker's log shows no cleaning of it"
        return Comparison(partition, Agreement.NOT_COMPARABLE, None, why)
    # 2. On a running broker a cleaning from the checkpoint that did not fail is under way, or
    #    done and not yet checkpointed: the cleaner swaps the cleaned segments in before it
    #    writes the checkpoint (2.3.0 LogCleaner.cleanLog: cleanSegments, then doneCleaning),
    #    so the log dir read holds part of its result, not the log it began on. A failed
    #    cleaning swapped nothing (the thread died, or the partition was marked uncleanable).
    if running and all(r.failure is None for r in real[aligned:]):
        why = (
            f"the broker is running and its cleaning from offset {first_dirty:,} is under way or"
            " not yet checkpointed: the log dir read holds part of what it wrote"
        )
        return Comparison(partition, Agreement.NOT_COMPARABLE, None, why)
    checks: list[PassCheck] = []
    causes: list[tuple[Difference, str]] = []
    for number, r in enumerate(real[aligned:], start=1):
        p = predicted[number - 1] if number - 1 < len(predicted) else None
        fails_here = predicted_failure if number == len(predicted) + 1 else None
        diffs, found = _check(number, r, p, fails_here, version, capacity)
        checks.append(PassCheck(number, r, p, fails_here, diffs))
        if found:
            # the first pass that differs names the cause: the later ones clean other
            # sections because of it
            causes = found
            break
        if r.failure is not None or (p is None and fails_here is None):
            break
    # 3. The broker's log may end before the emulation's passes do: those are not differences
    #    (the broker has not got there yet).
    if not causes:
        return Comparison(
            partition,
            Agreement.AGREES,
            None,
            f"the broker's {len(checks)} pass(es) from offset {first_dirty:,} are the"
            " emulation's: same offset ranges, ends and counts",
            tuple(checks),
        )
    cause, why = _first_cause(causes)
    return Comparison(partition, Agreement.DIFFERS, cause, why, tuple(checks))


_ORDER = (
    Difference.LOG_CHANGED,
    Difference.OTHER_VERSION,
    Difference.CONFIG_DRIFT,
    Difference.OURS,
)


def _first_cause(causes: list[tuple[Difference, str]]) -> tuple[Difference, str]:
    return min(causes, key=lambda c: _ORDER.index(c[0]))


def _check(
    number: int,
    r: RealPass,
    p: PassResult | None,
    predicted_failure: str | None,
    version: KafkaVersion,
    capacity: int | None,
) -> tuple[tuple[str, ...], list[tuple[Difference, str]]]:
    diffs: list[str] = []
    causes: list[tuple[Difference, str]] = []
    # 3. The banner's end: 0.10.2-2.5 repeat the start, other versions print the end; where
    #    the next cleaning began tells which the broker did.
    moved = r.next_start is not None and r.start is not None and r.next_start != r.start
    if r.banner_end is not None and r.start is not None and moved:
        if banner_end_is_start(version) and r.banner_end != r.start:
            diffs.append("banner")
            causes.append(
                (
                    Difference.OTHER_VERSION,
                    f"pass {number}: the banner prints the end of the"
                    f" dirty section ({r.banner_end:,}), which {version} does not (0.10.2.0 to"
                    " 2.5.x print the start twice): the broker runs another version",
                )
            )
            return tuple(diffs), causes
        if not banner_end_is_start(version) and r.banner_end == r.start:
            diffs.append("banner")
            causes.append(
                (
                    Difference.OTHER_VERSION,
                    f"pass {number}: the banner prints the start as the"
                    f" end ({r.banner_end:,}; the next cleaning began at {r.next_start:,}) as only"
                    f" 0.10.2.0 to 2.5.x do, not {version}",
                )
            )
            return tuple(diffs), causes
    # 4. A failure: the same exception message, or a difference.
    if r.failure is not None:
        if predicted_failure is None:
            diffs.append("failure")
            causes.append(_failure_where_we_clean(number, r.failure, capacity))
        elif not same_message(predicted_failure, r.failure):
            diffs.append("failure")
            causes.append(_failure_cause(number, r.failure, predicted_failure, capacity))
        return tuple(diffs), causes
    if p is None:
        if predicted_failure is not None:
            diffs.append("failure")
            causes.append(
                (
                    Difference.OURS,
                    f"pass {number}: the emulation's cleaner fails"
                    f" ({predicted_failure}) where the broker's cleaned",
                )
            )
        else:
            diffs.append("passes")
            causes.append(
                (
                    Difference.CONFIG_DRIFT,
                    f"the broker cleaned the partition a {number}th time"
                    f" from {r.start:,} where the emulation stops after {number - 1}: its"
                    " min.cleanable.dirty.ratio (or the log) is not the one given",
                )
            )
        return tuple(diffs), causes
    # 5. The same section: where the map's range ends is the active segment (or the first
    #    uncleanable offset): another value means the broker saw another log.
    if r.upper is not None and r.upper != p.upper_bound:
        diffs.append("upper_bound")
        causes.append(
            (
                Difference.LOG_CHANGED,
                f"pass {number}: the broker mapped [{r.start:,},"
                f" {r.upper:,}), the emulation [{p.start_offset:,}, {p.upper_bound:,}): the broker"
                " saw another active segment (or uncleanable offset) than the log dir read",
            )
        )
        return tuple(diffs), causes
    if r.segments is not None and r.segments != p.segments:
        diffs.append("segments")
        causes.append(
            (
                Difference.LOG_CHANGED,
                f"pass {number}: the broker mapped {r.segments} segments,"
                f" the emulation {p.segments}",
            )
        )
    # 6. Where the pass ended is where its offset map filled: another end is another map.
    if r.end is not None and r.end != p.end_offset:
        diffs.append("end_offset")
        causes.append(
            (
                Difference.CONFIG_DRIFT,
                f"pass {number}: the broker's map ended the pass at"
                f" {r.end:,}, the emulation's at {p.end_offset:,}: the broker's offset map holds"
                " another number of entries (log.cleaner.dedupe.buffer.size, log.cleaner.threads"
                " or log.cleaner.io.buffer.load.factor differ from the config given)",
            )
        )
    # 7. Same section, same end, other counts: ours.
    for name, real_value, ours in (
        ("start_records", r.start_messages, p.start_records),
        ("end_records", r.end_messages, p.end_records),
    ):
        if real_value is not None and real_value != ours:
            diffs.append(name)
            causes.append(
                (
                    Difference.OURS,
                    f"pass {number}: the broker counted {real_value:,}"
                    f" {name.replace('_', ' ')}, the emulation {ours:,}",
                )
            )
    return tuple(diffs), causes


def _failure_where_we_clean(number: int, real: str, capacity: int | None) -> tuple[Difference, str]:
    """The broker's cleaner failed where the emulation cleans. Up to 0.10.0 the message names
    the broker's map capacity (0.9.0.1 ``LogCleaner.buildOffsetMapForSegment``: "... but offset
    map can fit only %d", ``maxDesiredMapSize = (map.slots * dupBufferLoadFactor).toInt``): one
    other than the emulation's ``capacity`` is the config given, not the broker's."""
    fit = re.search(r"offset map can fit only (\d+)", real)
    if fit is not None and capacity is not None and int(fit[1]) != capacity:
        return (
            Difference.CONFIG_DRIFT,
            f"pass {number}: the broker's offset map fits {int(fit[1]):,} entries, the config"
            f" given {capacity:,}, so the emulation cleans where the broker failed ({real}):"
            " give the broker's log.cleaner.dedupe.buffer.size, log.cleaner.threads and"
            " log.cleaner.io.buffer.load.factor",
        )
    return (
        Difference.OURS,
        f"pass {number}: the broker's cleaner failed ({real}) where the emulation cleans",
    )


def _failure_cause(
    number: int, real: str, predicted: str, capacity: int | None
) -> tuple[Difference, str]:
    """Two messages of one kind with other numbers: the map's capacity differs (0.9's
    "offset map can fit only N")."""
    fit = re.search(r"offset map can fit only (\d+)", real)
    ours = re.search(r"offset map can fit only (\d+)", predicted)
    if fit is not None and ours is not None and fit[1] != ours[1]:
        return (
            Difference.CONFIG_DRIFT,
            f"pass {number}: the broker's offset map fits {int(fit[1]):,} entries, the"
            f" config given {int(ours[1]):,} ({real})",
        )
    if _shape(_LOG_DIR_PATH.sub(r"\g<tail>", real)) == _shape(
        _LOG_DIR_PATH.sub(r"\g<tail>", predicted)
    ):
        return (
            Difference.CONFIG_DRIFT,
            f"pass {number}: the broker failed as the emulation does but with other numbers:"
            f" {real!r} against {predicted!r}",
        )
    return (
        Difference.OURS,
        f"pass {number}: the broker failed with {real!r}, the emulation with {predicted!r}",
    )


_LOG_DIR_PATH = re.compile(r"(?:[^\s/]*/)*(?P<tail>[^\s/]+-\d+/\d{20}\.[a-z]+)")


def same_message(ours: str, brokers: str) -> bool:
    """Kafka's message and the emulation's alike, but for where the log dir is mounted (a
    segment's path is the broker's absolute path; only its partition dir and name count)."""
    return _LOG_DIR_PATH.sub(r"\g<tail>", ours) == _LOG_DIR_PATH.sub(r"\g<tail>", brokers)


def _shape(message: str) -> str:
    return re.sub(r"\d+", "N", message)


def prediction_findings(comparisons: Iterable[Comparison]) -> list[Finding]:
    """``prediction-differs``: each partition whose broker's passes the emulation does not
    reproduce, with the named difference, at the broker's cleaning where they first part (its
    "Beginning cleaning" line). A warning: the verdicts and recommendations rest on a config or
    version that is not the broker's (or on a bug of ours) until it is settled;
    ``log-changed`` only says that the broker cleaned another log than the one read (its
    active segment rolled in between, as it does on a running broker): info."""
    found = []
    for c in comparisons:
        if c.agreement is not Agreement.DIFFERS:
            continue
        first = next((check for check in c.passes if check.differences), None)
        place = first.real.place if first is not None else None
        found.append(
            Finding(
                kind=FindingKind.PREDICTION_DIFFERS,
                severity=Severity.INFO if c.cause is Difference.LOG_CHANGED else Severity.WARNING,
                detail=f"the broker's cleaning of {c.partition} is not what the emulation"
                f" predicts ({c.cause.value if c.cause else 'unknown'}): {c.detail}",
                file=place.file if place is not None else None,
                position=place.position if place is not None else None,
                partition=c.partition,
            )
        )
    return found


def last_cleanings(history: CleanerHistory) -> dict[str, Cleaning]:
    """Per partition, the broker's last cleaning (of any end) in its log."""
    found: dict[str, Cleaning] = {}
    for cleaning in history.cleanings:
        found[cleaning.partition] = cleaning
    return found


class EmulatedPartition(Protocol):
    """What :func:`prediction_of` reads of the audit's ``Emulated``
    (``offsets_auditor.audit.partition``): where the emulation began, its passes and the
    failure it ends with."""

    @property
    def first_dirty(self) -> int: ...

    @property
    def passes(self) -> tuple[PassResult, ...]: ...

    @property
    def failure(self) -> CleanerFailure | None: ...


def prediction_of(emulated: EmulatedPartition) -> tuple[int, tuple[PassResult, ...], str | None]:
    """The emulation of one partition as :func:`compare_all` takes it."""
    failure = emulated.failure.message if emulated.failure is not None else None
    return emulated.first_dirty, tuple(emulated.passes), failure


def compare_all(
    history: CleanerHistory,
    predictions: Mapping[str, tuple[int, Sequence[PassResult], str | None]],
    version: KafkaVersion,
    checkpoints: Mapping[str, int] | None = None,
    capacity: int | None = None,
    running: bool = False,
) -> list[Comparison]:
    """:func:`compare` for every partition of ``predictions`` (name -> first dirty offset,
    predicted passes, predicted failure message)."""
    out = []
    for partition, (first_dirty, passes, failure) in sorted(predictions.items()):
        real = real_passes(
            history.cleanings_of(partition),
            version,
            (checkpoints or {}).get(partition),
        )
        out.append(
            compare(
                partition,
                real,
                passes,
                first_dirty=first_dirty,
                predicted_failure=failure,
                version=version,
                capacity=capacity,
                running=running,
            )
        )
    return out
