"""What a verdict is made of, from one emulation, comparable across runs and processes."""

from __future__ import annotations

from offsets_auditor.audit.partition import Emulated


def verdict_facts(e: Emulated | None) -> str:
    """The emulation's first dirty offset, selections, passes, failure, needed entries and
    size after cleaning (``repr``: a failure's damage holds arrays, which ``==`` cannot
    compare)."""
    if e is None:
        return "None"
    facts = (e.first_dirty, e.initial, e.passes, e.selections, e.failure, e.needed_entries)
    return repr((*facts, e.size_after_cleaning))
