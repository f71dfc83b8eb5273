"""Print the highest request version of a few APIs in each Kafka release line, read from Kafka's
own source: the table in offsets_auditor/live_cluster/api_versions.py (RELEASE_MAX_VERSIONS).

Usage: python scripts/tools/api_versions_table.py APACHE_KAFKA_GIT_DIR CONFLUENT_KAFKA_GIT_DIR
(git dirs of github:apache/kafka and github:confluentinc/kafka; read with `git show TAG:PATH`).

Where the versions are declared, by release:
- 2.2.0+: clients/src/main/resources/common/message/<Name>Request.json "validVersions" (a latest
  version marked "latestVersionUnstable": true is not advertised by a broker, so not counted);
- 0.11.0-2.1: clients/.../common/requests/<Name>Request.java schemaVersions() (the highest _V<n>);
- 0.10.x, 0.11.0: clients/.../common/protocol/Protocol.java `<NAME>_REQUEST = [new Schema[]] {...}`.
4.0.0 and 4.1.0 are read from Confluent's CCS builds of them (tags v8.0.0, v8.1.0).
"""

import json
import re
import subprocess
import sys

APIS = {  # api key: (JSON/class name, Protocol.java constant, older class name)
    0: ("Produce", "PRODUCE", None),
    1: ("Fetch", "FETCH", None),
    2: ("ListOffsets", "LIST_OFFSET", "ListOffset"),
    3: ("Metadata", "METADATA", None),
    8: ("OffsetCommit", "OFFSET_COMMIT", None),
    9: ("OffsetFetch", "OFFSET_FETCH", None),
    10: ("FindCoordinator", "(?:GROUP|FIND)_COORDINATOR", "GroupCoordinator"),
    11: ("JoinGroup", "JOIN_GROUP", None),
    18: ("ApiVersions", "API_VERSIONS", None),
}
LINES = [
    "0.10.0.0",
    "0.10.1.0",
    "0.10.2.0",
    "0.11.0.0",
    "1.0.0",
    "1.1.0",
    "2.0.0",
    "2.1.0",
    "2.2.0",
    "2.3.0",
    "2.4.0",
    "2.5.0",
    "2.6.0",
    "2.7.0",
    "2.8.0",
    "3.0.0",
    "3.1.0",
    "3.2.0",
    "3.3.0",
    "3.4.0",
    "3.5.0",
    "3.6.0",
    "3.7.0",
    "3.8.0",
    "3.9.0-rc3",
]
CCS = {"4.0.0": "v8.0.0", "4.1.0": "v8.1.0"}


def show(git, tag, path):
    r = subprocess.run(["git", "-C", git, "show", f"{tag}:{path}"], capture_output=True, text=True)
    return r.stdout if r.returncode == 0 else None


def from_json(text):
    body = json.loads(
        "\n".join(line for line in text.splitlines() if not line.strip().startswith("//"))
    )
    high = int(body["validVersions"].split("-")[-1])
    return high - 1 if body.get("latestVersionUnstable") else high


def max_version(git, tag, key):
    name, const, old = APIS[key]
    for cls in (name, old):
        text = cls and show(
            git, tag, f"clients/src/main/resources/common/message/{cls}Request.json"
        )
        if text:
            return from_json(text)
    for cls in (name, old):
        if cls is None:
            continue
        text = show(
            git, tag, f"clients/src/main/java/org/apache/kafka/common/requests/{cls}Request.java"
        )
        m = text and re.search(
            r"schemaVersions\(\)\s*\{\s*return new Schema\[\]\s*\{([^}]*)\}", text
        )
        if m:
            return max(int(v) for v in re.findall(r"_V(\d+)", m.group(1)))
    text = show(git, tag, "clients/src/main/java/org/apache/kafka/common/protocol/Protocol.java")
    m = text and re.search(r"\b" + const + r"_REQUEST = (?:new Schema\[\]\s*)?\{([^}]*)\}", text)
    return max(int(v) for v in re.findall(r"_V(\d+)", m.group(1))) if m else None


def main():
    apache, confluent = sys.argv[1], sys.argv[2]
    rows = [(tag.replace("-rc3", ""), apache, tag) for tag in LINES]
    rows += [(release, confluent, tag) for release, tag in CCS.items()]
    for release, git, tag in rows:
        versions = {k: max_version(git, tag, k) for k in APIS}
        print(f'    ("{release}", {{{", ".join(f"{k}: {v}" for k, v in versions.items())}}}),')


if __name__ == "__main__":
    main()
