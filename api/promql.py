"""The subset of PromQL the alert rules are written in, evaluated here exactly as Prometheus
evaluates it, so that one definition (``api.alert_rules``) gives both the Prometheus rule (its
``expr`` text) and the service's own ``GET /alerts`` over the very samples ``/metrics`` exposes.

What there is (each node renders to PromQL with :func:`promql` and evaluates with
:func:`evaluate`):

- :class:`Sel` ``name{k="v",...}``: an instant vector selector, equality matchers only;
- :class:`Age` ``time() - v``;
- :class:`Scaled` ``k * v``;
- :class:`Cmp` ``a > b``: PromQL's filtering comparison (no ``bool``), against a number or a
  vector (one-to-one on identical label sets, as Prometheus matches without ``on``); the
  result keeps the left side's values;
- :class:`And` ``a and b``: the samples of ``a`` whose label set ``b`` has;
- :class:`SumWithout` ``sum without (l, ...) (v)``;
- :class:`Offset` ``v offset 6h`` and :class:`Changes` ``changes(v[6h])``: history.

Time: a :class:`Timeline` is what the service exposed over time, one :class:`Snapshot` of
samples per change (a run published, a scan failing), each valid from its ``at`` until the next.
A scrape at time ``t`` sees the snapshot valid at ``t``; the scrape adds the same ``job`` and
``instance`` labels to every series, which changes no matching here, so they are left out.

:func:`active_since` answers "since when has this held, without a break": what Prometheus calls
the alert's ``activeAt`` (``for`` counts from there), so a condition that continues across runs
keeps its start.
"""

from __future__ import annotations

import bisect
import itertools
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

#: A series' labels, sorted: (name, value) pairs.
Labels = tuple[tuple[str, str], ...]
#: An instant vector: labels -> value.
Vector = dict[Labels, float]


def labels_of(pairs: Mapping[str, str]) -> Labels:
    return tuple(sorted(pairs.items()))


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What the service exposed from ``at`` (Unix seconds) on: metric name -> vector."""

    at: float
    samples: Mapping[str, Vector]


@dataclass(frozen=True, slots=True)
class Timeline:
    """Snapshots in time order (the last is what is exposed now)."""

    snapshots: tuple[Snapshot, ...]
    _starts: tuple[float, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_starts", tuple(s.at for s in self.snapshots))

    def at(self, t: float) -> Snapshot | None:
        """The snapshot a scrape at ``t`` sees (None before the first)."""
        i = bisect.bisect_right(self._starts, t) - 1
        return self.snapshots[i] if i >= 0 else None

    def between(self, start: float, end: float) -> list[Snapshot]:
        """The snapshots a range ``(start, end]`` sees, the one valid at ``start`` first."""
        first = max(bisect.bisect_right(self._starts, start) - 1, 0)
        last = bisect.bisect_right(self._starts, end)
        return list(self.snapshots[first:last])


class Expr:
    """A PromQL expression node."""

    def promql(self) -> str:
        raise NotImplementedError

    def vector(self, timeline: Timeline, t: float) -> Vector:
        raise NotImplementedError

    #: history windows inside (``offset``, ``[range]``), seconds: where truth can change
    def windows(self) -> tuple[float, ...]:
        return ()

    def __gt__(self, other: object) -> Cmp:
        return Cmp(self, ">", _operand(other))

    def __lt__(self, other: object) -> Cmp:
        return Cmp(self, "<", _operand(other))

    def __ge__(self, other: object) -> Cmp:
        return Cmp(self, ">=", _operand(other))

    def eq(self, other: float | Expr) -> Cmp:
        return Cmp(self, "==", _operand(other))

    def __and__(self, other: Expr) -> And:
        return And(self, other)

    def unless_outcome(self, *outcomes: str) -> Expr:
        """Only the partitions whose cleaner verdict is none of ``outcomes``."""
        verdict = "offsets_auditor_partition_cleaner_verdict"
        expr: Expr = self
        for outcome in outcomes:
            expr = And(expr, sel(verdict, outcome=outcome).eq(0), ignoring=("outcome",))
        return expr


@dataclass(frozen=True, eq=False)
class Num(Expr):
    value: float

    def promql(self) -> str:
        return _number(self.value)

    def vector(self, timeline: Timeline, t: float) -> Vector:
        raise TypeError("a number is not a vector")


def _operand(other: object) -> Expr:
    if isinstance(other, Expr):
        return other
    if isinstance(other, int | float):
        return Num(float(other))
    raise TypeError(f"not an operand: {other!r}")


@dataclass(frozen=True, eq=False)
class Sel(Expr):
    name: str
    matchers: Labels = ()

    def promql(self) -> str:
        if not self.matchers:
            return self.name
        inner = ",".join(f'{k}="{_escape(v)}"' for k, v in self.matchers)
        return f"{self.name}{{{inner}}}"

    def vector(self, timeline: Timeline, t: float) -> Vector:
        snapshot = timeline.at(t)
        if snapshot is None:
            return {}
        found = snapshot.samples.get(self.name, {})
        if not self.matchers:
            return dict(found)
        return {
            labels: value
            for labels, value in found.items()
            if all((k, v) in labels for k, v in self.matchers)
        }


def sel(name: str, **matchers: str) -> Sel:
    return Sel(name, labels_of(matchers))


@dataclass(frozen=True, eq=False)
class Age(Expr):
    """``time() - v``: how long ago the timestamps of ``v`` were."""

    of: Expr

    def promql(self) -> str:
        return f"time() - {self.of.promql()}"

    def vector(self, timeline: Timeline, t: float) -> Vector:
        return {labels: t - value for labels, value in self.of.vector(timeline, t).items()}

    def windows(self) -> tuple[float, ...]:
        return self.of.windows()


@dataclass(frozen=True, eq=False)
class Scaled(Expr):
    factor: float
    of: Expr

    def promql(self) -> str:
        return f"{_number(self.factor)} * {self.of.promql()}"

    def vector(self, timeline: Timeline, t: float) -> Vector:
        return {labels: self.factor * v for labels, v in self.of.vector(timeline, t).items()}

    def windows(self) -> tuple[float, ...]:
        return self.of.windows()


_OPS: Final[dict[str, Callable[[float, float], bool]]] = {
    ">": operator.gt,
    "<": operator.lt,
    ">=": operator.ge,
    "<=": operator.le,
    "==": operator.eq,
    "!=": operator.ne,
}


@dataclass(frozen=True, eq=False)
class Cmp(Expr):
    left: Expr
    op: str
    right: Expr

    def promql(self) -> str:
        return f"{self.left.promql()} {self.op} {self.right.promql()}"

    def vector(self, timeline: Timeline, t: float) -> Vector:
        test = _OPS[self.op]
        left = self.left.vector(timeline, t)
        if isinstance(self.right, Num):
            bound = self.right.value
            return {labels: v for labels, v in left.items() if test(v, bound)}
        right = self.right.vector(timeline, t)
        return {
            labels: v for labels, v in left.items() if labels in right and test(v, right[labels])
        }

    def windows(self) -> tuple[float, ...]:
        return self.left.windows() + self.right.windows()


@dataclass(frozen=True, eq=False)
class And(Expr):
    """``left and right``; with ``ignoring``, ``left and ignoring(l, ...) right``: label sets
    compared less those labels."""

    left: Expr
    right: Expr
    ignoring: tuple[str, ...] = ()

    def promql(self) -> str:
        how = f" ignoring({', '.join(self.ignoring)})" if self.ignoring else ""
        return f"{self.left.promql()} and{how} {self.right.promql()}"

    def vector(self, timeline: Timeline, t: float) -> Vector:
        keep = {self._key(labels) for labels in self.right.vector(timeline, t)}
        return {
            labels: v
            for labels, v in self.left.vector(timeline, t).items()
            if self._key(labels) in keep
        }

    def _key(self, labels: Labels) -> Labels:
        return tuple((k, v) for k, v in labels if k not in self.ignoring)

    def windows(self) -> tuple[float, ...]:
        return self.left.windows() + self.right.windows()


@dataclass(frozen=True, eq=False)
class SumWithout(Expr):
    without: tuple[str, ...]
    of: Expr

    def promql(self) -> str:
        return f"sum without ({', '.join(self.without)}) ({self.of.promql()})"

    def vector(self, timeline: Timeline, t: float) -> Vector:
        out: Vector = {}
        for labels, value in self.of.vector(timeline, t).items():
            kept = tuple((k, v) for k, v in labels if k not in self.without)
            out[kept] = out.get(kept, 0.0) + value
        return out

    def windows(self) -> tuple[float, ...]:
        return self.of.windows()


@dataclass(frozen=True, eq=False)
class Offset(Expr):
    of: Sel
    seconds: float

    def promql(self) -> str:
        return f"{self.of.promql()} offset {duration(self.seconds)}"

    def vector(self, timeline: Timeline, t: float) -> Vector:
        return self.of.vector(timeline, t - self.seconds)

    def windows(self) -> tuple[float, ...]:
        return (self.seconds,)


@dataclass(frozen=True, eq=False)
class Changes(Expr):
    of: Sel
    seconds: float

    def promql(self) -> str:
        return f"changes({self.of.promql()}[{duration(self.seconds)}])"

    def vector(self, timeline: Timeline, t: float) -> Vector:
        """How often each series' value changed from one scrape to the next in the window. A
        series needs a sample in the window to be in the result (as in Prometheus)."""
        seen: dict[Labels, list[float]] = {}
        for snapshot in timeline.between(t - self.seconds, t):
            probe = Timeline((snapshot,))
            for labels, value in self.of.vector(probe, snapshot.at).items():
                seen.setdefault(labels, []).append(value)
        return {
            labels: float(sum(a != b for a, b in itertools.pairwise(values)))
            for labels, values in seen.items()
        }

    def windows(self) -> tuple[float, ...]:
        return (self.seconds,)


def promql(expr: Expr) -> str:
    return expr.promql()


def evaluate(expr: Expr, timeline: Timeline, t: float) -> Vector:
    """``expr`` as Prometheus evaluates it at ``t`` over what the service exposed."""
    return expr.vector(timeline, t)


#: How finely :func:`active_since` finds when a time-based condition (``time() - v > k``)
#: became true inside one snapshot: a millisecond.
RESOLUTION: Final = 0.001


def active_since(expr: Expr, timeline: Timeline, labels: Labels, now: float) -> float | None:
    """Since when ``expr`` has held for the series ``labels`` without a break up to ``now``
    (None when it does not hold now). Between two change points (a snapshot's start, or one
    shifted by a history window) only ``time()`` moves, and the rules use it only as
    ``time() - v > k``, which once true stays true: so each stretch is searched for the one
    point where it turned true."""
    if labels not in evaluate(expr, timeline, now):
        return None
    points = {s.at for s in timeline.snapshots}
    for window in expr.windows():
        points |= {s.at + window for s in timeline.snapshots}
    edges = sorted(p for p in points if p <= now)

    def holds(t: float) -> bool:
        return labels in evaluate(expr, timeline, t)

    end = now
    for start in reversed(edges):
        if holds(start):
            end = start
            continue
        lo, hi = start, end  # false at lo, true at hi
        while hi - lo > RESOLUTION:
            mid = (lo + hi) / 2
            if holds(mid):
                hi = mid
            else:
                lo = mid
        return hi
    return end


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(value)


def duration(seconds: float) -> str:
    """Seconds as a PromQL duration (``6h``, ``90s``)."""
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{_number(seconds)}s"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def sample_times(timeline: Timeline) -> Sequence[float]:
    return [s.at for s in timeline.snapshots]
