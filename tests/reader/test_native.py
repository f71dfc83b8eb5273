"""The C extension's primitives: MD5 (scalar and SIMD lanes) and CRCs against the standard
implementations, the interning tables, and a clean build with the compiler's warnings on."""

from __future__ import annotations

import hashlib
import shutil
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from crc32c import crc32c
from hypothesis import given, settings
from hypothesis import strategies as st

from offsets_auditor import _native
from offsets_auditor.reader.tables import decoded_texts
from offsets_auditor.schemas.java_utf8 import java_utf8
from tests.support.c_build import assert_builds_without_warnings

SOURCE = Path(__file__).parent.parent.parent / "offsets_auditor" / "_native.c"
WIDTHS = [w for w in (1, 8, 16) if w <= _native.max_simd_width()]


@pytest.mark.parametrize("length", [0, 1, 3, 54, 55, 56, 57, 63, 64, 65, 119, 120, 128, 1000])
def test_md5_block_boundaries(length: int) -> None:
    data = bytes(range(256)) * 4
    assert _native.md5(data[:length]) == hashlib.md5(data[:length]).digest()


@settings(max_examples=300)
@given(st.lists(st.binary(max_size=140), max_size=40), st.sampled_from(WIDTHS))
def test_md5_in_lanes_is_hashlib(keys: list[bytes], width: int) -> None:
    assert _native.md5_many(keys, width) == [hashlib.md5(k).digest() for k in keys]


@settings(max_examples=300)
@given(st.binary(max_size=600))
def test_crcs_are_zlibs_and_crc32c(data: bytes) -> None:
    assert _native.crc(data, False) == zlib.crc32(data)
    assert _native.crc(data, True) == crc32c(data)


def test_string_table_interns_in_first_seen_order() -> None:
    table = _native.StringTable()
    assert [table.intern(s) for s in (b"a", b"b", b"a", b"", b"\xff")] == [0, 1, 0, 2, 3]
    assert len(table) == 4 and table[1] == b"b" and table[3] == b"\xff"
    many = [str(i).encode() for i in range(5000)]
    assert [table.intern(s) for s in many] == [table.intern(s) for s in many]
    assert len(table) == 4 + 5000
    with pytest.raises(IndexError):
        table[len(table)]


@settings(max_examples=200)
@given(st.lists(st.binary(max_size=40), max_size=100))
def test_string_table_tells_apart_strings_one_byte_apart(strings: list[bytes]) -> None:
    # the table hashes and compares in whole words with overlapping tails: every length and
    # every byte position must still tell two strings apart
    variants = []
    for s in strings:
        variants.append(s)
        variants.extend(s[:i] + bytes([s[i] ^ 1]) + s[i + 1 :] for i in range(len(s)))
        variants.append(s + b"\x00")
    first: dict[bytes, int] = {}
    expected = [first.setdefault(v, len(first)) for v in variants]
    table = _native.StringTable()
    assert [table.intern(v) for v in variants] == expected
    assert [table[i] for i in range(len(table))] == list(first)


@settings(max_examples=300)
@given(st.lists(st.binary(max_size=12) | st.text(max_size=8).map(str.encode), max_size=30))
def test_texts_decode_well_formed_utf8_and_leave_the_rest(strings: list[bytes]) -> None:
    """``StringTable.texts`` is Python's strict UTF-8 decoding, None where it fails; with a
    fallback (``reader.tables.decoded_texts``) every string decodes as Java would."""
    table = _native.StringTable()
    ids = np.array([table.intern(s) for s in strings], dtype=np.int32)

    def strict(raw: bytes) -> str | None:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return None

    assert table.texts(ids) == [strict(s) for s in strings]
    assert decoded_texts(table, ids, java_utf8) == [java_utf8(s) for s in strings]
    with pytest.raises(IndexError):
        table.texts(np.array([len(table)], dtype=np.int32))


def test_intern_slices_interns_each_rows_bytes() -> None:
    table = _native.StringTable()
    buffers = (b"xxclient-1yy", memoryview(b"client-1client-2"))
    out = np.empty(4, dtype=np.int32)

    def rows(buffer: list[int], start: list[int], size: list[int]) -> int:
        return table.intern_slices(
            buffers,
            np.array(buffer, dtype=np.int16),
            np.array(start, dtype=np.int64),
            np.array(size, dtype=np.int32),
            out[: len(buffer)],
        )

    assert rows([0, 1, 1, 0], [2, 0, 8, 0], [8, 8, 8, 0]) == 3
    assert out.tolist() == [0, 0, 1, 2]
    assert table[0] == b"client-1" and table[1] == b"client-2" and table[2] == b""
    with pytest.raises(IndexError):
        rows([1], [9], [8])  # past the buffer's end
    with pytest.raises(IndexError):
        rows([2], [0], [1])  # no such buffer
    with pytest.raises(ValueError):
        table.intern_slices(buffers, np.zeros(1, np.int32), np.zeros(1), np.zeros(1), out[:1])


@st.composite
def _windows(draw: st.DrawFn) -> dict[str, object]:
    """A window of records in batches, an offset map and the cleaner's switches."""
    batches = draw(st.integers(1, 6))
    n = draw(st.integers(0, 40))
    keys = draw(st.integers(0, 8))
    records = st.lists(st.booleans(), min_size=n, max_size=n)
    per_batch = st.lists(st.booleans(), min_size=batches, max_size=batches)

    def ints(low: int, high: int, size: int, dtype: Any) -> npt.NDArray[Any]:
        return np.array(draw(st.lists(st.integers(low, high), min_size=size, max_size=size)), dtype)

    return {
        "batch": np.sort(ints(0, batches - 1, n, np.int32)),
        "weight": ints(8, 500, n, np.int32),
        "offset": ints(-3, 12, n, np.int64),  # small: offsets meet stored ones
        "ids": ints(-1, keys - 1, n, np.int32),
        "keyed": np.array(draw(records), np.bool_),
        "tombstone": np.array(draw(records), np.bool_),
        "alive": np.array(draw(records), np.bool_),
        "control": np.array(draw(per_batch), np.bool_),
        "discard": np.array(draw(per_batch), np.bool_),
        "dropped": np.array(draw(per_batch), np.bool_),
        "stored": ints(-2, 12, keys, np.int64),
        "latest": draw(st.integers(-1, 12)),
        "legacy": draw(st.booleans()),
        "from_found": draw(st.booleans()),
        "retain_deletes": draw(st.booleans()),
    }  # fmt: skip


def _retained_in_numpy(w: dict[str, Any]) -> tuple[Any, ...]:
    """The retention rules as whole-array numpy (how ``cleaner/retention.py`` applied them
    before ``_native.retain``)."""
    batch, weight, offset, ids = w["batch"], w["weight"], w["offset"], w["ids"]
    keyed, tombstone, alive, control = w["keyed"], w["tombstone"], w["alive"], w["control"]
    discard, dropped, stored = w["discard"], w["dropped"], w["stored"]
    nb = len(control)

    def sums(mask: Any) -> list[Any]:
        return [
            np.bincount(batch[mask], minlength=nb),
            np.bincount(batch[mask], weights=weight[mask], minlength=nb).astype(np.int64),
        ]

    n_live, w_live = sums(alive)
    w_all = np.bincount(batch, weights=weight, minlength=nb).astype(np.int64)
    alive = alive & ~dropped[batch]
    evaluated = alive & ~discard[batch]
    found = np.where(ids >= 0, stored[np.maximum(ids, 0)], -1) if len(stored) else ids * 0 - 1
    rule_1 = np.zeros(len(offset), np.bool_) if w["legacy"] else offset > w["latest"]
    considered = evaluated & ~rule_1
    invalid = considered & ~keyed
    newer = considered & keyed & (offset < found)
    if not w["from_found"]:
        newer &= found >= 0
    expired = considered & keyed & ~newer & tombstone & (not w["retain_deletes"])
    keep = evaluated & (rule_1 | (keyed & ~newer & ~expired))
    n_kept, w_kept = sums(keep)
    counts = (
        int(np.count_nonzero(invalid)),
        int(np.count_nonzero(expired)),
        int(np.count_nonzero(keep & tombstone & ~control[batch])),
        int(np.count_nonzero(alive & discard[batch])),
    )
    return counts, keep, np.array([n_live, w_live, w_all, n_kept, w_kept])


@settings(max_examples=300)
@given(_windows())
def test_retain_is_the_retention_rules(window: dict[str, Any]) -> None:
    expected_counts, expected_alive, expected_sums = _retained_in_numpy(window)
    alive = window["alive"].copy()
    sums = np.full((5, len(window["control"])), 99, dtype=np.int64)
    counts = _native.retain(
        window["batch"], window["weight"], window["offset"], window["ids"], window["keyed"],
        window["tombstone"], alive, window["control"], window["discard"], window["dropped"],
        window["stored"], window["latest"], window["legacy"], window["from_found"],
        window["retain_deletes"], sums,
    )  # fmt: skip
    assert counts == expected_counts
    assert alive.tolist() == expected_alive.tolist()
    assert sums.tolist() == expected_sums.tolist()


def test_retain_refuses_what_does_not_fit() -> None:
    one = np.zeros(1, np.int32)
    flags, batch_flags, sums = np.ones(1, np.bool_), np.zeros(1, np.bool_), np.zeros(5, np.int64)
    args = [one, one, np.zeros(1, np.int64), one, flags, flags, flags.copy()]
    with pytest.raises(IndexError):  # key id 0 of an empty map
        _native.retain(*args, batch_flags, batch_flags, batch_flags, np.zeros(0, np.int64),
                       -1, False, True, False, sums)  # fmt: skip
    with pytest.raises(ValueError):  # sums of the wrong size
        _native.retain(*args, batch_flags, batch_flags, batch_flags, np.zeros(1, np.int64),
                       -1, False, True, False, np.zeros(4, np.int64))  # fmt: skip


@settings(max_examples=100)
@given(st.lists(st.binary(min_size=16, max_size=16), max_size=300))
def test_key_table_ids_are_first_seen_order(digests: list[bytes]) -> None:
    table = _native.KeyTable()
    ids = np.empty(len(digests), dtype=np.int32)
    size = table.ids(b"".join(digests), ids)
    expected: dict[bytes, int] = {}
    assert ids.tolist() == [expected.setdefault(d, len(expected)) for d in digests]
    assert size == len(expected) == len(table)
    absent = np.empty(1, dtype=np.int32)
    table.ids(b"\x01" * 16, absent, False)
    assert absent[0] == (expected.get(b"\x01" * 16, -1))


def test_key_table_packed_tuples_with_equal_halves() -> None:
    """Keys whose first 8 bytes repeat (a group and topic with many partitions) stay fast:
    the hash mixes all 16 bytes."""
    packed = np.zeros((200_000, 4), dtype=np.int32)
    packed[:, 2] = np.arange(200_000)
    ids = np.empty(200_000, dtype=np.int32)
    assert _native.KeyTable().ids(packed, ids) == 200_000
    assert ids.tolist() == list(range(200_000))


def _map_put_reference(
    ids: list[int], offsets: list[int], present: list[bool], stored: list[int], size: int, cap: int
) -> tuple[int, int, bool]:
    """Kafka's ``buildOffsetMap`` put loop, one key at a time (the map's size checked before
    each record)."""
    last_new = False
    for i, (key, offset) in enumerate(zip(ids, offsets, strict=True)):
        if size >= cap:
            return i, size, last_new
        last_new = not present[key]
        if last_new:
            present[key] = True
            size += 1
        stored[key] = offset
    return len(ids), size, last_new


@settings(max_examples=200)
@given(
    st.lists(st.integers(0, 30), max_size=200),
    st.lists(st.booleans(), min_size=31, max_size=31),
    st.integers(0, 40),
)
def test_map_put_is_the_put_loop(ids: list[int], held: list[bool], capacity: int) -> None:
    offsets = [1000 + 7 * i for i in range(len(ids))]
    present, stored = np.array(held), np.full(31, -1, dtype=np.int64)
    size = int(present.sum())
    want_present, want_stored = list(held), [-1] * 31
    want = _map_put_reference(ids, offsets, want_present, want_stored, size, capacity)
    got = _native.map_put(
        np.array(ids, dtype=np.int32), np.array(offsets), present, stored, size, capacity
    )
    assert got == want
    assert present.tolist() == want_present and stored.tolist() == want_stored
    # without offsets: only the presence and the count
    present = np.array(held)
    assert _native.map_put(np.array(ids, dtype=np.int32), None, present, None, size, capacity) == (
        want
    )


def test_map_put_refuses_ids_out_of_range() -> None:
    present = np.zeros(4, dtype=np.bool_)
    with pytest.raises(IndexError):
        _native.map_put(np.array([1, 4], dtype=np.int32), None, present, None, 0, 10)
    with pytest.raises(IndexError):
        _native.map_put(np.array([-1], dtype=np.int32), None, present, None, 0, 10)
    with pytest.raises(ValueError):
        _native.map_put(np.array([1], dtype=np.int32), np.array([5]), present, None, 0, 10)


def test_intern_all_is_first_seen_order() -> None:
    ids: dict[str, int] = {}
    names: list[str] = []
    out = np.empty(5, dtype=np.int32)
    assert _native.intern_all(["b", "a", "b", "", "\udcff"], ids, names, out) == 4
    assert out.tolist() == [0, 1, 0, 2, 3] and names == ["b", "a", "", "\udcff"]
    out = np.empty(2, dtype=np.int32)
    assert _native.intern_all(("a", "c"), ids, names, out) == 5
    assert out.tolist() == [1, 4] and ids == {n: i for i, n in enumerate(names)}
    with pytest.raises(TypeError):
        _native.intern_all([b"bytes"], ids, names, out)
    with pytest.raises(ValueError):
        _native.intern_all(["a", "b", "c"], ids, names, out)


@pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc")
def test_builds_without_warnings(tmp_path: Path) -> None:
    assert_builds_without_warnings(SOURCE, tmp_path / "native.so")
