#!/usr/bin/env bash
# Prints the path of a qemu user-mode emulator for ARCH (default aarch64), fetching
# it once from the Debian package registry (qemu-user-static, no root needed when
# the apt package lists are present) into a versioned cache directory:
#   ${KDYN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-dynamo}/qemu/<package version>/qemu-ARCH-static
# Exits 1 with a message on stderr when it cannot (no apt-get or dpkg-deb, or the
# registry is unreachable).
set -euo pipefail
arch=${1:-aarch64}
cache_root=${KDYN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-dynamo}/qemu
# A cached emulator from any version will do: it only runs test binaries.
for f in "$cache_root"/*/qemu-"$arch"-static; do
  if [ -x "$f" ]; then echo "$f"; exit 0; fi
done
for tool in apt-get dpkg-deb; do
  command -v "$tool" >/dev/null || { echo "qemu provision: $tool not found (a Debian-based machine is needed to fetch qemu-user-static)" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fetch() { (cd "$tmp" && apt-get download -q qemu-user-static >/dev/null 2>"$tmp/err"); }
if ! fetch; then
  # Fresh machines often have no package lists yet; only root can fetch them.
  if [ "$(id -u)" = 0 ]; then apt-get update -qq >/dev/null 2>&1 || true; fi
  fetch || { echo "qemu provision: apt-get download qemu-user-static failed: $(tail -3 "$tmp/err")" >&2; exit 1; }
fi
deb=$(ls "$tmp"/qemu-user-static_*.deb)
version=$(dpkg-deb -f "$deb" Version | tr ':+~' '___')
out="$cache_root/$version"
mkdir -p "$out"
dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp" "./usr/bin/qemu-$arch-static"
mv "$tmp/usr/bin/qemu-$arch-static" "$out/"
echo "$out/qemu-$arch-static"
