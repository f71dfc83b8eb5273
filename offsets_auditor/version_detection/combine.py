"""Evidence -> one version range, the version the emulation uses, and what to tell about it.

Rules (docs/kafka-internals.md §8):

1. The range is the intersection of what every piece of evidence allows.
2. Pieces are taken strongest first (the broker's own version line, then what was written, then
   what is missing); a piece that would leave no version at all is set aside and reported as a
   ``version-evidence-conflict`` (e.g. a server.log from another broker).
3. Without ``--kafka-version`` the emulation uses the LOWEST version of the range, the oldest
   behaviour the evidence allows (never below 0.9.0.0, the oldest release the emulation models):
   old brokers are the ones whose cleaner dies, so the verdict errs towards the failure. One
   exception: 0.9.0.0 when the range goes on past it. 0.9.0.0 shipped ``log.cleaner.enable``
   false by default and 0.9.0.1 (the next release, writing the same files) made it true, so a
   0.9 log dir that was compacted at all, or whose operator did not set the flag, is a 0.9.0.1
   one: 0.9.0.1 is used and 0.9.0.0's verdict is one of the alternatives. Where the rest of the
   range would give another verdict, the audit reports each one
   (``offsets_auditor.audit.alternatives``).
4. ``--kafka-version`` is used as given; if the evidence excludes it, a ``version-mismatch``
   warning names the evidence.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from offsets_auditor.findings import Finding, FindingKind, Severity
from offsets_auditor.version_detection.model import Evidence, VersionRange
from offsets_auditor.versions import RELEASES, KafkaVersion

#: The oldest release the cleaner emulation and the loaders model (``behaviour.modelled``).
OLDEST_MODELLED = KafkaVersion.parse("0.9.0.0")
#: Used instead of 0.9.0.0 when the range goes on past it (rule 3).
CLEANER_ON_BY_DEFAULT = KafkaVersion.parse("0.9.0.1")


@dataclass(frozen=True, slots=True)
class Detection:
    """What the evidence says about the broker's version, and the version used.

    ``evidence`` holds the pieces the range is made of; ``set_aside`` those that contradicted
    stronger ones. ``given`` is the operator's ``--kafka-version``, if any; ``basis`` says in
    words why ``used`` was chosen."""

    range: VersionRange
    evidence: tuple[Evidence, ...]
    set_aside: tuple[Evidence, ...]
    given: KafkaVersion | None
    used: KafkaVersion
    basis: str
    #: the broker log read for its version line: its path, and how it was had
    #: (``--server-log``, or found beside the log dir: ``logdir.server_log``); None: none
    server_log: tuple[str, str] | None = None

    @property
    def lowest_modelled(self) -> KafkaVersion:
        """The range's oldest release the emulation models (where its stretches begin)."""
        return max(self.range.lowest, OLDEST_MODELLED)

    @property
    def detected(self) -> bool:
        """Whether ``used`` comes from the evidence (no ``--kafka-version``)."""
        return self.given is None

    def to_json(self) -> dict[str, object]:
        return {
            "used": str(self.used),
            "basis": self.basis,
            "given": None if self.given is None else str(self.given),
            "range": self.range.to_json(),
            "evidence": [e.to_json() for e in self.evidence],
            "set_aside": [e.to_json() for e in self.set_aside],
            "server_log": None
            if self.server_log is None
            else {"file": self.server_log[0], "how": self.server_log[1]},
        }

    def findings(self) -> list[Finding]:
        """``version-mismatch`` when ``--kafka-version`` is outside the range;
        ``version-evidence-conflict`` for each piece of evidence set aside."""
        found = []
        if self.given is not None and not self.range.contains(self.given):
            against = [e for e in self.evidence if not e.allows(self.given)]
            found.append(
                Finding(
                    kind=FindingKind.VERSION_MISMATCH,
                    severity=Severity.WARNING,
                    detail=f"--kafka-version {self.given} contradicts the broker's own files:"
                    f" they say Kafka {self.range} ("
                    + "; ".join(_said(e) for e in against)
                    + f"). {self.given} is used as told: what follows may not be what this"
                    " broker does",
                    file=against[0].file if against else None,
                )
            )
        for e in self.set_aside:
            found.append(
                Finding(
                    kind=FindingKind.VERSION_EVIDENCE_CONFLICT,
                    severity=Severity.WARNING,
                    detail=f"{_said(e)}, but stronger evidence says Kafka {self.range}: set"
                    " aside (a file copied from another broker, or a server log of another"
                    " broker or of a run before an upgrade?)",
                    file=e.file,
                )
            )
        return found


def _said(e: Evidence) -> str:
    where = f" in {e.file}" if e.file and e.file not in e.seen else ""
    return f"{e.seen}{where} means Kafka {e.implies}"


def combine(evidence: Sequence[Evidence]) -> tuple[VersionRange, list[Evidence], list[Evidence]]:
    """The range all accepted evidence allows (rules 1-2), the accepted pieces and those set
    aside, each observation once (the first file it was seen in). With no evidence the range
    is every release."""
    unique: dict[tuple[object, ...], Evidence] = {}
    for e in evidence:
        unique.setdefault((e.seen, e.since, e.until, e.source), e)
    since = RELEASES[0]
    until: KafkaVersion | None = None
    accepted: list[Evidence] = []
    set_aside: list[Evidence] = []
    for e in sorted(unique.values(), key=lambda x: x.strength):
        low = since if e.since is None else max(since, e.since)
        high = until if e.until is None else (e.until if until is None else min(until, e.until))
        if high is not None and low >= high:
            set_aside.append(e)
            continue
        since, until = low, high
        accepted.append(e)
    return VersionRange(since, until), accepted, set_aside


def detect(evidence: Sequence[Evidence], given: KafkaVersion | None = None) -> Detection:
    """Combine ``evidence`` and choose the version to use (rules 3-4)."""
    versions, accepted, set_aside = combine(evidence)
    if given is not None:
        used, basis = given, "--kafka-version"
    elif versions.highest >= OLDEST_MODELLED and versions.lowest < OLDEST_MODELLED:
        used = OLDEST_MODELLED
        basis = (
            f"the lowest version of the detected range {versions} that the emulation models"
            f" ({OLDEST_MODELLED})"
        )
    elif versions.lowest == versions.highest:
        used, basis = versions.lowest, "the only version the evidence allows"
    else:
        used = versions.lowest
        basis = f"the lowest version of the detected range {versions}"
    if given is None and used == OLDEST_MODELLED and versions.highest >= CLEANER_ON_BY_DEFAULT:
        used = CLEANER_ON_BY_DEFAULT
        basis = (
            f"the lowest version of the detected range {versions} whose cleaner runs by default"
            f" ({OLDEST_MODELLED} shipped log.cleaner.enable=false; its verdict is given too)"
        )
    return Detection(versions, tuple(accepted), tuple(set_aside), given, used, basis)
