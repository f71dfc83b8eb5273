"""Parse the text output of Kafka's own ``kafka.tools.DumpLogSegments --offsets-decoder``.

Kafka's tool is the reference our decoder must agree with. Line formats by version are in
docs/kafka-internals.md §6.2–6.3; this parser reads the ones our real fixtures hold:
0.9.0.1-0.10.0 (one line per message) and 2.2-2.7 (``baseOffset: ...`` batch lines followed by
``| offset: ...`` record lines).
"""

from __future__ import annotations

import gzip
import re
from dataclasses import dataclass
from pathlib import Path

_FIELD = re.compile(r"(\w+): (\S+)")


@dataclass(frozen=True)
class DumpedRecord:
    offset: int
    position: int | None
    fields: dict[str, str]
    key: str | None
    payload: str | None


def read_dump(path: Path) -> list[DumpedRecord]:
    opener = gzip.open if path.suffix == ".gz" else open
    records = []
    position: int | None = None
    with opener(path, "rt", encoding="utf-8", errors="replace") as lines:
        for line in lines:
            line = line.rstrip("\n")
            if line.startswith("baseOffset:") or (line.startswith("offset:") and "| " in line):
                position = int(_FIELD_VALUE(line, "position"))
                continue
            record_line = line[2:] if line.startswith("| ") else line
            if not record_line.startswith("offset:"):
                continue
            head, key, payload = _split_key_payload(record_line)
            fields = dict(_FIELD.findall(head))
            own_position = fields.get("position")
            records.append(
                DumpedRecord(
                    offset=int(fields["offset"]),
                    position=int(own_position) if own_position is not None else position,
                    fields=fields,
                    key=key,
                    payload=payload,
                )
            )
    return records


def _FIELD_VALUE(line: str, name: str) -> str:
    match = re.search(rf"\b{name}: (\S+)", line)
    assert match, f"no {name} in {line!r}"
    return match.group(1)


def _split_key_payload(line: str) -> tuple[str, str | None, str | None]:
    key = payload = None
    head = line
    if " payload: " in head:
        head, payload = head.split(" payload: ", 1)
    if " key: " in head:
        head, key = head.split(" key: ", 1)
    return head, key, payload
