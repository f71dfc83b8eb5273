"""Pure parsers for the checkpoint files of a broker log dir: offset checkpoints and the
``leader-epoch-checkpoint`` (``meta.properties`` and the clean-shutdown marker are in
``offsets_auditor.logdir.meta_properties``).

Grammar shared by every checkpoint file (version 0; docs/kafka-internals.md §4.8)::

    <version int>\\n
    <expected entry count int>\\n
    <entry>\\n ...          entry = fields separated by Java's "\\\\s+"

Offset checkpoints (``cleaner-offset-checkpoint``, ``recovery-point-offset-checkpoint``,
``replication-offset-checkpoint``, ``log-start-offset-checkpoint``) have ``topic partition offset``
entries; ``leader-epoch-checkpoint`` has ``epoch startOffset`` entries.

The broker reads them with ``BufferedReader.readLine`` (``\\n``, ``\\r`` or ``\\r\\n``), parses
numbers with ``Integer.parseInt``/``Long.parseLong`` and throws at the first problem. We keep
going: every problem becomes a :class:`~offsets_auditor.findings.Finding` whose ``detail`` is the
exception text the given broker version would produce. The readers, by era:

- 0.8.1 – 0.9.0.x, ``core/src/main/scala/kafka/server/OffsetCheckpoint.scala`` (0.9.0.1): a
  malformed line → ``Malformed line in offset checkpoint file: '%s'.``; a bad number escapes as
  ``java.lang.NumberFormatException: For input string: "x"``; the count compares *distinct*
  partitions (a ``Map``): ``Expected %d entries but found only %d``; another version →
  ``Unrecognized version of the highwatermark checkpoint file: <found>``.
- 0.10.0.0 – 0.10.2.x, same file (0.10.0.0, 0.10.0.1): ``Malformed line in offset checkpoint
  file: <line>'`` (stray quote in the source), bad numbers reported as malformed lines.
- 0.11.0.0 – 2.5.x, ``core/.../server/checkpoints/CheckpointFile.scala`` (0.11.0.0, 2.3.0):
  ``Malformed line in checkpoint file (<path>): <line>'``; the count compares *lines* (a
  ``Buffer``): ``Expected N entries in checkpoint file (<path>), but found only M``; another
  version → ``Unrecognized version of the checkpoint file (<path>): 0`` (the source prints the
  *expected* version).
- 2.6.0 – 3.0.x (2.6.0, 3.0.0): the malformed text quotes the line: ``... (<path>): '<line>'``.
- 3.1.0+, ``server-common/.../server/common/CheckpointFile.java`` (3.1.0, 3.9.0-rc3):
  ``Malformed line in checkpoint file [<path>]: <line>``; ``Expected [N] entries in checkpoint
  file [<path>], but found only [M]``; ``Unrecognised version:<v>, expected version: 0 in
  checkpoint file at: <path>``; a bad number inside an entry is not caught
  (``OffsetCheckpointFile.Formatter``/``LeaderEpochCheckpointFile`` call ``toInt``/``parseLong``)
  and escapes as ``NumberFormatException``.

An empty file, or one with only a version line, reads as no entries in every version.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from offsets_auditor.findings import Finding, FindingKind, Severity
from offsets_auditor.versions import KafkaVersion

CHECKPOINT_VERSION = 0
INT32_RANGE = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)
#: ``java.util.regex`` ``\s``: space, \t, \n, \x0B, \f, \r.
_JAVA_WS = re.compile(r"[ \t\n\x0b\f\r]+")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
#: ``Integer.parseInt`` accepts an optional sign and Unicode decimal digits (``Character.digit``).
_JAVA_INT = re.compile(r"[+-]?\d+")


@dataclass(frozen=True, slots=True)
class CheckpointEntry:
    """One ``topic partition offset`` line; ``line`` is 1-based, ``position`` its byte offset."""

    topic: str
    partition: int
    offset: int
    line: int
    position: int


@dataclass(frozen=True, slots=True)
class EpochEntry:
    """One ``epoch startOffset`` line of a ``leader-epoch-checkpoint``."""

    epoch: int
    start_offset: int
    line: int
    position: int


@dataclass(frozen=True, slots=True)
class OffsetCheckpoint:
    """A parsed offset checkpoint. ``entries`` holds every well-formed entry line in file order
    (even when the broker would reject the file); ``readable_by_broker`` is False when the broker
    would throw reading it, and ``findings`` then says why, in the broker's words."""

    version: int | None
    expected_count: int | None
    entries: tuple[CheckpointEntry, ...]
    findings: tuple[Finding, ...]

    @property
    def readable_by_broker(self) -> bool:
        return not self.findings

    def offsets(self) -> dict[tuple[str, int], int]:
        """``(topic, partition) -> offset``; a repeated partition keeps its last line, as the
        broker's map does."""
        return {(e.topic, e.partition): e.offset for e in self.entries}


@dataclass(frozen=True, slots=True)
class LeaderEpochCheckpoint:
    """A parsed ``leader-epoch-checkpoint`` (0.11+), conventions as in :class:`OffsetCheckpoint`."""

    version: int | None
    expected_count: int | None
    entries: tuple[EpochEntry, ...]
    findings: tuple[Finding, ...]

    @property
    def readable_by_broker(self) -> bool:
        return not self.findings


class JavaNumberFormatError(Exception):
    """Java's ``NumberFormatException``; ``text`` is the rejected string."""

    def __init__(self, text: str) -> None:
        super().__init__(f'For input string: "{text}"')
        self.text = text


def java_int(text: str, bounds: tuple[int, int]) -> int:
    """``Integer.parseInt``/``Long.parseLong``: no whitespace, no underscores, range-checked."""
    if _JAVA_INT.fullmatch(text) is None:
        raise JavaNumberFormatError(text)
    value = int(text)
    if not bounds[0] <= value <= bounds[1]:
        raise JavaNumberFormatError(text)
    return value


def java_whitespace_split(line: str) -> list[str]:
    """``Pattern.compile("\\\\s+").split(line)``: a leading separator yields a leading empty
    string, trailing empty strings are removed, no match returns the line itself."""
    if _JAVA_WS.search(line) is None:
        return [line]
    parts = _JAVA_WS.split(line)
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def read_lines(text: str) -> list[tuple[str, int]]:
    """``BufferedReader.readLine`` over ``text``: ``(line, character position)`` pairs."""
    lines: list[tuple[str, int]] = []
    start = 0
    for match in _LINE_BREAK.finditer(text):
        lines.append((text[start : match.start()], start))
        start = match.end()
    if start < len(text):
        lines.append((text[start:], start))
    return lines


class _Era(StrEnum):
    V08 = "0.8.1"  # OffsetCheckpoint.scala, 0.8.1 - 0.9.0.x
    V010 = "0.10.0"  # OffsetCheckpoint.scala, 0.10.0.0 - 0.10.2.x
    V011 = "0.11.0"  # checkpoints/CheckpointFile.scala, 0.11.0.0 - 2.5.x
    V26 = "2.6.0"  # checkpoints/CheckpointFile.scala, 2.6.0 - 3.0.x
    V31 = "3.1.0"  # server-common CheckpointFile.java, 3.1.0+


def _era(version: KafkaVersion) -> _Era:
    for era in (_Era.V31, _Era.V26, _Era.V011, _Era.V010):
        if version.at_least(era.value):
            return era
    return _Era.V08


def _malformed_text(era: _Era, location: str, line: str) -> str:
    if era is _Era.V08:
        return f"Malformed line in offset checkpoint file: '{line}'."
    if era is _Era.V010:
        return f"Malformed line in offset checkpoint file: {line}'"
    if era is _Era.V011:
        return f"Malformed line in checkpoint file ({location}): {line}'"
    if era is _Era.V26:
        return f"Malformed line in checkpoint file ({location}): '{line}'"
    return f"Malformed line in checkpoint file [{location}]: {line}"


def _count_text(era: _Era, location: str, expected: int, found: int) -> str:
    if era in (_Era.V08, _Era.V010):
        return f"Expected {expected} entries but found only {found}"
    if era is _Era.V31:
        return (
            f"Expected [{expected}] entries in checkpoint file [{location}], "
            f"but found only [{found}]"
        )
    return f"Expected {expected} entries in checkpoint file ({location}), but found only {found}"


def _version_text(era: _Era, location: str, found: int) -> str:
    if era in (_Era.V08, _Era.V010):
        return f"Unrecognized version of the highwatermark checkpoint file: {found}"
    if era is _Era.V31:
        return (
            f"Unrecognised version:{found}, expected version: {CHECKPOINT_VERSION} "
            f"in checkpoint file at: {location}"
        )
    return f"Unrecognized version of the checkpoint file ({location}): {CHECKPOINT_VERSION}"


@dataclass(frozen=True, slots=True)
class _Parsed:
    version: int | None
    expected_count: int | None
    rows: list[tuple[list[str], int, int]]  # (fields, 1-based line, char position)
    findings: list[Finding]


def _parse(
    text: str,
    *,
    bounds: tuple[tuple[int, int] | None, ...],
    version: KafkaVersion,
    location: str,
    file: str | None,
    partition: str | None,
) -> _Parsed:
    """The broker's reader, generalised to keep going after the first problem."""
    era = _era(version)
    findings: list[Finding] = []

    def report(detail: str, position: int, field: str) -> None:
        findings.append(
            Finding(
                kind=FindingKind.MALFORMED_CHECKPOINT,
                severity=Severity.WARNING,
                detail=detail,
                file=file,
                position=position,
                field=field,
                partition=partition,
            )
        )

    def number_error(line: str, error: JavaNumberFormatError, *, in_entry: bool) -> str:
        # 0.8/0.9 never catch NumberFormatException; 3.1+ catches it for the version and
        # count lines only; 0.10 - 3.0 turn it into a malformed-line error.
        if era is _Era.V08 or (era is _Era.V31 and in_entry):
            return f"java.lang.NumberFormatException: {error}"
        return _malformed_text(era, location, line)

    lines = read_lines(text)
    if not lines:
        return _Parsed(None, None, [], findings)
    head, head_pos = lines[0]
    try:
        file_version = java_int(head, INT32_RANGE)
    except JavaNumberFormatError as error:
        report(number_error(head, error, in_entry=False), head_pos, "version")
        return _Parsed(None, None, [], findings)
    if file_version != CHECKPOINT_VERSION:
        report(_version_text(era, location, file_version), head_pos, "version")
        return _Parsed(file_version, None, [], findings)
    if len(lines) < 2:
        return _Parsed(file_version, None, [], findings)
    count_line, count_pos = lines[1]
    try:
        expected: int | None = java_int(count_line, INT32_RANGE)
    except JavaNumberFormatError as error:
        report(number_error(count_line, error, in_entry=False), count_pos, "count")
        expected = None
    rows: list[tuple[list[str], int, int]] = []
    for number, (line, pos) in enumerate(lines[2:], start=3):
        parts = java_whitespace_split(line)
        if len(parts) != len(bounds):
            report(_malformed_text(era, location, line), pos, "entry")
            continue
        try:
            for part, bound in zip(parts, bounds, strict=True):
                if bound is not None:
                    java_int(part, bound)
        except JavaNumberFormatError as error:
            report(number_error(line, error, in_entry=True), pos, "entry")
            continue
        rows.append((parts, number, pos))
    if not findings and expected is not None:
        # 0.8 - 0.10 count distinct partitions (a Map); 0.11+ count lines (a Buffer / List).
        found = len({tuple(r[0][:-1]) for r in rows}) if era in (_Era.V08, _Era.V010) else len(rows)
        if found != expected:
            report(_count_text(era, location, expected, found), count_pos, "count")
    return _Parsed(file_version, expected, rows, findings)


def parse_offset_checkpoint(
    text: str,
    *,
    version: KafkaVersion,
    location: str,
    file: str | None = None,
) -> OffsetCheckpoint:
    """Parse one of the four ``topic partition offset`` checkpoint files.

    ``location`` is the path the broker would print (it uses ``File.getAbsolutePath``); ``file``
    goes into the findings (relative to the log dir). ``position`` in findings and entries is a
    character offset, equal to the byte offset for the ASCII text Kafka writes.
    """
    parsed = _parse(
        text,
        bounds=(None, INT32_RANGE, _INT64),
        version=version,
        location=location,
        file=file,
        partition=None,
    )
    entries = tuple(
        CheckpointEntry(parts[0], int(parts[1]), int(parts[2]), number, pos)
        for parts, number, pos in parsed.rows
    )
    return OffsetCheckpoint(parsed.version, parsed.expected_count, entries, tuple(parsed.findings))


def parse_leader_epoch_checkpoint(
    text: str,
    *,
    version: KafkaVersion,
    location: str,
    file: str | None = None,
    partition: str | None = None,
) -> LeaderEpochCheckpoint:
    """Parse a partition's ``leader-epoch-checkpoint`` (``epoch startOffset`` lines; 0.11.0.0
    ``server/checkpoints/LeaderEpochCheckpointFile.scala``, 2.3.0 same,
    3.9.0-rc3 ``storage/.../checkpoint/LeaderEpochCheckpointFile.java``), with the same readers
    and messages as :func:`parse_offset_checkpoint`."""
    parsed = _parse(
        text,
        bounds=(INT32_RANGE, _INT64),
        version=version,
        location=location,
        file=file,
        partition=partition,
    )
    entries = tuple(
        EpochEntry(int(parts[0]), int(parts[1]), number, pos) for parts, number, pos in parsed.rows
    )
    return LeaderEpochCheckpoint(
        parsed.version, parsed.expected_count, entries, tuple(parsed.findings)
    )
