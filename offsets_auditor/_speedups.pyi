"""Type stub of the optional C extension ``offsets_auditor/_speedups.c``."""

from typing import Any

from typing_extensions import Buffer

def scan_offset_commits(
    window: Buffer, start: int, end: int, file_position: int, /
) -> tuple[int, dict[str, Any]]:
    """Consume the whole plain offset-commit entries of ``window[start:end]`` (see
    ``offsets_auditor.records.log_file.FastLane``): the window offset of the first entry not
    taken, and the ``SegmentTotals`` fields for what was taken."""

def render_offset_commits(
    window: Buffer, start: int, end: int, file_position: int, /
) -> tuple[int, str]:
    """Consume the entries of ``window[start:end]`` that ``scan_offset_commits`` would take and
    whose group, topic and metadata are printable ASCII without ``'`` or ``\\``: the window
    offset of the first entry not taken, and the ``dump`` lines of what was taken, each ending
    with a newline (``""`` when nothing was taken)."""
