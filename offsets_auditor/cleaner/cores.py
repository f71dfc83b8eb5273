"""Where the independent parts of one partition's emulation run: here, one after the other
(:data:`ONE_CORE`), or on other cores (``audit.parallel.ForkedCores``).

Two parts of an emulation need nothing of each other's results:

1. the map size the partition needs (``requirements.needed_entries``) and the passes: the
   first reads the partition as read, the second the survivor flags it writes;
2. within a pass, the retention filter of one segment and of another, when no batch of the
   partition is transactional or a control batch: then the transaction bookkeeping, the only
   state one segment's filter hands to the next, stays empty (``passes.PartitionCleaner``).

Work run elsewhere writes the survivor flags where it is, so (2) runs elsewhere only when
those are shared mappings (``arrays.FileArrays``): a forked process's writes to them are the
parent's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import accumulate, pairwise
from typing import Protocol, TypeVar

_In = TypeVar("_In")
_Out = TypeVar("_Out")


class Cores(Protocol):
    """``count`` cores to run on: ``each(function, items)`` is ``function`` of every item, in
    the items' order, ``aside(function)`` starts ``function`` and gives what waits for its
    result."""

    @property
    def count(self) -> int: ...

    def each(self, function: Callable[[_In], _Out], items: Sequence[_In], /) -> list[_Out]: ...

    def aside(self, function: Callable[[], _Out], /) -> Callable[[], _Out]: ...


class _OneCore:
    """Everything here, one after the other."""

    @property
    def count(self) -> int:
        return 1

    def each(self, function: Callable[[_In], _Out], items: Sequence[_In], /) -> list[_Out]:
        return [function(item) for item in items]

    def aside(self, function: Callable[[], _Out], /) -> Callable[[], _Out]:
        result = function()
        return lambda: result


ONE_CORE: Cores = _OneCore()


def balanced_runs(weights: Sequence[int], parts: int) -> list[range]:
    """Positions ``0..len(weights)`` cut into at most ``parts`` consecutive, non-empty runs of
    about equal total weight: each cut where the weight before it is nearest its share."""
    before = [0, *accumulate(weights)]  # before[b]: the weight of positions < b
    count = len(weights)
    cuts = [0]
    for k in range(1, parts):
        if cuts[-1] + 1 >= count:
            break
        share = before[-1] * k / parts
        cuts.append(min(range(cuts[-1] + 1, count), key=lambda b: abs(before[b] - share)))
    return [range(a, b) for a, b in pairwise([*cuts, count]) if a < b]
