"""An internal error (a bug in offsets-auditor, never a verdict about the data) as the one line
every command prints for it: the same on the driver and for what failed on an executor."""

from __future__ import annotations

import os
import traceback
from typing import Final

from offsets_auditor.cli.exit_status import INTERNAL_ERROR

__all__ = ["INTERNAL_ERROR", "MAX_MESSAGE", "one_line"]

#: The longest message kept (an exception may carry a whole file's worth of text).
MAX_MESSAGE: Final = 300


def one_line(error: BaseException) -> str:
    """``Type: message (at file.py:N in function)``, on one line, at most :data:`MAX_MESSAGE`
    characters of message."""
    message = " ".join(str(error).split())
    if len(message) > MAX_MESSAGE:
        message = message[: MAX_MESSAGE - 3] + "..."
    frames = traceback.extract_tb(error.__traceback__)
    where = ""
    if frames:
        last = frames[-1]
        where = f" (at {os.path.basename(last.filename)}:{last.lineno} in {last.name})"
    return f"{type(error).__name__}: {message}{where}"
