"""The cleaner's view of transactions while it walks a dirty section.

Kafka's ``CleanedTransactionMetadata`` (2.3.0 ``core/src/main/scala/kafka/log/LogCleaner.scala``):
batches of aborted transactions are discarded; an ABORT marker is kept while batches of its
transaction remain; a COMMIT marker can go once no batch of its transaction was seen in this
pass. Before 0.11 there are no transactions and everything here is a no-op.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from offsets_auditor.cleaner.partition_scan import AbortedTxn


@dataclass
class _AbortedTransactionMetadata:
    txn: AbortedTxn
    last_observed_batch_offset: int | None = None


@dataclass
class CleanedTransactionMetadata:
    enabled: bool = True
    _ongoing_committed: set[int] = field(default_factory=set)
    _ongoing_aborted: dict[int, _AbortedTransactionMetadata] = field(default_factory=dict)
    _aborted: list[tuple[int, int, AbortedTxn]] = field(default_factory=list)
    _seen: set[AbortedTxn] = field(default_factory=set)

    def add_aborted(self, txns: list[AbortedTxn]) -> None:
        for txn in txns:
            if txn not in self._seen:
                self._seen.add(txn)
                heapq.heappush(self._aborted, (txn.first_offset, id(txn), txn))

    def read_up_to(self, offset: int) -> None:
        """Batches were read up to last offset ``offset`` (``consumeAbortedTxnsUpTo``, which
        Kafka runs for every batch it reads). Callers that skip the batches that touch no
        transaction give the largest last offset read so far (:func:`reaches`): the state at
        the next transactional or control batch is then the broker's, even when offsets go
        backwards."""
        if self.enabled:
            self._consume_up_to(offset)

    def _consume_up_to(self, offset: int) -> None:
        """Aborted transactions starting at or before ``offset`` become ongoing."""
        while self._aborted and self._aborted[0][0] <= offset:
            _, _, txn = heapq.heappop(self._aborted)
            self._ongoing_aborted.setdefault(txn.producer_id, _AbortedTransactionMetadata(txn))

    def on_control_batch(
        self, last_offset: int, producer_id: int, control_type: str | None
    ) -> bool:
        """``onControlBatchRead``: True if the control batch may be discarded."""
        if not self.enabled:
            return False
        self._consume_up_to(last_offset)
        if control_type is None:
            return True  # an empty control batch was already cleaned
        pid = producer_id
        if control_type == "abort":
            meta = self._ongoing_aborted.pop(pid, None)
            return not (meta is not None and meta.last_observed_batch_offset is not None)
        if control_type == "commit":
            if pid in self._ongoing_committed:
                self._ongoing_committed.discard(pid)
                return False
            return True
        return False

    def on_batch(self, last_offset: int, producer_id: int, transactional: bool) -> bool:
        """``onBatchRead``: True if the batch belongs to an aborted transaction. (A
        non-transactional batch only moves the read position: callers may skip those.)"""
        if not self.enabled:
            return False
        self._consume_up_to(last_offset)
        if transactional:
            meta = self._ongoing_aborted.get(producer_id)
            if meta is not None:
                meta.last_observed_batch_offset = last_offset
                return True
            self._ongoing_committed.add(producer_id)
        return False


def reaches(last_offsets: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """For batches read in order, the largest last offset read up to each."""
    return np.maximum.accumulate(last_offsets) if len(last_offsets) else last_offsets
