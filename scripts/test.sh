#!/usr/bin/env bash
# The full test suite: bash scripts/test.sh [packages] [go test flags]
#
#   bash scripts/test.sh                     # all packages (./...)
#   bash scripts/test.sh -run TestRuns       # extra flags go to `go test`
#   bash scripts/test.sh ./store/ -run Claim # packages first replace ./...
#
# Needs Go and bash. As root on Debian/Ubuntu it installs what is missing with
# apt (postgresql, chromium). It starts a throwaway PostgreSQL cluster
# (scripts/pg.sh) exported as TEST_DATABASE_URL, points CHROME_PATH at Chromium
# for the browser tests, runs `go test -v`, and ends with one summary line:
#   tests: N passed, M failed
# The exit status is go test's.
set -euo pipefail

cd "$(dirname "$0")/.."
export CGO_ENABLED=0

if ! command -v go >/dev/null 2>&1 && [[ -x /usr/local/go/bin/go ]]; then
	export PATH=$PATH:/usr/local/go/bin
fi
command -v go >/dev/null 2>&1 || { echo "test.sh: go not found on PATH" >&2; exit 1; }

# ---- tools: PostgreSQL server binaries and Chromium -------------------------

source scripts/pg.sh

: "${CHROME_PATH:=/usr/bin/chromium}"

missing=()
_pg_find_bin || missing+=(postgresql)
[[ -x $CHROME_PATH ]] || missing+=(chromium)

if ((${#missing[@]})); then
	if [[ $(id -u) -ne 0 ]]; then
		echo "test.sh: missing: ${missing[*]}" >&2
		echo "test.sh: install with:  sudo apt-get install -y ${missing[*]}" >&2
		echo "test.sh: (or set PGBIN to a PostgreSQL bin dir / CHROME_PATH to a Chromium binary)" >&2
		echo "test.sh: to run only the tests that need neither: CGO_ENABLED=0 go test ./..." >&2
		exit 1
	fi
	if ! command -v apt-get >/dev/null 2>&1; then
		echo "test.sh: missing ${missing[*]} and apt-get is not available; install them by hand" >&2
		exit 1
	fi
	echo "test.sh: installing ${missing[*]} with apt-get (chromium takes about a minute) ..." >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq "${missing[@]}" >/dev/null
	_pg_find_bin || { echo "test.sh: PostgreSQL binaries still missing after install" >&2; exit 1; }
	[[ -x $CHROME_PATH ]] || { echo "test.sh: $CHROME_PATH still missing after install" >&2; exit 1; }
fi
export CHROME_PATH

# ---- throwaway PostgreSQL ---------------------------------------------------

log=$(mktemp "${TMPDIR:-/tmp}/tribunal-test.XXXXXX")
cleanup() {
	pg_down
	rm -f "$log"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

PG_DB=tribunal_test
pg_up || { echo "test.sh: could not start PostgreSQL" >&2; exit 1; }
export TEST_DATABASE_URL

# ---- go test ----------------------------------------------------------------

pkgs=(./...)
if (($#)) && [[ $1 != -* ]]; then
	pkgs=()
fi

echo "test.sh: $(go version); CHROME_PATH=$CHROME_PATH" >&2
set +e
go test -count=1 -v -timeout 30m "${pkgs[@]}" "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e

passed=$(grep -cE '^[[:space:]]*--- PASS: ' "$log" || true)
failed=$(grep -cE '^[[:space:]]*--- FAIL: ' "$log" || true)
skipped=$(grep -cE '^[[:space:]]*--- SKIP: ' "$log" || true)
broken=$(grep -E '^FAIL[[:space:]].*\[(build|setup) failed\]' "$log" || true)

echo
if [[ -n $broken ]]; then
	echo "packages that did not build:"
	echo "$broken"
fi
if ((skipped)); then
	echo "skipped: $skipped"
fi
echo "tests: $passed passed, $failed failed"
exit "$rc"
