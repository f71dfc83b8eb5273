"""glibc's ``malloc`` told to keep the memory a stage frees, for the next chunk to reuse.

Every chunk of every segment allocates and frees the same big blocks: the read window, the
reader's 38 columns, numpy's temporaries over them (up to ~25 MiB each). By default glibc serves
a block over 128 KiB with a fresh ``mmap`` (its threshold adjusts upwards as such blocks are
freed, up to 32 MiB), and gives the top of its heap back to the kernel once 128 KiB of it is
free. So the next chunk's blocks were new pages again, each faulted in and zeroed by the
kernel: on one broker of the cluster benchmark (1.13 GB) the kernel's page faults, zeroing and
unmapping were 13 % of the audit's time, 2.7 of its 12.4 seconds spent in the kernel.

:func:`keep_freed_memory` sets ``M_MMAP_THRESHOLD`` to 32 MiB (blocks up to that come from the
heap) and ``M_TRIM_THRESHOLD`` to 256 MiB (the heap keeps up to that much free memory at its
top), which also turns glibc's adjusting off (``mallopt(3)``). The peak resident set stays
what the stages hold at once (269 MiB before, 284 MiB after on that broker); what is kept is
freed memory that the next chunk takes again. Elsewhere than glibc it does nothing.
"""

from __future__ import annotations

import ctypes
from typing import Final

#: ``mallopt`` parameters (glibc's ``malloc.h``)
M_TRIM_THRESHOLD: Final = -1
M_MMAP_THRESHOLD: Final = -3

#: the most glibc takes for ``M_MMAP_THRESHOLD`` on 64-bit (``DEFAULT_MMAP_THRESHOLD_MAX``)
MMAP_THRESHOLD: Final = 32 << 20
TRIM_THRESHOLD: Final = 256 << 20


def keep_freed_memory() -> bool:
    """Tell this process's glibc ``malloc`` to keep freed blocks for reuse (see the module
    docstring); whether it took both settings (False elsewhere than glibc)."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
        mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD)
    )
