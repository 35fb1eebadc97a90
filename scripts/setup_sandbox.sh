#!/usr/bin/env bash
# Install what the sandboxes need and build the container image. Idempotent: reruns only do missing work.
#
#   scripts/setup_sandbox.sh            # system packages + python deps + container image
#   SKIP_IMAGE=1 scripts/setup_sandbox.sh   # local backend only
#
# Local backend: bubblewrap (namespaces + mounts), python3-seccomp (the seccomp filter, loaded by Debian's
# /usr/bin/python3 inside the sandbox), cgroup v1 memory/pids/cpu/cpuacct/freezer controllers (checked,
# not installed). apt waits for the dpkg lock (APT_LOCK_TIMEOUT, default 600 s) or uses scripts/apt_install.sh.
# Container backend: podman + runc speaking the Docker Engine API on a unix socket, and a local image built from a
# debootstrap'd Debian rootfs (no image registry needed). The rootfs tarball is cached under $RLVR_CACHE.
set -euo pipefail

RLVR_CACHE="${RLVR_CACHE:-/var/cache/rlvr-gym}"
IMAGE="${RLVR_SANDBOX_IMAGE:-localhost/rlvr-gym-sandbox:bookworm}"
SUITE="${RLVR_SANDBOX_SUITE:-bookworm}"
# The Debian mirror apt is already configured with on this machine (first main-archive URI), unless overridden.
apt_mirror() {
  { grep -hE '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}' || true;
    grep -hE '^deb ' /etc/apt/sources.list 2>/dev/null | awk '{print $2}' || true; } | grep -v -- '-security' | head -n 1 || true
}
MIRROR="${RLVR_DEBIAN_MIRROR:-$(apt_mirror)}"
ROOT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${PYTHON:-$ROOT_DIR/.venv/bin/python}"
[ -x "$PY" ] || PY="$(command -v python3)"

log() { printf '[setup_sandbox] %s\n' "$*"; }
die() { printf '[setup_sandbox] ERROR: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root (installs packages, builds the image)"

need_pkgs=()
for spec in bwrap:bubblewrap /usr/bin/python3:python3 ; do
  command -v "${spec%%:*}" >/dev/null 2>&1 || need_pkgs+=("${spec#*:}")
done
/usr/bin/python3 -c 'import seccomp' 2>/dev/null || need_pkgs+=(python3-seccomp)
if [ -z "${SKIP_IMAGE:-}" ]; then
  for spec in podman:podman runc:runc debootstrap:debootstrap; do
    command -v "${spec%%:*}" >/dev/null 2>&1 || need_pkgs+=("${spec#*:}")
  done
fi
# apt/dpkg may be busy (another installer, unattended-upgrades): wait for its locks instead of failing.
APT_LOCK_TIMEOUT="${APT_LOCK_TIMEOUT:-600}"
apt_locked() {
  local lock
  for lock in /var/lib/dpkg/lock-frontend /var/lib/dpkg/lock /var/lib/apt/lists/lock /var/cache/apt/archives/lock; do
    [ -e "$lock" ] || continue
    if command -v fuser >/dev/null 2>&1; then
      fuser "$lock" >/dev/null 2>&1 && return 0
    elif ! flock -n "$lock" true 2>/dev/null; then
      return 0
    fi
  done
  return 1
}
wait_for_apt() {
  local waited=0
  while apt_locked; do
    [ "$waited" -ge "$APT_LOCK_TIMEOUT" ] && die "apt/dpkg still locked after ${APT_LOCK_TIMEOUT}s (another install running?); rerun later or raise APT_LOCK_TIMEOUT"
    [ "$waited" = 0 ] && log "apt/dpkg is locked by another process; waiting up to ${APT_LOCK_TIMEOUT}s"
    sleep 5; waited=$((waited + 5))
  done
}
apt_install() {
  if [ -x "$ROOT_DIR/scripts/apt_install.sh" ]; then
    bash "$ROOT_DIR/scripts/apt_install.sh" "$@"
    return
  fi
  wait_for_apt
  apt-get -o DPkg::Lock::Timeout="$APT_LOCK_TIMEOUT" update -qq
  wait_for_apt
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout="$APT_LOCK_TIMEOUT" install -y -qq \
    --no-install-recommends "$@" >/dev/null
}
if [ ${#need_pkgs[@]} -gt 0 ]; then
  log "installing ${need_pkgs[*]}"
  apt_install "${need_pkgs[@]}"
fi

"$PY" -m pip install -q "docker>=7" 2>/dev/null || log "warning: pip install docker failed (container backend needs it)"

# cgroup v1 controllers the local backend uses: fail clearly now rather than at the first job.
for ctl in memory pids cpu cpuacct freezer; do
  [ -w "/sys/fs/cgroup/$ctl" ] || die "cgroup v1 '$ctl' controller not writable at /sys/fs/cgroup/$ctl"
done
log "local backend primitives: ok ($(bwrap --version))"

[ -n "${SKIP_IMAGE:-}" ] && exit 0

# Podman configuration: runc + cgroupfs, and default ulimits (without them runc fails with setrlimit EPERM).
CONF=/etc/containers/containers.conf
if ! grep -q 'rlvr-gym' "$CONF" 2>/dev/null; then
  log "writing $CONF"
  mkdir -p /etc/containers
  cat >"$CONF" <<'EOF'
# rlvr-gym sandbox settings
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
EOF
fi

if podman image exists "$IMAGE" 2>/dev/null; then
  log "image $IMAGE present"
  exit 0
fi

mkdir -p "$RLVR_CACHE"
TARBALL="$RLVR_CACHE/rootfs-$SUITE-python3.tar"
if [ ! -s "$TARBALL" ]; then
  WORK="$(mktemp -d "$RLVR_CACHE/rootfs.XXXXXX")"
  trap 'rm -rf "$WORK"' EXIT
  log "debootstrap $SUITE (about a minute)"
  debootstrap --variant=minbase --include=python3,python3-seccomp "$SUITE" "$WORK/rootfs" "$MIRROR" >"$WORK/debootstrap.log" 2>&1 \
    || { tail -20 "$WORK/debootstrap.log" >&2; die "debootstrap failed"; }
  rm -rf "$WORK/rootfs/var/cache/apt/archives/"*.deb "$WORK/rootfs/var/lib/apt/lists/"*
  mkdir -p "$WORK/rootfs/opt/rlvr"
  tar -C "$WORK/rootfs" -cf "$TARBALL.tmp" . && mv "$TARBALL.tmp" "$TARBALL"
fi
log "importing $TARBALL as $IMAGE"
podman import -q --change 'CMD ["/usr/bin/python3"]' "$TARBALL" "$IMAGE" >/dev/null
log "image $IMAGE built"
