#!/usr/bin/env bash
# Debian's Prometheus (prometheus, promtool) and Alertmanager (prometheus-alertmanager, amtool),
# unpacked into a project-local tools dir for the tests: `apt-get download` fetches the .debs
# (no root needed) and `dpkg-deb -x` unpacks them; nothing is installed on the machine.
#
#   scripts/tools/prometheus.sh [TOOLS_DIR]    default: .tools (git-ignored)
#
# Prints the bin dir (TOOLS_DIR/prometheus/usr/bin). Idempotent: a second run with the same
# package versions does nothing. The versions are Debian bookworm's (prometheus 2.42,
# alertmanager 0.25); the tests need a promtool with `test rules` and Prometheus' v1 HTTP API.
set -euo pipefail

PACKAGES=(prometheus prometheus-alertmanager)
root="$(cd "$(dirname "$0")/../.." && pwd)"
tools="${1:-$root/.tools}"
dest="$tools/prometheus"
debs="$tools/debs"
stamp="$dest/.unpacked"
mkdir -p "$debs"

# A private apt state, used when the machine's package lists do not know the packages (a fresh
# machine before `apt-get update`) and we may not update the machine's own lists.
apt_private=(
    -o "Dir::State::Lists=$tools/apt/lists" -o "Dir::Cache=$tools/apt/cache"
    -o "Debug::NoLocking=1"
)

have_lists() { apt-cache show "${PACKAGES[@]}" >/dev/null 2>&1; }

apt_opts=()
if ! have_lists; then
    if [ "$(id -u)" = 0 ]; then
        apt-get update -qq >&2
    else
        mkdir -p "$tools/apt/lists/partial" "$tools/apt/cache/archives/partial"
        apt-get "${apt_private[@]}" update -qq >&2
        apt_opts=("${apt_private[@]}")
    fi
fi

# the candidate version of each package, as apt would install it
want=""
for p in "${PACKAGES[@]}"; do
    v="$(apt-cache "${apt_opts[@]}" policy "$p" | awk '/Candidate:/ {print $2}')"
    if [ -z "$v" ] || [ "$v" = "(none)" ]; then
        echo "scripts/tools/prometheus.sh: apt knows no candidate for $p" >&2
        exit 1
    fi
    want="$want$p=$v "
done

SYSTEM_SHARE=/usr/share/prometheus/alertmanager
LINK=/tmp/.offsets-auditor-alertmanager # as long as SYSTEM_SHARE
link_share() {
    if [ "$(readlink "$LINK" 2>/dev/null)" != "$dest$SYSTEM_SHARE" ]; then
        rm -f "$LINK" 2>/dev/null || true
        ln -s "$dest$SYSTEM_SHARE" "$LINK" || {
            echo "scripts/tools/prometheus.sh: cannot link $LINK to $dest$SYSTEM_SHARE" >&2
            exit 1
        }
    fi
}

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] \
    && [ -x "$dest/usr/bin/promtool" ] && [ -x "$dest/usr/bin/prometheus-alertmanager" ]; then
    link_share
    echo "$dest/usr/bin"
    exit 0
fi

rm -rf "$dest"
mkdir -p "$dest"
(
    cd "$debs"
    rm -f ./*.deb
    # apt-get download as root warns that the _apt user cannot write here: harmless
    # shellcheck disable=SC2086
    apt-get "${apt_opts[@]}" download -qq $want 2>&1 | grep -v "unsandboxed" >&2 || true
)
for p in "${PACKAGES[@]}"; do
    deb="$(ls "$debs/${p}_"*.deb 2>/dev/null | head -n 1)"
    if [ -z "$deb" ]; then
        echo "scripts/tools/prometheus.sh: apt-get download $p fetched nothing" >&2
        exit 1
    fi
    dpkg-deb -x "$deb" "$dest"
done
# Debian's alertmanager reads its default notification templates from the fixed path
# /usr/share/prometheus/alertmanager (no flag changes it) and exits without them. Unpacked here,
# they are under $dest: the binary's copy of that path is replaced by a path of the same length
# in /tmp, a symlink to $dest's (made below on every run). An apt-installed package needs none
# of this.
python3 - "$dest/usr/bin/prometheus-alertmanager" "$SYSTEM_SHARE" "$LINK" <<'PY'
import sys
path, old, new = sys.argv[1], sys.argv[2].encode(), sys.argv[3].encode()
assert len(old) == len(new), (old, new)
data = open(path, "rb").read()
if data.count(old) == 0:
    sys.exit(f"{path}: {old!r} not found")
open(path, "wb").write(data.replace(old, new))
PY
"$dest/usr/bin/promtool" --version >/dev/null
echo "$want" >"$stamp"
link_share
echo "$dest/usr/bin"
