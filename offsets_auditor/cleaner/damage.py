"""Damaged bytes the cleaner reads: which ones stop it, and the exception it throws there.

The cleaner reads every segment it maps or rewrites from start to end, entry by entry, through
a read buffer that it grows when an entry does not fit (``Cleaner.buildOffsetMapForSegment``
and ``cleanInto``). It checks no CRC, and it does not parse keys or values (it hashes the key
bytes), so a ``ChecksumError`` and a record whose key or value is not an offsets schema do not
stop it. Every other error of the segment walk does:

- a size field below 14 (a zero-filled tail after a power loss, overwritten bytes): the
  iterator throws as soon as it reaches it;
- an entry that runs past the end of the file (a partial write) or fewer bytes than an entry
  header: no whole entry is ever read there, the buffer grows to its maximum, then the cleaner
  gives up;
- an entry that cannot be read (bad magic, records that do not parse, a payload that does not
  decompress): Kafka's readers throw there too, with their own message;
- a control batch whose first record's key ``ControlRecordType.parse`` refuses (0.11+: read
  for every control batch by ``onControlBatchRead``).

The exception's fate (the thread dies up to 2.0.x; from 2.1.0 the partition is marked
uncleanable) is ``CleanerBehaviour.exception_kills_thread``. Sources: A:0.9.0.1, A:1.1.0,
A:2.0.0, A:2.3.0 ``core/src/main/scala/kafka/log/LogCleaner.scala`` (``growBuffers``,
``growBuffersOrFail``), ``kafka/message/ByteBufferMessageSet.scala`` (0.9.0.1
``makeNextOuter``), ``clients/.../record/ByteBufferLogInputStream.java`` (``nextBatchSize``),
``MemoryRecords.java`` (``firstBatchSize``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from offsets_auditor.cleaner.behaviour import CleanerBehaviour
from offsets_auditor.cleaner.config import CleanerConfig
from offsets_auditor.errors import (
    ChecksumError,
    ControlKeyError,
    DecodeError,
    OverLimitError,
    UnreadableFileError,
)

#: ``LegacyRecord.RECORD_OVERHEAD_V0``: the smallest size field any reader accepts.
MIN_RECORD_SIZE: Final = 14
#: ``Records.LOG_OVERHEAD``: offset and size.
LOG_OVERHEAD: Final = 12
#: ``Records.HEADER_SIZE_UP_TO_MAGIC``: what ``firstBatchSize`` needs to say anything.
HEADER_SIZE_UP_TO_MAGIC: Final = 17


@dataclass(frozen=True, slots=True)
class CleanerDamage:
    """The first error of a segment that the cleaner's reads fail on, and how many whole
    entries of the segment come before it (the cleaner reaches it after reading those)."""

    error: DecodeError
    entries_before: int


def stops_the_cleaner(error: DecodeError) -> bool:
    """Whether the cleaner's reads fail where the segment walk reported ``error`` (not on a
    CRC it never checks, nor on an entry the auditor skipped or a file the auditor could not
    open: the broker reads those)."""
    return not isinstance(error, ChecksumError | OverLimitError | UnreadableFileError)


@dataclass(frozen=True, slots=True)
class ReadBuffers:
    """The sizes ``growBuffers`` works with: the start (``ioBufferSize / threads / 2``), the
    topic's ``maxLogMessageSize`` and the broker's ``message.max.bytes``."""

    start: int
    log_max_message_bytes: int
    max_message_bytes: int

    def largest(self, behaviour: CleanerBehaviour) -> int:
        """``maxBufferSize``: from 0.10.1 the larger of the two limits; before, the broker's."""
        if behaviour.buffers_grow_to_topic_max:
            return max(self.log_max_message_bytes, self.max_message_bytes)
        return self.max_message_bytes

    def capacity_when_checked(self, behaviour: CleanerBehaviour) -> int:
        """The read buffer's capacity when ``growBuffersOrFail`` stops growing it: doubled from
        the start (capped at the largest size) until it reaches ``maxLogMessageSize``."""
        capacity, largest = self.start, self.largest(behaviour)
        while capacity < self.log_max_message_bytes:
            capacity = min(capacity * 2, largest)
        return capacity


def read_buffers(config: CleanerConfig) -> ReadBuffers:
    """The read buffers of one cleaner thread of ``config`` (``LogCleaner``: ``ioBufferSize =
    config.ioBufferSize / config.numThreads / 2``, ``maxIoBufferSize = config.maxMessageSize``)."""
    return ReadBuffers(
        start=config.io_buffer_size // config.threads // 2,
        log_max_message_bytes=config.log_max_message_bytes,
        max_message_bytes=config.max_message_bytes,
    )


#: Kafka 0.9's ``kafka-server-start.sh`` heap (``-Xmx1G``): ``LogSegment.nextOffset`` allocates
#: the size an entry declares, and a larger size than the heap can hold throws.
DEFAULT_HEAP_BYTES: Final = 1 << 30


def exception_at(
    damage: CleanerDamage,
    segment_path: str,
    buffers: ReadBuffers,
    behaviour: CleanerBehaviour,
    *,
    next_offset_search: int | None = None,
) -> str:
    """The message of the exception the cleaner of ``behaviour`` throws when it reaches
    ``damage`` in the segment at ``segment_path`` (the broker prints its own absolute path).

    ``next_offset_search``: for the 0.9 map (``MapEra.SEGMENT_SPAN``), which first asks each
    dirty segment its ``nextOffset()``, the file position that search starts at (the offset
    index's last entry), if known: ``FileMessageSet.searchFor`` walks the entry headers from
    there (a size below 14 throws "Invalid message size"), then its iterator reads each entry
    whole, allocating the size it declares (too large for the heap: ``OutOfMemoryError``).
    Real 0.9.0.1 brokers threw both (tests/fixtures/kafka-0.9.0.1/corrupt-segments)."""
    error = damage.error
    framing = error.framing
    position = error.position if error.position is not None else 0
    if isinstance(error, ControlKeyError):
        return error.message
    if framing is None:
        return f"an exception reading the entry at byte {position}: {error.message}"
    size = None if framing.declared_size is None else framing.declared_size - LOG_OVERHEAD
    if next_offset_search is not None and size is not None:
        if size < MIN_RECORD_SIZE and next_offset_search >= position:
            return f"Invalid message size: {size}"
        if size >= MIN_RECORD_SIZE and size > DEFAULT_HEAP_BYTES:
            # one exception, the one the broker throws: with kafka-server-start.sh's heap the
            # allocation fails before the buffers' own check could ("larger than maximum
            # allowable size", thrown only by a heap of more than the declared size)
            return (
                "java.lang.OutOfMemoryError: Java heap space (nextOffset allocates the"
                f" {size:,} bytes the entry declares, more than the broker's default -Xmx1G)"
            )
    if size is not None and size < MIN_RECORD_SIZE:
        if not behaviour.reads_record_batches:
            return f"Message found with corrupt size ({size}) in shallow iterator"
        if not behaviour.names_record_size:
            return "Record size is less than the minimum record overhead (14)"
        return f"Record size {size} is less than the minimum record overhead (14)"
    # a partial entry, or too few bytes for one: no whole entry is read there
    if not behaviour.grows_buffers_or_fails:
        return (
            "This log contains a message larger than maximum allowable size of"
            f" {buffers.largest(behaviour)}."
        )
    where = f"log segment {segment_path} at position {position}"
    if framing.declared_size is None or framing.bytes_left < HEADER_SIZE_UP_TO_MAGIC:
        return f"Could not determine next batch size for {where}"
    capacity = buffers.capacity_when_checked(behaviour)
    if framing.declared_size <= capacity:
        return (
            f"Batch size {framing.declared_size} < buffer size {capacity}, but not processed"
            f" for {where}"
        )
    return (
        f"Log segment may be corrupt, batch size {framing.declared_size} >"
        f" {framing.bytes_left} bytes left in segment for {where}"
    )
