"""The groups table built from a replay's committed offsets as columns (``GroupsFold.result``
with ``Listing.OFFSET_COLUMNS``, then ``published.groups.table_columns``) is the table built from
the report's objects (``group_columns``): the same rows, in the same order, on every real log
dir of the fixtures."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from offsets_auditor.audit.group_recovery import plan
from offsets_auditor.groups.replay import GroupsFold, Listing
from offsets_auditor.groups.rules import loader_rules
from offsets_auditor.logdir.model import offsets_partitions, read_log_dir
from offsets_auditor.published.groups import group_columns, table_columns
from offsets_auditor.reader.reading import DEFAULT_READ
from offsets_auditor.version_detection import detect_version
from tests.conftest import FIXTURES

LOG_DIRS = sorted(p for p in FIXTURES.glob("**/kafka-logs") if p.is_dir())


def folds(log_dir: Path) -> list[GroupsFold]:
    """Every offsets partition of ``log_dir`` replayed at its detected version."""
    rules = loader_rules(detect_version([log_dir]).used)
    model = read_log_dir(log_dir, rules.version)
    groups_plan = plan(model, rules)
    done = []
    for partition in offsets_partitions(model):
        fold = groups_plan.fold(partition)
        for segment in partition.segments:
            builder = groups_plan.builder(partition, segment)
            for item in DEFAULT_READ.segment(partition, segment):
                builder.add(item)
            fold.add(builder.result())
        done.append(fold)
    return done


@pytest.mark.parametrize("log_dir", LOG_DIRS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_the_table_of_columns_is_the_table_of_objects(log_dir: Path) -> None:
    for fold in folds(log_dir):
        objects = fold.result()
        columns = fold.result(Listing.OFFSET_COLUMNS)
        assert columns.groups == tuple(replace(g, offsets=()) for g in objects.groups)
        assert objects.committed is None
        if columns.committed is None:  # no committed offset: nothing to compare but the rows
            assert all(not g.offsets for g in objects.groups)
            assert group_columns(columns.groups) == group_columns(objects.groups)
            continue
        assert len(columns.committed) == sum(len(g.offsets) for g in objects.groups)
        assert table_columns(columns.groups, columns.committed) == group_columns(objects.groups)
        assert columns.findings == objects.findings


def test_the_fixtures_hold_every_kind_of_row() -> None:
    """Groups with committed offsets, with pending transactional ones, and with neither: each
    kind of row the table interleaves is compared above."""
    groups = [g for d in LOG_DIRS for f in folds(d) for g in f.result().groups]
    assert any(g.offsets for g in groups)
    assert any(g.pending_transactional_offsets for g in groups)
    assert any(not g.offsets and not g.pending_transactional_offsets for g in groups)
    assert any(g.offsets and g.pending_transactional_offsets for g in groups)
