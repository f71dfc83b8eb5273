"""Cleaner verdicts: the outcome for a partition, as small pure rules.

Each rule has a number; tests/test_cleaner_rules.py holds the table of cases proving them
(in the manner of Burrow's evaluator tests).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Outcome(StrEnum):
    THREAD_DEATH = "thread-death"
    MULTI_PASS = "multi-pass"
    SINGLE_PASS = "single-pass"
    NOT_ELIGIBLE = "not-eligible"
    NOTHING_TO_CLEAN = "nothing-to-clean"
    BLOCKED = "blocked"


@dataclass(frozen=True, slots=True)
class Facts:
    """What the emulation found for one partition, as plain values."""

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
            f"it needs {would} but {got}: every cleaner thread dies on {f.killed_elsewhere}"
            " and no partition on this broker compacts after that",
        )
    # 5./6. The cleaner will clean it, in one pass or several; an open transaction still stops
    #    it at the last stable offset, which the reason says.
    pinned = (
        "; then it stops at an open transaction (the last stable offset) until that"
        " transaction ends"
        if f.blocked_by == "open transaction"
        else ""
    )
    if f.passes > 1:
        return (
            Outcome.MULTI_PASS,
            f"the dirty section needs {f.passes} passes of the offset map{pinned}",
        )
    if f.passes == 1:
        return Outcome.SINGLE_PASS, f"the dirty section fits the offset map in one pass{pinned}"
    # 7. An open (hanging) transaction holds the last stable offset back: nothing past it can
    #    be cleaned until the transaction ends.
    if f.blocked_by == "open transaction" and f.cleanable_bytes == 0:
        return (
            Outcome.BLOCKED,
            "an open transaction holds the last stable offset back; the cleaner never passes it",
        )
    # 8. Nothing between the checkpoint and the first uncleanable offset.
    if f.cleanable_bytes == 0:
        return (
            Outcome.NOTHING_TO_CLEAN,
            f"no cleanable data before the {f.blocked_by or 'active segment'}",
        )
    # 9. Dirty data exists but the ratio is at or below min.cleanable.dirty.ratio (strict >).
    return (
        Outcome.NOT_ELIGIBLE,
        f"dirty ratio {f.ratio:.4f} is not above min.cleanable.dirty.ratio {f.min_ratio}",
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
