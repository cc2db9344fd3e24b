#!/usr/bin/env bash
# Prints the path of a chromium for the test that renders the simulate SVG in a
# real browser (pkg/simulate/plot), installing Debian's package when there is
# none:
#   apt-get install -y --no-install-recommends chromium
# as root, or through a password-less sudo. The path is also recorded as the
# symlink
#   ${KDYN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-dynamo}/chromium/chromium
# where the test looks when KDYN_CHROMIUM is not set. Fast and silent when
# chromium is there already (KDYN_CHROMIUM, PATH, /usr/bin/chromium). Exits 1
# with a message on stderr when it cannot (no apt-get, not root, the registry
# is unreachable).
set -euo pipefail
cache=${KDYN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-dynamo}/chromium
found() {
  mkdir -p "$cache"
  ln -sfn "$1" "$cache/chromium"
  echo "$1"
  exit 0
}
lookup() {
  local c
  for c in "${KDYN_CHROMIUM:-}" "$(command -v chromium || true)" /usr/bin/chromium; do
    if [ -n "$c" ] && [ -x "$c" ]; then found "$c"; fi
  done
}
lookup
command -v apt-get >/dev/null || {
  echo "chromium provision: no chromium and no apt-get (install chromium, or set KDYN_CHROMIUM to its path)" >&2
  exit 1
}
if [ "$(id -u)" = 0 ]; then
  as_root=()
elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
  as_root=(sudo -n)
else
  echo "chromium provision: chromium is not installed and installing it needs root: run 'apt-get install --no-install-recommends chromium' as root, or set KDYN_CHROMIUM to a chromium binary" >&2
  exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export DEBIAN_FRONTEND=noninteractive
# Fresh machines often have no package lists yet.
if ! apt-cache show chromium >/dev/null 2>&1; then
  "${as_root[@]}" apt-get update -qq >"$tmp/log" 2>&1 || true
fi
# Wait for a concurrent apt (another provisioning job) rather than fail.
if ! "${as_root[@]}" apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=300 chromium >"$tmp/log" 2>&1; then
  echo "chromium provision: apt-get install chromium failed: $(tail -3 "$tmp/log")" >&2
  exit 1
fi
lookup
echo "chromium provision: apt-get installed chromium but no chromium binary was found" >&2
exit 1
