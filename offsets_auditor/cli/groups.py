"""``offsets-auditor groups``: every group's committed offsets, recovered from disk.

Three forms::

    offsets-auditor groups [list] LOGDIR... [--kafka-version V] [--server-log F] [--json]
    offsets-auditor groups show GROUP LOGDIR... [--kafka-version V] [--json]
    offsets-auditor groups export GROUP LOGDIR... [--topic T ...] [--kafka-version V]

Without ``--kafka-version`` each LOGDIR's version is detected from its own files (and the
server log): ``offsets_auditor.version_detection``.

``export`` prints exactly the CSV ``kafka-consumer-groups.sh --reset-offsets --from-file``
reads (``offsets_auditor.groups.export``), so a stuck group's position can be given to a NEW
group id: ``kafka-consumer-groups.sh --bootstrap-server B --group NEW --reset-offsets
--from-file plan.csv --execute``.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from offsets_auditor.audit.allocator import keep_freed_memory
from offsets_auditor.audit.collector import cyclic_gc_paused
from offsets_auditor.audit.group_recovery import GroupsRecovery, recover
from offsets_auditor.cli.commands import summary
from offsets_auditor.cli.exit_status import USAGE, ArgumentParser, statuses
from offsets_auditor.findings import Finding, exit_status
from offsets_auditor.groups.export import ExportError, reset_plan_csv
from offsets_auditor.groups.model import GroupState
from offsets_auditor.logdir.shape import looks_like_log_dir, not_a_log_dir_message
from offsets_auditor.reader.options import Backend
from offsets_auditor.reader.reading import ReadOptions
from offsets_auditor.version_detection import Detection, detect_version
from offsets_auditor.versions import KafkaVersion

_FORMS = ("list", "show", "export")
_PROG = "offsets-auditor groups"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "groups",
        help=summary("groups"),
        description=(
            "Replay every __consumer_offsets partition of the log dirs as the broker's group"
            " coordinator loads it (per Kafka version: latest commit wins, tombstones remove,"
            " transactional commits wait for their COMMIT marker) and print the groups."
            " Forms: 'groups [list] LOGDIR...', 'groups show GROUP LOGDIR...', 'groups export"
            " GROUP LOGDIR... [--topic T]' (the CSV kafka-consumer-groups.sh --reset-offsets"
            " --from-file reads). 'groups FORM --help' for each form's options. "
            + statuses(
                "0 healthy, 1 warnings, 2 critical findings (list); 0 printed, 1 the group is"
                " not there or has nothing to export (show, export); a LOGDIR that is not a"
                " broker log dir is an input error"
            )
        ),
    )
    _common_options(parser, argparse.SUPPRESS)
    parser.add_argument(
        "words", nargs=argparse.REMAINDER, metavar="[list|show|export] ...", help=argparse.SUPPRESS
    )
    parser.set_defaults(handler=run)


def _common_options(parser: argparse.ArgumentParser, default: Any) -> None:
    parser.add_argument(
        "--kafka-version",
        default=default if default is argparse.SUPPRESS else None,
        metavar="VERSION",
        help="the broker's Kafka version, e.g. 0.9.0.1 or 2.3.0 (default: detected from each"
        " log dir and --server-log; the lowest version they allow)",
    )
    parser.add_argument(
        "--server-log",
        type=Path,
        default=default if default is argparse.SUPPRESS else None,
        metavar="FILE",
        help="the broker's server.log (or kafkaServer.out): its version line pins the version",
    )
    parser.add_argument(
        "--partitions",
        type=int,
        default=default if default is argparse.SUPPRESS else None,
        metavar="N",
        help="partition count of __consumer_offsets (default: the highest partition found + 1)",
    )
    parser.add_argument(
        "--new-coordinator",
        choices=("yes", "no"),
        default=default if default is argparse.SUPPRESS else None,
        help="whether the KIP-848 group coordinator loads the partitions (default: yes from"
        " Kafka 4.0, no before)",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        default=default if default is argparse.SUPPRESS else False,
        help="JSON output",
    )
    parser.add_argument(
        "--reader",
        type=Backend,
        choices=list(Backend),
        default=default if default is argparse.SUPPRESS else Backend.NATIVE,
        metavar="{native,python}",
        help="record reader: the C parser (default) or the Python reference decoders",
    )


def _form_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(prog=_PROG)
    forms = parser.add_subparsers(dest="form", required=True, metavar="{list,show,export}")
    listing = forms.add_parser("list", help="every group with its state and offset counts")
    listing.add_argument("logdirs", nargs="+", type=Path, metavar="LOGDIR")
    _common_options(listing, None)
    show = forms.add_parser("show", help="one group: state, members, offsets, pending ones")
    show.add_argument("group", metavar="GROUP")
    show.add_argument("logdirs", nargs="+", type=Path, metavar="LOGDIR")
    _common_options(show, None)
    export = forms.add_parser(
        "export",
        help="the group's committed offsets as a kafka-consumer-groups.sh --from-file CSV",
        description=(
            "Print the group's committed offsets as 'topic,partition,offset' lines, no header:"
            " the reset plan 'kafka-consumer-groups.sh --bootstrap-server B --group NEWGROUP"
            " --reset-offsets --from-file FILE --execute' reads. The tool carries no commit"
            " metadata and clamps offsets into each partition's current [earliest, latest]."
            " Pending (uncommitted transactional) offsets are never exported."
        ),
    )
    export.add_argument("group", metavar="GROUP")
    export.add_argument("logdirs", nargs="+", type=Path, metavar="LOGDIR")
    export.add_argument(
        "--topic", action="append", default=[], metavar="TOPIC", help="only this topic (repeat)"
    )
    _common_options(export, None)
    return parser


@cyclic_gc_paused()  # the whole command: the groups' recovery, then what it prints of them
def run(args: argparse.Namespace) -> int:
    keep_freed_memory()  # for the next chunk's blocks (audit.allocator)
    words = list(args.words)
    if not words or words[0] not in (*_FORMS, "-h", "--help"):
        words.insert(0, "list")
    given = {k: v for k, v in vars(args).items() if k in _option_names()}
    form = _form_parser().parse_args(words, namespace=argparse.Namespace(**given))
    for key, value in given.items():  # the form's own defaults replace options given before it
        if getattr(form, key) in (None, False):
            setattr(form, key, value)
    out, err = sys.stdout, sys.stderr
    for logdir in form.logdirs:
        if not logdir.is_dir():
            print(f"{_PROG}: {logdir} is not a directory (give a broker log dir)", file=err)
            return USAGE
        if not looks_like_log_dir(logdir):
            print(f"{_PROG}: {not_a_log_dir_message(logdir)}", file=err)
            return USAGE
    try:
        version = None if form.kafka_version is None else KafkaVersion.parse(form.kafka_version)
        detections = [detect_version([d], form.server_log, version) for d in form.logdirs]
        recoveries = [
            _recover(form, logdir, detection)
            for logdir, detection in zip(form.logdirs, detections, strict=True)
        ]
    except ValueError as error:
        print(f"{_PROG}: {error}", file=err)
        return USAGE
    if form.form == "list":
        return _list(out, form, recoveries, detections)
    for logdir, detection in zip(form.logdirs, detections, strict=True):
        for finding in detection.findings():
            print(f"{_PROG}: {logdir}: {finding.kind}: {finding.detail}", file=err)
    return _one_group(out, err, form, recoveries)


def _option_names() -> set[str]:
    return {"kafka_version", "server_log", "partitions", "new_coordinator", "json", "reader"}


def _recover(form: argparse.Namespace, logdir: Path, detection: Detection) -> GroupsRecovery:
    new = None if form.new_coordinator is None else form.new_coordinator == "yes"
    return recover(
        logdir,
        detection.used,
        form.partitions,
        new_coordinator=new,
        read=ReadOptions(backend=form.reader),
    )


def _version_line(detection: Detection) -> str:
    """How the version was found, in one line."""
    if detection.given is not None:
        return f"  Kafka {detection.given} as given (the files say {detection.range})"
    return f"  Kafka {detection.used}: {detection.basis}"


def _list(
    out: TextIO,
    form: argparse.Namespace,
    recoveries: list[GroupsRecovery],
    detections: list[Detection],
) -> int:
    status = 0
    for logdir, recovery, detection in zip(form.logdirs, recoveries, detections, strict=True):
        findings: list[Finding] = [*detection.findings(), *recovery.findings]
        status = max(status, exit_status(findings))
        if form.json:
            data = _recovery_json(logdir, recovery, detection, findings)
            out.write(json.dumps(data, ensure_ascii=False) + "\n")
            continue
        out.write(f"{logdir}: {recovery.rules.label}\n{_version_line(detection)}\n")
        out.write(
            f"{'GROUP':<32} {'PARTITION':>9} {'STATE':<26} {'MEMBERS':>7} {'OFFSETS':>7}"
            f" {'PENDING':>7}\n"
        )
        for g in recovery.groups:
            out.write(
                f"{g.group:<32} {g.coordinator_partition:>9} {g.state.value:<26}"
                f" {len(g.members):>7} {len(g.offsets):>7}"
                f" {len(g.pending_transactional_offsets):>7}\n"
            )
        for finding in findings:
            out.write(f"{finding.severity.value}: {finding.kind}: {finding.detail}\n")
    return status


def _recovery_json(
    logdir: Path, recovery: GroupsRecovery, detection: Detection, findings: list[Finding]
) -> dict[str, object]:
    return {
        "log_dir": str(logdir),
        "kafka_version": detection.to_json(),
        "new_coordinator": recovery.rules.new_coordinator,
        "groups": [g.to_json() for g in recovery.groups],
        "partitions": [
            {
                "partition": p.partition,
                "records": p.records,
                "log_end_offset": p.log_end_offset,
                "groups": len(p.groups),
                "unknown_record_types": {str(k): v for k, v in p.unknown_record_types.items()},
            }
            for p in recovery.partitions
        ],
        "findings": [f.to_dict() for f in findings],
    }


def _pick(err: TextIO, name: str, recoveries: list[GroupsRecovery]) -> GroupState | None:
    """The group from the copy of its partition that reaches furthest (replicas of the same
    partition in several log dirs: the leader's is normally the longest)."""
    copies: list[tuple[int, GroupState]] = []
    for recovery in recoveries:
        for partition in recovery.partitions:
            copies.extend(
                (partition.log_end_offset, g) for g in partition.groups if g.group == name
            )
    if not copies:
        return None
    if len(copies) > 1:
        ends = ", ".join(str(end) for end, _ in copies)
        print(
            f"{_PROG}: {name!r} found in {len(copies)} copies of its partition (log end"
            f" offsets {ends}); using the longest",
            file=err,
        )
    _end, group = max(copies, key=lambda c: c[0])
    return group


def _one_group(
    out: TextIO, err: TextIO, form: argparse.Namespace, recoveries: list[GroupsRecovery]
) -> int:
    group = _pick(err, form.group, recoveries)
    if group is None:
        print(f"{_PROG}: no group {form.group!r} in these log dirs", file=err)
        return 1
    if form.form == "export":
        try:
            plan = reset_plan_csv(group.offsets, form.topic)
        except ExportError as error:
            print(f"{_PROG}: {error}", file=err)
            return 1
        if not plan:
            # an empty file is no reset plan: kafka-consumer-groups.sh fails parsing it
            print(f"{_PROG}: group {form.group!r} has no committed offsets to export", file=err)
            return 1
        if group.pending_transactional_offsets:
            print(
                f"{_PROG}: {len(group.pending_transactional_offsets)} pending transactional"
                " offset(s) not exported (no COMMIT marker yet)",
                file=err,
            )
        out.write(plan)
        return 0
    if form.json:
        out.write(json.dumps(group.to_json(), ensure_ascii=False, indent=2) + "\n")
        return 0
    _show_text(out, group)
    return 0


def iso_ms(epoch_ms: int | None) -> str:
    """An epoch-milliseconds timestamp as people read it (``2019-07-01T12:00:00.123Z``);
    ``-`` for none (no expiry; -1, Kafka's "no timestamp"). JSON keeps the milliseconds."""
    if epoch_ms is None or epoch_ms < 0:
        return "-"
    at = datetime.fromtimestamp(epoch_ms / 1000, tz=UTC)
    return at.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _show_text(out: TextIO, g: GroupState) -> None:
    out.write(f"group {g.group}: {g.state.value} ({g.group_type})\n")
    out.write(f"  __consumer_offsets-{g.coordinator_partition}")
    if g.expected_partition != g.coordinator_partition:
        out.write(f" (partitionFor says __consumer_offsets-{g.expected_partition})")
    out.write("\n")
    if g.has_group_metadata:
        out.write(
            f"  protocol type {g.protocol_type or '-'}, protocol {g.protocol or '-'},"
            f" generation {g.generation}, leader {g.leader or '-'}"
            f" (metadata at log offset {g.metadata_log_offset})\n"
        )
    if g.removed_at_log_offset is not None:
        out.write(f"  removed by the tombstone at log offset {g.removed_at_log_offset}\n")
    for m in g.members:
        assigned = ", ".join(f"{tp.topic}-{tp.partition}" for tp in m.assignment or ())
        out.write(f"  member {m.member_id} client {m.client_id} host {m.client_host}: {assigned}\n")
    if g.offsets:
        out.write(
            f"  {'TOPIC':<24} {'PARTITION':>9} {'OFFSET':>12} {'COMMITTED (UTC)':<24}"
            f" {'EXPIRES (UTC)':<24} {'LOG-OFFSET':>10}  METADATA\n"
        )
    for o in g.offsets:
        out.write(
            f"  {o.topic:<24} {o.partition:>9} {o.offset:>12} {iso_ms(o.commit_timestamp):<24}"
            f" {iso_ms(o.expire_timestamp):<24} {o.log_offset:>10}  {o.metadata}\n"
        )
    for p in g.pending_transactional_offsets:
        o = p.offset
        out.write(
            f"  PENDING producer {p.producer_id} epoch {p.producer_epoch}: {o.topic}-{o.partition}"
            f" offset {o.offset} at log offset {o.log_offset} (no COMMIT/ABORT marker)\n"
        )
