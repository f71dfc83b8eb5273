"""Damaged bytes in an offsets partition: one finding per damaged spot, saying what it does to
each of the broker's readers of those bytes.

A spot is reported by whoever reads it: the segment walk (``reader.segment``: an entry that
cannot be framed or read, or whose CRC does not match) and the group replay (a record whose key
or value is no offsets schema). :func:`damage_findings` merges what both say about one file
position into one finding, with the consequence for

- **the cleaner**: whether its reads fail there and how (``cleaner.damage``; from the
  emulation when one ran: the pass that fails and Kafka's message),
- **the coordinator's load** after a failover (``groups.rules`` rule 9): an entry or record it
  cannot read throws out of the load (CRCs are never checked),
- **log recovery** at the next start after an unclean shutdown (A:0.9.0.1 and A:2.3.0
  ``Log.recoverLog``, ``LogSegment.recover``): when no ``.kafka_cleanshutdown`` is found, the
  segments from the one holding the recovery point on are re-read, every entry's CRC checked,
  and the log is truncated at the first entry that cannot be read or fails its check; every
  later segment is deleted ("Corruption found in segment N, truncating to offset M").

A partial entry or a zero-filled tail at the end of the active segment is the normal state of a
running broker (the entry being written, or ``log.preallocate``) or of one killed mid-write:
recovery truncates it, the load ends before it, the cleaner never reads the active segment.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import PurePath

from offsets_auditor.cleaner.behaviour import CleanerBehaviour
from offsets_auditor.cleaner.damage import (
    CleanerDamage,
    ReadBuffers,
    exception_at,
    stops_the_cleaner,
)
from offsets_auditor.errors import (
    ChecksumError,
    ControlKeyError,
    DecodeError,
    OverLimitError,
    TruncatedError,
    UnreadableFileError,
)
from offsets_auditor.findings import Finding, FindingKind, Severity
from offsets_auditor.groups.rules import LoaderRules
from offsets_auditor.logdir.model import LogDir, PartitionDir
from offsets_auditor.startup.indexes import recovery_points


class Damage(StrEnum):
    """What kind of damage one error is."""

    #: the entry was read; its stored CRC does not match
    CHECKSUM = "checksum"
    #: an entry that cannot be read; the entries after it can
    ENTRY = "entry"
    #: a size field below the minimum: nothing after it in the segment can be framed
    UNFRAMED = "unframed"
    #: an entry that runs past the end of the file (or too few bytes for one)
    PARTIAL = "partial"
    #: a record whose key or value is no offsets schema (the group replay's)
    RECORD = "record"
    #: a control record whose key ``ControlRecordType.parse`` refuses
    CONTROL = "control"
    #: an entry over the auditor's own size limit: not damage, skipped unread
    OVER_LIMIT = "over-limit"
    #: a file the auditor could not open: not damage, nothing known about it
    UNREADABLE = "unreadable"


def damage_of(error: DecodeError, *, in_record: bool = False) -> Damage:
    if isinstance(error, ControlKeyError):
        return Damage.CONTROL
    if in_record:
        return Damage.RECORD
    if isinstance(error, UnreadableFileError):
        return Damage.UNREADABLE
    if isinstance(error, OverLimitError):
        return Damage.OVER_LIMIT
    if isinstance(error, ChecksumError):
        return Damage.CHECKSUM
    if error.framing is not None:
        return Damage.PARTIAL if isinstance(error, TruncatedError) else Damage.UNFRAMED
    return Damage.ENTRY


@dataclass(frozen=True, slots=True)
class CleanerView:
    """What the cleaner makes of the partition: its version's behaviour and buffers, and the
    failure the emulation ran into (None: none, or no emulation ran)."""

    behaviour: CleanerBehaviour
    buffers: ReadBuffers
    failure_damage: CleanerDamage | None = None
    failure_pass: int | None = None
    emulated: bool = False


@dataclass(frozen=True, slots=True)
class PartitionPlace:
    """Where the partition's segments are and how the broker would start on them.
    ``segments``: (file name, base offset) in offset order; ``recovery_point`` as the broker
    reads it (0 when the checkpoint has no entry or cannot be read)."""

    name: str
    number: int
    segments: tuple[tuple[str, int], ...]
    recovery_point: int
    clean_shutdown: bool
    log_end_offset: int
    running: bool = False  # a broker runs on the log dir (``LogDir.liveness``)


@dataclass(frozen=True, slots=True)
class _Spot:
    file: str | None
    position: int | None
    reader: tuple[DecodeError, ...]
    records: tuple[DecodeError, ...]


def place_of(logdir: LogDir, partition: PartitionDir, log_end_offset: int) -> PartitionPlace:
    """Where ``partition`` of ``logdir`` is, as log recovery would start on it."""
    points, _ = recovery_points(logdir)
    return PartitionPlace(
        name=partition.name,
        number=partition.partition,
        segments=tuple((s.log.name, s.base_offset) for s in partition.segments),
        recovery_point=points.get((partition.topic, partition.partition), 0),
        clean_shutdown=logdir.clean_shutdown.present,
        log_end_offset=log_end_offset,
        running=logdir.liveness.running,
    )


def damage_findings(
    place: PartitionPlace,
    reader_errors: Iterable[DecodeError],
    record_errors: Iterable[DecodeError],
    loader: LoaderRules,
    cleaner: CleanerView | None,
) -> list[Finding]:
    """One finding per damaged spot (file and byte position) of the partition, in file
    order."""
    spots: dict[tuple[str | None, int | None], tuple[list[DecodeError], list[DecodeError]]] = {}
    for error in reader_errors:
        spots.setdefault((error.file, error.position), ([], []))[0].append(error)
    for error in record_errors:
        spots.setdefault((error.file, error.position), ([], []))[1].append(error)
    ordered = sorted(spots.items(), key=lambda kv: (kv[0][0] or "", kv[0][1] or -1))
    return [
        _finding(_Spot(file, position, tuple(reader), tuple(records)), place, loader, cleaner)
        for (file, position), (reader, records) in ordered
    ]


def _finding(
    spot: _Spot, place: PartitionPlace, loader: LoaderRules, cleaner: CleanerView | None
) -> Finding:
    kinds = [damage_of(e) for e in spot.reader] + [
        damage_of(e, in_record=True) for e in spot.records
    ]
    errors = [*spot.reader, *spot.records]
    first = errors[0]
    segment = _segment_of(spot.file, place)
    active = segment is not None and segment == len(place.segments) - 1
    what = "; ".join(e.message for e in errors)
    if kinds == [Damage.UNREADABLE]:
        return _make(
            FindingKind.UNREADABLE_FILE,
            Severity.WARNING,
            f"{what}: the auditor read nothing of it (the broker, another user, may)",
            spot,
            first,
            place,
        )
    if kinds == [Damage.OVER_LIMIT]:
        return _make(
            FindingKind.OVERSIZED_ENTRY,
            Severity.WARNING,
            f"{what}. The auditor skipped it unread; the broker reads it",
            spot,
            first,
            place,
        )
    if active and set(kinds) <= {Damage.PARTIAL, Damage.UNFRAMED}:
        return _make(
            FindingKind.TRUNCATED_TAIL,
            Severity.INFO,
            f"{what}. At the end of the active segment this is the entry being written on a"
            " running broker (or preallocated space), or one cut short by a crash: log recovery"
            " truncates the segment here at the next start after an unclean shutdown, the"
            " coordinator's load ends before it, and the cleaner never reads the active segment",
            spot,
            first,
            place,
        )
    cleaner_text, stops_cleaner = _for_the_cleaner(spot, kinds, active, cleaner)
    load_text, load_fails = _for_the_load(kinds, place, loader)
    recovery_text = _for_recovery(spot, kinds, segment, place)
    if Damage.UNFRAMED in kinds or Damage.PARTIAL in kinds:
        kind = FindingKind.CORRUPT_SEGMENT
    elif {Damage.ENTRY, Damage.RECORD, Damage.CONTROL} & set(kinds):
        kind = FindingKind.CORRUPT_RECORD
    else:
        kind = FindingKind.CHECKSUM_MISMATCH
    severity = Severity.CRITICAL if stops_cleaner or load_fails else Severity.WARNING
    detail = f"{what}. Cleaner: {cleaner_text}. Coordinator load: {load_text}. {recovery_text}"
    return _make(kind, severity, detail, spot, first, place)


def _for_the_cleaner(
    spot: _Spot,
    kinds: Sequence[Damage],
    active: bool,
    cleaner: CleanerView | None,
) -> tuple[str, bool]:
    if active:
        return "never reads the active segment", False
    stopping = next((e for e in spot.reader if stops_the_cleaner(e)), None) or next(
        (e for e in spot.records if isinstance(e, ControlKeyError)), None
    )
    if stopping is None:
        if Damage.CHECKSUM in kinds:
            return "reads it as is (it checks no CRC)", False
        return "reads it as is (it hashes key bytes, it parses no value)", False
    if cleaner is None:
        return (
            "a clean that reaches this segment fails here (`audit` tells which pass, with"
            " the exception)",
            True,
        )
    fate = (
        "the cleaner thread dies (no partition of this broker is compacted again until a restart)"
        if cleaner.behaviour.exception_kills_thread
        else "the partition is marked uncleanable until the broker restarts"
    )
    failed = cleaner.failure_damage
    if failed is not None and _same_spot(failed.error, stopping):
        message = _message(failed, cleaner)
        return f"pass {cleaner.failure_pass} fails here with '{message}'; {fate}", True
    message = _message(CleanerDamage(stopping, 0), cleaner)
    when = (
        "no pass reaches it as things stand (the emulation stops before it)"
        if cleaner.emulated
        else "a clean that reaches this segment fails"
    )
    return f"{when}; when one does: '{message}', and {fate}", True


def _same_spot(a: DecodeError, b: DecodeError) -> bool:
    return (a.file, a.position) == (b.file, b.position)


def _message(damage: CleanerDamage, cleaner: CleanerView) -> str:
    file = damage.error.file or ""
    return exception_at(damage, file, cleaner.buffers, cleaner.behaviour)


def _for_the_load(
    kinds: Sequence[Damage], place: PartitionPlace, loader: LoaderRules
) -> tuple[str, bool]:
    if set(kinds) <= {Damage.CHECKSUM}:
        return "loads its records as they are (it checks no CRC)", False
    if set(kinds) <= {Damage.PARTIAL}:  # mid-log: the active segment's tail is not here
        if loader.partial_entry_stalls_load:
            return (
                "never finishes: it finds this entry for the next offset, reads no whole"
                " message from it and asks again, forever; the partition's groups get"
                " NOT_COORDINATOR_FOR_GROUP, and so do those of every offsets partition"
                " whose load this broker scheduled after it",
                True,
            )
        return (
            "finds no whole entry here and goes on at the next segment: it finishes without"
            " what follows in this segment (offsets committed there are served older, or"
            " not at all)",
            False,
        )
    return (
        f"throws here ('{loader.load_error(place.number)}'): {loader.after_load_error()}",
        True,
    )


def _for_recovery(
    spot: _Spot, kinds: Sequence[Damage], segment: int | None, place: PartitionPlace
) -> str:
    checked = {Damage.CHECKSUM, Damage.UNFRAMED, Damage.PARTIAL}
    fails_check = bool(set(kinds) & checked) or any(e.checksum_mismatch for e in spot.reader)
    if not fails_check:
        return "Log recovery keeps it (its CRC matches)."
    if segment is None:
        return "Log recovery truncates the log here if it re-reads this file."
    segments = place.segments
    next_base = segments[segment + 1][1] if segment + 1 < len(segments) else None
    if next_base is not None and next_base <= place.recovery_point:
        return (
            f"Log recovery does not re-read it: it lies below the recovery point"
            f" ({place.recovery_point:,})."
        )
    later = len(segments) - segment - 1
    dropped = (
        f" and deletes the {later} later segment(s) (offsets {next_base:,} to"
        f" {place.log_end_offset:,})"
        if later and next_base is not None
        else ""
    )
    if place.running:
        when = (
            "The broker is running: after a clean shutdown its next start skips log recovery;"
            " after a crash, recovery"
        )
    elif place.clean_shutdown:
        when = (
            "The broker shut down cleanly, so its next start skips log recovery; after any"
            " unclean shutdown, recovery"
        )
    else:
        when = (
            "At the next start after an unclean shutdown (no .kafka_cleanshutdown here), log"
            " recovery"
        )
    return f"{when} truncates the log at byte {spot.position} of this segment{dropped}."


def _segment_of(file: str | None, place: PartitionPlace) -> int | None:
    if file is None:
        return None
    name = PurePath(file).name
    return next((i for i, (seg, _) in enumerate(place.segments) if seg == name), None)


def _make(
    kind: FindingKind,
    severity: Severity,
    detail: str,
    spot: _Spot,
    first: DecodeError,
    place: PartitionPlace,
) -> Finding:
    return Finding(
        kind,
        severity,
        detail,
        file=spot.file,
        position=spot.position,
        field=first.field,
        partition=place.name,
    )
