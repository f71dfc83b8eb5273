"""The broker's own ``server.log`` where it sits beside the log dir.

Kafka's scripts send log4j's files to ``$LOG_DIR`` (``-Dkafka.logs.dir``), by default the
``logs`` directory of the Kafka installation (2.3.0 ``bin/kafka-run-class.sh``: ``LOG_DIR=
"$base_dir/logs"``), with ``server.log`` from ``config/log4j.properties``; 0.9-0.10.2 print
the "Kafka version" line only to stdout, which ``kafka-server-start.sh -daemon`` writes to
``$LOG_DIR/kafkaServer.out``. So when the data dir is kept beside the installation's logs, or
the logs beside the data (this project's fixtures: ``server.log`` next to ``kafka-logs/``),
the broker's version line is a step away. Only these places are looked at, each a regular
file, read-only: nothing is searched. A file found there is taken as this broker's log; one
of another broker contradicts stronger evidence and is set aside by version detection
(``version-evidence-conflict``).
"""

from __future__ import annotations

import os
from pathlib import Path

from offsets_auditor.logdir import fs

#: Where a broker's log is looked for, relative to the log dir's parent, in this order.
BESIDE = ("server.log", "logs/server.log", "kafkaServer.out", "logs/kafkaServer.out")


def log_dir_parent(log_dir: Path) -> Path:
    """The directory holding ``log_dir`` (relative when ``log_dir`` is, as it is reported)."""
    norm = Path(os.path.normpath(log_dir))
    return norm.parent if norm.name not in ("", ".", "..") else Path(os.path.abspath(norm)).parent


def find_server_log(log_dir: Path) -> Path | None:
    """The first of :data:`BESIDE` that is a readable regular file, or None; as a path
    relative to where ``log_dir`` is when that is (as the log dir is reported)."""
    parent = log_dir_parent(log_dir)
    return next((parent / r for r in BESIDE if fs.is_readable_file(parent / r)), None)
