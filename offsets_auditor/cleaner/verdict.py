"""Cleaner verdicts: the outcome for a partition, as small pure rules.

Each rule has a number; tests/cleaner/test_cleaner_rules.py holds the table of cases proving them
(in the manner of Burrow's evaluator tests). A reason states only what the emulation showed:
its numbers come from the passes (``PassResult``) and selections (``Selection``) in
:class:`Facts`, and tests check every fixture's reasons against those numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from offsets_auditor.versions import KafkaVersion


class Outcome(StrEnum):
    THREAD_DEATH = "thread-death"
    #: the dirty section needs more than one pass of the offset map (whether or not every
    #: pass happens before the dirty ratio falls below the threshold)
    MULTI_PASS = "multi-pass"
    SINGLE_PASS = "single-pass"
    NOT_ELIGIBLE = "not-eligible"
    NOTHING_TO_CLEAN = "nothing-to-clean"
    BLOCKED = "blocked"


@dataclass(frozen=True, slots=True)
class Facts:
    """What the emulation found for one partition, as plain values.

    Offsets: ``dirty_start``/``dirty_end`` bound the dirty section the first pass maps
    (``[first dirty offset, base of the segment holding the first uncleanable offset)``);
    ``cleaned_to`` is where the last pass ended (the checkpoint it writes; ``None`` with no
    pass); ``map_filled_at`` the end offsets of the passes whose offset map filled up.
    ``remaining_records`` are the records in ``[cleaned_to, dirty_end)`` after the passes
    (exact unless ``remaining_exact`` is False, then an upper bound). ``ratio_after`` is the
    dirty ratio the cleaner sees after the last pass. ``needed_entries``/``capacity`` are the
    map entries one pass over the dirty section needs and one thread's map holds;
    ``fix_buffer`` the ``log.cleaner.dedupe.buffer.size`` that holds them (``None`` when the
    map is big enough, or no buffer can be: 2 GiB per thread)."""

    cleaner_enabled: bool
    failure_message: str | None
    failure_kills_thread: bool
    killed_elsewhere: str | None  # partition whose failure ends every cleaner thread first
    passes: int
    eligible: bool
    cleanable_bytes: int
    ratio: float
    min_ratio: float
    blocked_by: (
        str | None
    )  # what set the first uncleanable offset: active segment, open transaction, ...
    passes_before_blocked: int = 0  # passes that happen before every thread has died elsewhere
    clean_bytes: int = 0
    dirty_start: int = 0
    dirty_end: int = 0
    first_uncleanable: int = 0
    cleaned_to: int | None = None
    map_filled_at: tuple[int, ...] = ()
    map_entries: int = 0
    capacity: int = 0
    remaining_records: int = 0
    remaining_exact: bool = True
    ratio_after: float | None = None
    eligible_after: bool = False
    needed_entries: int = 0
    fix_buffer: int | None = None
    #: how long the transaction holding the last stable offset back has been open (None: no
    #: open transaction, or its first batch has no timestamp), and the broker's limit
    transaction_open_ms: int | None = None
    transaction_max_timeout_ms: int = 900_000

    @property
    def transaction_hanging(self) -> bool:
        """An open transaction older than ``transaction.max.timeout.ms`` (or of unknown age):
        the coordinator would have aborted it by then, so it hangs."""
        return self.transaction_open_ms is None or (
            self.transaction_open_ms > self.transaction_max_timeout_ms
        )


def outcome(f: Facts) -> tuple[Outcome, str]:
    """The outcome and the reason, first matching rule wins."""
    # 1. With log.cleaner.enable=false no cleaner thread exists: nothing is ever compacted.
    if not f.cleaner_enabled:
        return Outcome.BLOCKED, "log.cleaner.enable=false: the broker runs no cleaner thread"
    # 2. An exception that ends the thread (<= 2.0) is thread death, whatever else holds.
    if f.failure_message is not None and f.failure_kills_thread:
        return Outcome.THREAD_DEATH, f.failure_message
    # 3. From 2.1 the same exception marks the partition uncleanable: it is skipped until the
    #    broker restarts, so it is blocked.
    if f.failure_message is not None:
        return Outcome.BLOCKED, f"marked uncleanable after: {f.failure_message}"
    # 4. <= 2.0: a partition that kills a thread stays eligible forever, so every thread
    #    eventually picks it and dies; after that no partition on the broker compacts, even one
    #    that would clean fine.
    if f.killed_elsewhere is not None and f.passes > f.passes_before_blocked:
        would = "one pass" if f.passes == 1 else f"{f.passes} passes"
        got = (
            f"only {f.passes_before_blocked} happen" if f.passes_before_blocked else "none happens"
        )
        return (
            Outcome.BLOCKED,
            f"{would} would clean {_span(f.dirty_start, f.cleaned_to)} but {got}: every cleaner"
            f" thread dies on {f.killed_elsewhere} and no partition on this broker compacts"
            " after that",
        )
    pinned = _pinned(f)
    # 5. The offset map filled: the dirty section does not fit one pass. Say where it filled,
    #    whether the passes that follow reach the end of the dirty section or the dirty ratio
    #    drops to the threshold first (then the rest waits), and the buffer that makes it one
    #    pass.
    if f.map_filled_at:
        return Outcome.MULTI_PASS, _map_filled(f) + _fix(f) + pinned
    # 6. Several passes without the map filling (the dirty section grew between passes).
    if f.passes > 1:
        return (
            Outcome.MULTI_PASS,
            f"the dirty section needs {f.passes} passes of the offset map{pinned}",
        )
    # 7. One pass, the map never full: the dirty section fits.
    if f.passes == 1:
        return (
            Outcome.SINGLE_PASS,
            f"the dirty section {_span(f.dirty_start, f.cleaned_to)} fits the offset map in one"
            f" pass ({f.map_entries:,} of {f.capacity:,} entries){pinned}",
        )
    # 8. A hanging transaction (open longer than transaction.max.timeout.ms: the coordinator
    #    would have aborted it) holds the last stable offset back: nothing past it is cleaned
    #    until someone aborts it. A younger one is a transaction under way (rule 9).
    if f.blocked_by == "open transaction" and f.cleanable_bytes == 0 and f.transaction_hanging:
        age = "" if f.transaction_open_ms is None else f" for {f.transaction_open_ms // 1000:,} s"
        return (
            Outcome.BLOCKED,
            f"a transaction open since offset {f.first_uncleanable:,}{age}, longer than"
            f" transaction.max.timeout.ms ({f.transaction_max_timeout_ms:,} ms), holds the last"
            " stable offset back: nothing from it on is cleaned until it is aborted",
        )
    # 9. Nothing between the checkpoint and the first uncleanable offset.
    if f.cleanable_bytes == 0:
        where = f.blocked_by or "active segment"
        if f.blocked_by == "open transaction":
            where = (
                f"transaction under way at offset {f.first_uncleanable:,} (open"
                f" {(f.transaction_open_ms or 0) // 1000:,} s; it ends within"
                f" transaction.max.timeout.ms, {f.transaction_max_timeout_ms:,} ms)"
            )
        return (Outcome.NOTHING_TO_CLEAN, f"no cleanable data before the {where}")
    # 10. Dirty data exists but the ratio is at or below min.cleanable.dirty.ratio (strict >).
    total = f.clean_bytes + f.cleanable_bytes
    return (
        Outcome.NOT_ELIGIBLE,
        f"dirty ratio {f.ratio:.4f} ({f.cleanable_bytes:,} of {total:,} bytes) is not above"
        f" min.cleanable.dirty.ratio {f.min_ratio}: the cleaner does not pick it",
    )


def _span(start: int, end: int | None) -> str:
    return f"[{start:,}, {end:,})" if end is not None else f"from offset {start:,}"


def _pinned(f: Facts) -> str:
    if f.blocked_by != "open transaction":
        return ""
    return (
        f"; then it stops at an open transaction at offset {f.first_uncleanable:,} (the last"
        " stable offset) until that transaction ends"
    )


def _map_filled(f: Facts) -> str:
    at = ", ".join(f"{x:,}" for x in f.map_filled_at)
    passes = "1 pass" if f.passes == 1 else f"{f.passes} passes"
    head = (
        f"the dirty section [{f.dirty_start:,}, {f.dirty_end:,}) does not fit the offset map in"
        f" one pass: the map ({f.capacity:,} entries) filled at offset"
        f"{'s' if len(f.map_filled_at) > 1 else ''}"
        f" {at}"
    )
    cleaned_to = f.cleaned_to if f.cleaned_to is not None else f.dirty_start
    if cleaned_to >= f.dirty_end or not f.remaining_records:
        return f"{head}; {passes} clean it"
    records = f"{f.remaining_records:,}" if f.remaining_exact else f"up to {f.remaining_records:,}"
    if f.eligible_after:
        return (
            f"{head}; the emulation stopped after {passes} at offset {cleaned_to:,}, with"
            f" {records} records left in [{cleaned_to:,}, {f.dirty_end:,})"
        )
    ratio = "" if f.ratio_after is None else f" is {f.ratio_after:.4f},"
    return (
        f"{head}; after {passes} the dirty ratio{ratio} not above min.cleanable.dirty.ratio"
        f" {f.min_ratio}, so {records} records in [{cleaned_to:,}, {f.dirty_end:,}) stay"
        f" uncompacted until new writes raise the ratio above {f.min_ratio} again"
    )


def _fix(f: Facts) -> str:
    if f.needed_entries <= f.capacity:
        return ""
    if f.fix_buffer is None:
        return (
            f"; one pass would need {f.needed_entries:,} map entries, more than any dedupe"
            " buffer gives a thread (its map is capped at 2 GiB)"
        )
    return (
        f"; log.cleaner.dedupe.buffer.size={f.fix_buffer} holds the {f.needed_entries:,} map"
        " entries one pass needs"
    )


def severity_of(o: Outcome) -> str:
    """How bad an outcome is for an operator."""
    return {
        Outcome.THREAD_DEATH: "critical",
        Outcome.BLOCKED: "critical",
        Outcome.MULTI_PASS: "warning",
        Outcome.SINGLE_PASS: "info",
        Outcome.NOT_ELIGIBLE: "info",
        Outcome.NOTHING_TO_CLEAN: "info",
    }[o]


@dataclass(frozen=True, slots=True)
class VersionVerdict:
    """The verdict for one stretch of Kafka releases, ``first`` to ``last`` (inclusive), when
    the broker's version is known only as a range: ``passes`` that happen, where they end,
    and Kafka's message when the cleaner fails."""

    first: KafkaVersion
    last: KafkaVersion
    outcome: Outcome
    reason: str
    passes: int
    pass_end_offsets: tuple[int, ...]
    message: str | None

    @property
    def versions(self) -> str:
        return str(self.first) if self.first == self.last else f"{self.first} to {self.last}"

    def same_verdict(self, other: VersionVerdict) -> bool:
        """Whether both say the same thing happens (outcome, passes, Kafka's message)."""
        return (self.outcome, self.passes, self.message) == (
            other.outcome,
            other.passes,
            other.message,
        )

    def to_json(self) -> dict[str, object]:
        return {
            "kafka_versions": [str(self.first), str(self.last)],
            "outcome": self.outcome.value,
            "reason": self.reason,
            "passes": self.passes,
            "pass_end_offsets": list(self.pass_end_offsets),
            "message": self.message,
        }
