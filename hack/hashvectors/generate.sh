#!/usr/bin/env bash
# Regenerates pkg/routecore/testdata/hashvectors.json from the official xxHash C
# library. Needs a C compiler and libxxhash-dev (apt-get install libxxhash-dev).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out="$here/../../pkg/routecore/testdata/hashvectors.json"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -std=c11 -Wall -Wextra -o "$tmp/gen" "$here/gen.c" -lxxhash
mkdir -p "$(dirname "$out")"
"$tmp/gen" > "$out"
echo "wrote $out"
