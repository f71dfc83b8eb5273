"""The subcommands: their names, the modules that implement them and their one-line summaries.

Light on purpose: ``offsets-auditor COMMAND`` imports only COMMAND's module (the others pull in
what they need when they run), so the summaries that ``--help`` lists live here.
"""

from __future__ import annotations

from typing import Final

#: command -> (module under ``offsets_auditor.cli``, summary), in the order ``--help`` lists them
COMMANDS: Final[dict[str, tuple[str, str]]] = {
    "dump": ("dump", "decode __consumer_offsets segments (.log files) record by record"),
    "coordinator": ("coordinator", "which __consumer_offsets partition coordinates each group"),
    "audit": (
        "audit",
        "emulate the log cleaner on broker log dirs: which partitions will never compact",
    ),
    "restart-progress": (
        "restart_progress",
        "progress (and ETA) of a restarting broker's log and coordinator loading",
    ),
    "groups": ("groups", "recover every group's committed offsets from __consumer_offsets on disk"),
}


def summary(command: str) -> str:
    return COMMANDS[command][1]
