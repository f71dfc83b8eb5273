"""The cleaner oracle (``tests/support/reference_cleaner.py``: the per-record emulation of
``aa82d94``) and today's columnar emulation
(``offsets_auditor.audit.partition.emulate_partition``) give the same passes, failure,
selections, map need and size after cleaning on the real broker log dirs under
``tests/fixtures``, for several Kafka versions and broker configs.

1. The oracle's results carry the product's fields, name for name (so nothing goes unchecked).
2. A representative subset (every log dir as its own broker ran it, and each era's rules on
   the log dirs where they matter: thread death, multi-pass, transactions, compression),
   bounded to well under a minute.
3. The full sweep (every log dir x the versions and configs ``scripts/golden/capture.sh``
   audits): opt-in, ``OFFSETS_AUDITOR_FULL_ORACLE=1`` (a few minutes).
"""

from __future__ import annotations

import dataclasses
import os
from functools import cache
from pathlib import Path

import pytest

from offsets_auditor.audit.partition import emulate_partition
from offsets_auditor.cleaner import passes, selection
from offsets_auditor.cleaner.config import CleanerConfig, cleaner_config
from offsets_auditor.logdir.meta_properties import parse_java_properties
from offsets_auditor.logdir.model import offsets_partitions, read_log_dir
from tests.conftest import FIXTURES
from tests.support import reference_cleaner as ref

#: the emulation's clock (``scripts/golden/capture.sh``: delete horizons do not move)
NOW_MS = 1_800_000_000_000
#: every real log dir but those damaged on purpose: the oracle predates damage-aware passes
#: (tests/audit/test_damage_real_brokers.py checks those against what the brokers did)
LOG_DIRS = sorted(
    d
    for d in FIXTURES.glob("kafka-*/*/kafka-logs*")
    if not (d.parent / "damage.json").exists()  # corrupt-segments, uncleanable
)
#: the eras ``scripts/golden/capture.sh`` runs on the same bytes, besides the broker's own
OTHER_VERSIONS = ("0.10.0.1", "0.10.1.1", "1.1.0", "2.4.1", "3.9.0", "4.0.0")
#: the small-map variant of ``capture.sh`` (``--set ... --dedupe-buffer-size --cleaner-threads``)
SMALL_MAP = {
    "min.cleanable.dirty.ratio": "0.01",
    "log.cleaner.dedupe.buffer.size": "2097154",
    "log.cleaner.threads": "2",
}
VARIANTS = ("server", "load", "small-map")


def broker_version(log_dir: Path) -> str:
    return log_dir.parent.parent.name.removeprefix("kafka-")


def config_for(log_dir: Path, version: str, variant: str) -> CleanerConfig | None:
    """The config ``capture.sh`` audits ``log_dir`` with (None: the fixture has no such file)."""
    fixture = log_dir.parent
    name = "broker-server-load.properties" if variant == "load" else "broker-server.properties"
    if not (fixture / name).exists():
        return None
    properties = parse_java_properties((fixture / name).read_text())
    return cleaner_config(properties, SMALL_MAP if variant == "small-map" else {}, version)


@cache
def oracle_scans(log_dir: Path) -> dict[str, ref.PartitionScan]:
    """The oracle's scans of ``log_dir``'s partitions (they do not depend on the config)."""
    return {}


def assert_same_emulation(log_dir: Path, config: CleanerConfig) -> int:
    """Today's emulation equals the oracle's on every offsets partition of ``log_dir``;
    returns how many passes were compared."""
    expected = ref.emulate_log_dir(log_dir, config, NOW_MS, scans=oracle_scans(log_dir))
    logdir = read_log_dir(log_dir, config.kafka_version)
    actual = {}
    for partition in offsets_partitions(logdir):
        emulated = emulate_partition(partition, config, NOW_MS)
        if emulated is not None:
            actual[partition.name] = ref.comparable(emulated)
    assert actual.keys() == expected.keys()
    for name, old in expected.items():
        assert actual[name] == ref.comparable(old), name
    return sum(len(e.passes) for e in expected.values())


def case_id(log_dir: Path, version: str, variant: str) -> str:
    return f"{log_dir.relative_to(FIXTURES)}@{version}:{variant}"


# -- 1. the same fields ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("product", "oracle"),
    [
        (passes.PassResult, ref.PassResult),
        (passes.CleanerFailure, ref.CleanerFailure),
        (selection.Selection, ref.Selection),
    ],
)
def test_the_oracle_reports_every_field_of_the_product(product: type, oracle: type) -> None:
    assert [f.name for f in dataclasses.fields(product) if f.name not in BEYOND_THE_ORACLE] == [
        f.name for f in dataclasses.fields(oracle)
    ]


#: what the oracle (the emulation of aa82d94) does not model: the damaged spot a pass fails on
#: (tests/audit/test_damage.py covers it)
BEYOND_THE_ORACLE = {"damage"}


# -- 2. a representative subset -------------------------------------------------------------------


def _subset() -> list[tuple[Path, str, str]]:
    cases = [(d, broker_version(d), "server") for d in LOG_DIRS]
    by_name = {str(d.relative_to(FIXTURES)): d for d in LOG_DIRS}
    for name, version, variant in (
        # 0.9: a segment spanning more than the map kills the thread; other eras go on
        ("kafka-0.9.0.1/cleaner-died/kafka-logs", "0.10.0.1", "server"),
        ("kafka-0.9.0.1/cleaner-died/kafka-logs", "2.4.1", "small-map"),
        ("kafka-0.9.0.1/two-threads/kafka-logs", "0.9.0.1", "small-map"),
        ("kafka-0.9.0.1/compressed-gzip/kafka-logs", "0.10.1.1", "small-map"),
        # several passes of a full map, per era
        ("kafka-2.3.0/multi-pass/kafka-logs", "0.10.0.1", "server"),
        ("kafka-2.3.0/multi-pass/kafka-logs", "0.10.1.1", "small-map"),
        ("kafka-2.3.0/multi-pass/kafka-logs", "2.3.0", "load"),
        ("kafka-2.3.0/multi-pass/kafka-logs", "3.9.0", "small-map"),
        # transactions: aborted batches, markers, the last stable offset
        ("kafka-2.3.0/transactions/kafka-logs", "0.10.1.1", "server"),
        ("kafka-2.3.0/transactions/kafka-logs", "2.3.0", "small-map"),
        ("kafka-2.3.0/transactions/kafka-logs", "2.4.1", "server"),
        ("kafka-2.3.0/transactions/kafka-logs", "4.0.0", "load"),
        ("kafka-2.3.0/transactions/kafka-logs-after", "3.9.0", "small-map"),
        # compressed v2 batches rewritten; a cleaned log dir cleaned again
        ("kafka-2.3.0/compaction-zstd/kafka-logs", "1.1.0", "small-map"),
        ("kafka-2.3.0/compaction-lz4/kafka-logs-after", "2.4.1", "small-map"),
        ("kafka-2.3.0/unclean-shutdown/kafka-logs", "3.9.0", "server"),
    ):
        if name in by_name:
            cases.append((by_name[name], version, variant))
    return cases


SUBSET = _subset()


@pytest.mark.parametrize(
    ("log_dir", "version", "variant"), SUBSET, ids=[case_id(*c) for c in SUBSET]
)
def test_the_emulation_equals_the_oracle_on_real_log_dirs(
    log_dir: Path, version: str, variant: str
) -> None:
    config = config_for(log_dir, version, variant)
    if config is None:
        pytest.skip(f"{log_dir.parent.name} has no {variant} config")
    assert_same_emulation(log_dir, config)


@pytest.mark.parametrize(
    ("name", "version", "reached"),
    [
        ("kafka-0.9.0.1/cleaner-died/kafka-logs", "0.9.0.1", "thread death"),
        ("kafka-2.3.0/multi-pass/kafka-logs", "2.3.0", "several passes of a full map"),
        ("kafka-2.3.0/transactions/kafka-logs", "2.3.0", "aborted records dropped"),
    ],
)
def test_the_subset_compares_what_matters(name: str, version: str, reached: str) -> None:
    """The real log dirs of the subset do reach what the comparison is for (else equal
    results would prove little)."""
    log_dir = FIXTURES / name
    config = config_for(log_dir, version, "server")
    assert config is not None
    results = ref.emulate_log_dir(log_dir, config, NOW_MS, scans=oracle_scans(log_dir)).values()
    seen = {
        "thread death": any(e.failure is not None and e.failure.kills_thread for e in results),
        "several passes of a full map": any(
            len(e.passes) > 1 and e.passes[0].map_full for e in results
        ),
        "aborted records dropped": any(p.aborted_dropped for e in results for p in e.passes),
    }
    assert seen[reached]


# -- 3. the full sweep (opt-in) -------------------------------------------------------------------


FULL = [
    (d, v, variant)
    for d in LOG_DIRS
    for v in (broker_version(d), *OTHER_VERSIONS)
    for variant in VARIANTS
]


@pytest.mark.slow
@pytest.mark.skipif(
    os.environ.get("OFFSETS_AUDITOR_FULL_ORACLE") != "1",
    reason="every fixture x every era x every config (minutes): OFFSETS_AUDITOR_FULL_ORACLE=1",
)
@pytest.mark.parametrize(("log_dir", "version", "variant"), FULL, ids=[case_id(*c) for c in FULL])
def test_the_emulation_equals_the_oracle_on_every_fixture_era_and_config(
    log_dir: Path, version: str, variant: str
) -> None:
    config = config_for(log_dir, version, variant)
    if config is None:
        pytest.skip(f"{log_dir.parent.name} has no {variant} config")
    assert_same_emulation(log_dir, config)
