"""The C extension's primitives: MD5 (scalar and SIMD lanes) and CRCs against the standard
implementations, the interning tables, and a clean build with the compiler's warnings on."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sysconfig
import zlib
from pathlib import Path

import numpy as np
import pytest
from crc32c import crc32c
from hypothesis import given, settings
from hypothesis import strategies as st

from offsets_auditor import _native

SOURCE = Path(__file__).parent.parent.parent / "offsets_auditor" / "_native.c"
WIDTHS = [w for w in (1, 8, 16) if w <= _native.max_simd_width()]


@pytest.mark.parametrize("length", [0, 1, 3, 54, 55, 56, 57, 63, 64, 65, 119, 120, 128, 1000])
def test_md5_block_boundaries(length: int) -> None:
    data = bytes(range(256)) * 4
    assert _native.md5(data[:length]) == hashlib.md5(data[:length]).digest()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.binary(max_size=140), max_size=40), st.sampled_from(WIDTHS))
def test_md5_in_lanes_is_hashlib(keys: list[bytes], width: int) -> None:
    assert _native.md5_many(keys, width) == [hashlib.md5(k).digest() for k in keys]


@settings(max_examples=300, deadline=None)
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


@settings(max_examples=100, deadline=None)
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


@pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc")
def test_builds_without_warnings(tmp_path: Path) -> None:
    include = sysconfig.get_paths()["include"]
    result = subprocess.run(
        ["gcc", "-O2", "-Wall", "-Wextra", "-Werror", "-fPIC", "-shared", f"-I{include}",
         str(SOURCE), "-o", str(tmp_path / "native.so")],
        capture_output=True,
        text=True,
        check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
