#!/usr/bin/env bash
# Install Debian packages on a machine where something else may be using apt/dpkg right now (a fresh machine's
# own boot-time apt run, another setup script, a second CI job). Instead of failing on "Could not get lock", wait
# for the package manager's locks up to a timeout, then say clearly who holds them.
#
#   bash scripts/apt_install.sh bubblewrap podman ...
#
# - Packages already installed are skipped without touching any lock (reruns cost ~nothing).
# - Our own callers are serialized on $RLVR_APT_SELF_LOCK (flock), then we poll until no process has apt's or
#   dpkg's lock files open (apt takes fcntl locks, which `flock` cannot wait on), and apt-get itself is told to wait
#   for the remaining time (DPkg::Lock::Timeout) in case another tool grabs the lock in between.
# - `apt-get update` runs once, only when a requested package has no install candidate (empty or stale lists).
#
# Env: RLVR_APT_LOCK_TIMEOUT (seconds, default 600), RLVR_APT_LOCKS (space-separated lock files to wait for),
#      RLVR_APT_SELF_LOCK (default /var/lock/rlvr-gym-apt.lock), RLVR_APT_GET (default apt-get).
set -euo pipefail

TIMEOUT="${RLVR_APT_LOCK_TIMEOUT:-600}"
LOCKS="${RLVR_APT_LOCKS:-/var/lib/dpkg/lock-frontend /var/lib/dpkg/lock /var/lib/apt/lists/lock /var/cache/apt/archives/lock}"
SELF_LOCK="${RLVR_APT_SELF_LOCK:-/var/lock/rlvr-gym-apt.lock}"
APT_GET="${RLVR_APT_GET:-apt-get}"

log() { printf '[apt_install] %s\n' "$*" >&2; }
die() { printf '[apt_install] ERROR: %s\n' "$*" >&2; exit 1; }

[ $# -gt 0 ] || die "usage: bash scripts/apt_install.sh PACKAGE..."
case "$TIMEOUT" in '' | *[!0-9]*) die "RLVR_APT_LOCK_TIMEOUT must be whole seconds, got '$TIMEOUT'" ;; esac

installed() { [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)" = "install ok installed" ]; }
has_candidate() {
  local candidate
  candidate="$(apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ {print $2}')"
  [ -n "$candidate" ] && [ "$candidate" != "(none)" ]
}

missing=()
for pkg in "$@"; do installed "$pkg" || missing+=("$pkg"); done
[ ${#missing[@]} -gt 0 ] || exit 0
[ "$(id -u)" = 0 ] || die "must run as root to install: ${missing[*]}"

deadline=$((SECONDS + TIMEOUT))
remaining() { local left=$((deadline - SECONDS)); echo $((left > 0 ? left : 0)); }

mkdir -p "$(dirname "$SELF_LOCK")"
exec 9>"$SELF_LOCK"
if ! flock -n 9; then
  log "another rlvr-gym package install is running; waiting up to ${TIMEOUT}s"
  flock -w "$(remaining)" 9 || die "gave up after ${TIMEOUT}s waiting for $SELF_LOCK (another rlvr-gym install)"
fi

# Holders of apt/dpkg lock files, as "pid(command)" words; empty when none is open by any process.
holders() {
  local files=() f
  for f in $LOCKS; do [ -e "$f" ] && files+=("$f"); done
  [ ${#files[@]} -gt 0 ] || return 0
  local pid
  for pid in $(fuser "${files[@]}" 2>/dev/null | tr -s ' \t' '\n' | tr -cd '0-9\n' | sort -u); do
    [ "$pid" = "$$" ] && continue
    printf '%s(%s) ' "$pid" "$(tr '\0\n' '  ' <"/proc/$pid/cmdline" 2>/dev/null | cut -c1-60 || echo '?')"
  done
}

announced=""
while :; do
  busy="$(holders)"
  [ -z "$busy" ] && break
  if [ "$(remaining)" -le 0 ]; then
    die "the package manager is still busy after ${TIMEOUT}s (lock held by: ${busy% }). Wait for it to finish, or set RLVR_APT_LOCK_TIMEOUT higher and retry."
  fi
  [ -n "$announced" ] || log "waiting for the package manager (lock held by: ${busy% }); up to ${TIMEOUT}s"
  announced=1
  sleep 2
done

apt_get() {
  local out
  if ! out="$(DEBIAN_FRONTEND=noninteractive "$APT_GET" -o "DPkg::Lock::Timeout=$(remaining)" "$@" 2>&1)"; then
    printf '%s\n' "$out" | tail -n 20 >&2
    return 1
  fi
}

for pkg in "${missing[@]}"; do
  if ! has_candidate "$pkg"; then
    log "refreshing package lists (apt-get update)"
    apt_get update -q || die "apt-get update failed"
    break
  fi
done

log "installing ${missing[*]}"
apt_get install -y -q --no-install-recommends "${missing[@]}" || die "apt-get install ${missing[*]} failed"
