#!/usr/bin/env bash
# Vendor the front-end assets into assets/ (no JS build step; the files are
# embedded into the binary with go:embed and committed, so builds never need npm).
#
# Pinned versions:
#   htmx.org       2.0.11  dist/htmx.min.js  -> assets/htmx.min.js
#   htmx-ext-sse   2.2.4   dist/sse.min.js   -> assets/htmx-ext-sse.min.js
#   @picocss/pico  2.1.1   css/pico.min.css  -> assets/pico.min.css
#
# `npm pack` downloads the tarball from the registry and verifies its integrity;
# everything happens in a temp dir, nothing is installed (no node_modules).
# Usage: bash scripts/vendor-assets.sh   (re-runnable; overwrites the files)
set -euo pipefail

cd "$(dirname "$0")/.."
command -v npm >/dev/null || { echo "vendor-assets: npm is required (apt-get install -y npm)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p assets

# fetch <package@version> <path inside package> <file name under assets/>
fetch() {
	local spec=$1 src=$2 dst=$3 tgz
	tgz=$(cd "$tmp" && npm pack "$spec" --silent | tail -n1)
	tar -xzf "$tmp/$tgz" -C "$tmp" "package/$src"
	cp "$tmp/package/$src" "assets/$dst"
	rm -rf "$tmp/package" "$tmp/$tgz"
	printf '%-22s %-22s -> assets/%s (%s bytes)\n' "$spec" "$src" "$dst" "$(wc -c <"assets/$dst")"
}

fetch htmx.org@2.0.11      dist/htmx.min.js htmx.min.js
fetch htmx-ext-sse@2.2.4   dist/sse.min.js  htmx-ext-sse.min.js
fetch @picocss/pico@2.1.1  css/pico.min.css pico.min.css
