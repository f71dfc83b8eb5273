"""Control records of v2 control batches (transaction markers).

A control batch (attribute bit 5) holds one control record. Its key is
``version:int16 type:int16`` (3.8.0 ``clients/.../record/ControlRecordType.java``: 0 ABORT,
1 COMMIT, 2 LEADER_CHANGE, 3 SNAPSHOT_HEADER, 4 SNAPSHOT_FOOTER, 5 KRAFT_VERSION, 6 KRAFT_VOTERS;
higher key versions are read as version 0). An ABORT/COMMIT value is
``version:int16 coordinator_epoch:int32`` (``EndTransactionMarker.java``).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from offsets_auditor.errors import ControlKeyError, CorruptError, TruncatedError

CONTROL_KEY = struct.Struct(">hh")  # version, type
END_TXN_MARKER = struct.Struct(">hi")  # version, coordinator_epoch

CONTROL_TYPES = {
    0: "abort",
    1: "commit",
    2: "leader_change",
    3: "snapshot_header",
    4: "snapshot_footer",
    5: "kraft_version",
    6: "kraft_voters",
}


@dataclass(frozen=True, slots=True)
class ControlRecord:
    """``type`` is ``abort``, ``commit``, another KRaft type name, or ``unknown``.
    ``coordinator_epoch`` is set for transaction markers."""

    type: str
    type_id: int
    coordinator_epoch: int | None = None


def control_key_problem(key: bytes | None) -> str | None:
    """Kafka's exception message for a control record key ``ControlRecordType.parseTypeId``
    refuses (A:0.11.0.0 .. A:3.8.0 ``ControlRecordType.java``), or None."""
    if key is None:
        return "a null control record key (ControlRecordType.parse throws NullPointerException)"
    if len(key) < CONTROL_KEY.size:
        return (
            "Invalid value size found for end control record key. Must have at least"
            f" {CONTROL_KEY.size} bytes, but found only {len(key)}"
        )
    version = CONTROL_KEY.unpack_from(key)[0]
    if version < 0:
        return f"Invalid version found for control record: {version}. May indicate data corruption"
    return None


def decode_control(key: bytes | None, value: bytes | None) -> ControlRecord:
    problem = control_key_problem(key)
    if problem is not None:
        raise ControlKeyError(problem, field="control.key", position=None)
    assert key is not None
    _, type_id = CONTROL_KEY.unpack_from(key)
    kind = CONTROL_TYPES.get(type_id, "unknown")
    epoch = None
    if kind in ("abort", "commit"):
        if value is None or len(value) < END_TXN_MARKER.size:
            raise TruncatedError(
                "end transaction marker shorter than 6 bytes", field="control.value"
            )
        marker_version, epoch = END_TXN_MARKER.unpack_from(value)
        if marker_version < 0:
            raise CorruptError(
                f"Invalid version found for end transaction marker: {marker_version}",
                field="control.value.version",
            )
    return ControlRecord(kind, type_id, epoch)
