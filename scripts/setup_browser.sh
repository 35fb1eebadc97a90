#!/usr/bin/env bash
# Install the system browser the WebShop browser test drives: Debian's `chromium`, never a browser download.
#
# Playwright (the Python package, from the `webshop` extra) is told to launch /usr/bin/chromium through
# `executable_path`, so `playwright install` is never needed and nothing is fetched at test time.
# Reruns cost nothing: scripts/apt_install.sh skips installed packages without touching apt's locks.
#
# Usage: bash scripts/setup_browser.sh      (root or sudo; prints the browser version on success)
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
if [ -f "$HERE/apt_install.sh" ]; then
  $SUDO bash "$HERE/apt_install.sh" chromium
else
  $SUDO flock /var/lib/dpkg/lock-frontend apt-get install -y --no-install-recommends chromium
fi
/usr/bin/chromium --version 2>/dev/null | tail -1
