#!/usr/bin/env bash
# The full test suite: bash scripts/test.sh [packages] [go test flags]
#
#   bash scripts/test.sh                     # every step below, all packages
#   bash scripts/test.sh -run TestRuns       # extra flags go to `go test`
#   bash scripts/test.sh ./store/ -run Claim # packages first replace ./...
#
# Needs Go and bash (and gcc for the race step). As root on Debian/Ubuntu it
# installs what is missing with apt (postgresql, chromium). It starts a
# throwaway PostgreSQL cluster (scripts/pg.sh) exported as TEST_DATABASE_URL,
# points CHROME_PATH at Chromium for the browser tests, and runs these steps:
#   vet    go vet ./...
#   templ  the generated views/*_templ.go match their .templ sources
#          (templ generate -check, which writes nothing), and no *_templ.go
#          is left without its .templ
#   test   go test -v over all packages (CGO_ENABLED=0), SQLite and PostgreSQL
#   race   go test -race ./engine/ ./store/ ./handlers/ (CGO_ENABLED=1), on
#          SQLite and PostgreSQL
# With arguments only the test step runs, on what they name. Every step runs
# even when an earlier one failed; each failed step is named before the
# summary line of the test step:
#   tests: N passed, M failed
# The exit status is non-zero if any step failed.
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
if ((!$#)); then
	command -v "${CC:-gcc}" >/dev/null 2>&1 || missing+=(gcc) # the race step needs cgo
fi

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
	if ((!$#)) && ! command -v "${CC:-gcc}" >/dev/null 2>&1; then
		echo "test.sh: gcc still missing after install" >&2
		exit 1
	fi
fi
export CHROME_PATH

# ---- throwaway PostgreSQL ---------------------------------------------------

log=$(mktemp "${TMPDIR:-/tmp}/tribunal-test.XXXXXX")
racelog=$(mktemp "${TMPDIR:-/tmp}/tribunal-race.XXXXXX")
cleanup() {
	pg_down
	rm -f "$log" "$racelog"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

PG_DB=tribunal_test
pg_up || { echo "test.sh: could not start PostgreSQL" >&2; exit 1; }
export TEST_DATABASE_URL

# ---- steps ------------------------------------------------------------------

pkgs=(./...)
all_steps=1
if (($#)); then
	all_steps=
	if [[ $1 != -* ]]; then
		pkgs=()
	fi
fi

failed_steps=()
step_times=()
# step NAME CMD...: runs CMD, records NAME as failed if it fails and how long it took.
step() {
	local name=$1 start=$SECONDS rc=0
	shift
	echo "test.sh: ---- $name: $*" >&2
	"$@" || rc=$?
	step_times+=("$name $((SECONDS - start))s")
	if ((rc)); then
		failed_steps+=("$name")
		echo "test.sh: ---- $name FAILED (exit $rc)" >&2
	fi
	return 0
}

# templ_check fails if a generated *_templ.go differs from what its .templ
# gives, or has no .templ. -keep-orphaned-files: templ would delete those.
templ_check() {
	local rc=0 f
	go tool templ generate -check -keep-orphaned-files -log-level error || rc=1
	while IFS= read -r f; do
		if [[ ! -e ${f%_templ.go}.templ ]]; then
			echo "templ: $f has no ${f%_templ.go}.templ (delete it, or restore its source)" >&2
			rc=1
		fi
	done < <(find . -path ./.git -prune -o -name '*_templ.go' -print)
	if ((rc)); then
		echo "templ: run \`go tool templ generate\` and commit the result" >&2
	fi
	return "$rc"
}

# go_test runs the whole suite verbosely into $log.
go_test() {
	go test -count=1 -v -timeout 30m "${pkgs[@]}" "$@" 2>&1 | tee "$log"
	return "${PIPESTATUS[0]}"
}

# race runs the packages with the most goroutines under the race detector
# (needs cgo). Without -v: its output is failures and data race reports only.
race() {
	CGO_ENABLED=1 go test -race -count=1 -timeout 30m ./engine/ ./store/ ./handlers/ 2>&1 | tee "$racelog"
	return "${PIPESTATUS[0]}"
}

echo "test.sh: $(go version); CHROME_PATH=$CHROME_PATH" >&2
if [[ -n $all_steps ]]; then
	step vet go vet ./...
	step templ templ_check
fi
step test go_test "$@"
if [[ -n $all_steps ]]; then
	step race race
fi

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
if [[ -s $racelog ]]; then
	races=$(grep -c '^WARNING: DATA RACE' "$racelog" || true)
	racefail=$(grep -cE '^[[:space:]]*--- FAIL: ' "$racelog" || true)
	echo "race: $racefail tests failed, $races data races reported"
fi
(IFS=,; echo "steps: ${step_times[*]}")
for s in "${failed_steps[@]}"; do
	case $s in
	vet) echo "step failed: vet (go vet ./... reported problems; see above)" ;;
	templ) echo "step failed: templ (generated views out of date: run \`go tool templ generate\`)" ;;
	test) echo "step failed: test (go test)" ;;
	race) echo "step failed: race (go test -race ./engine/ ./store/ ./handlers/)" ;;
	esac
done
echo "tests: $passed passed, $failed failed"
((${#failed_steps[@]} == 0))
