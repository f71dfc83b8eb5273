"""The cyclic collector paused around the audit's stages (``audit.collector``)."""

from __future__ import annotations

import gc

import pytest

from offsets_auditor.audit.collector import cyclic_gc_paused


def test_paused_inside_nested_and_on_again_after() -> None:
    assert gc.isenabled()
    with cyclic_gc_paused():
        assert not gc.isenabled()
        with cyclic_gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner stage does not turn it on inside the outer one
    assert gc.isenabled()


def test_on_again_after_a_failing_stage() -> None:
    @cyclic_gc_paused()
    def stage() -> None:
        assert not gc.isenabled()
        raise RuntimeError("stage failed")

    with pytest.raises(RuntimeError):
        stage()
    assert gc.isenabled()


def test_left_off_when_it_was_off() -> None:
    gc.disable()
    try:
        with cyclic_gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
