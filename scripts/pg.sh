# shellcheck shell=bash
# Throwaway PostgreSQL cluster for tests and local development.
#
#   source scripts/pg.sh
#   pg_up                 # starts a cluster, creates $PG_DB (default tribunal_test),
#                         # exports TEST_DATABASE_URL (and PGTMP, PG_PORT)
#   psql "$TEST_DATABASE_URL" -c 'select 1'
#   pg_down               # stops the cluster and deletes its directory (idempotent)
#
# The cluster lives in a mktemp dir with its Unix socket there too (-k "$PGTMP"),
# because /var/run/postgresql may be missing or unwritable on a fresh machine.
# It listens on 127.0.0.1 on a random free port, trust auth, fsync off.
# As root, the server runs as the `postgres` user (created if missing; PostgreSQL
# refuses to run as root); otherwise it runs as the current user.
# Overrides: PGBIN (directory holding initdb/pg_ctl), PG_DB (database name).
#
# This file is meant to be sourced; it does not change the caller's shell options.

# _pg_find_bin sets PGBIN to the newest /usr/lib/postgresql/*/bin holding initdb.
_pg_find_bin() {
	if [[ -n ${PGBIN:-} && -x $PGBIN/initdb ]]; then
		return 0
	fi
	local d
	d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1) || true
	if [[ -n $d && -x $d/initdb ]]; then
		PGBIN=$d
		return 0
	fi
	if command -v initdb >/dev/null 2>&1; then
		PGBIN=$(dirname "$(command -v initdb)")
		return 0
	fi
	return 1
}

# pg_ensure_bin finds the PostgreSQL server binaries, installing them with apt
# when running as root.
pg_ensure_bin() {
	_pg_find_bin && return 0
	if [[ $(id -u) -ne 0 ]]; then
		echo "pg.sh: PostgreSQL server binaries (initdb, pg_ctl) not found." >&2
		echo "pg.sh: install them, e.g.: sudo apt-get install -y postgresql   (or set PGBIN)" >&2
		return 1
	fi
	echo "pg.sh: installing postgresql with apt-get ..." >&2
	DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 &&
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2 || return 1
	_pg_find_bin || { echo "pg.sh: initdb still not found after install" >&2; return 1; }
}

# _pg_as runs a command as the cluster owner, from inside $PGTMP (avoids
# "could not change directory to /root").
_pg_as() {
	if [[ $(id -u) -eq 0 ]]; then
		(cd "$PGTMP" && runuser -u postgres -- "$@")
	else
		(cd "$PGTMP" && "$@")
	fi
}

# _pg_port_free succeeds if nothing accepts connections on 127.0.0.1:$1.
_pg_port_free() {
	! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# pg_up starts the cluster and creates the database; see the header comment.
pg_up() {
	local db=${1:-${PG_DB:-tribunal_test}}
	if [[ -n ${PGTMP:-} && -d ${PGTMP:-} ]]; then
		echo "pg.sh: a cluster is already running in $PGTMP (call pg_down first)" >&2
		return 1
	fi
	pg_ensure_bin || return 1

	if [[ $(id -u) -eq 0 ]] && ! id -u postgres >/dev/null 2>&1; then
		useradd --system --user-group --home-dir /nonexistent --shell /usr/sbin/nologin postgres || return 1
	fi

	PGTMP=$(mktemp -d "${TMPDIR:-/tmp}/pgci.XXXXXX") || return 1
	export PGTMP
	if [[ $(id -u) -eq 0 ]]; then
		chown postgres: "$PGTMP" || { pg_down; return 1; }
	fi

	if ! _pg_as "$PGBIN/initdb" -D "$PGTMP/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 \
		>"$PGTMP/initdb.log" 2>&1; then
		echo "pg.sh: initdb failed:" >&2
		cat "$PGTMP/initdb.log" >&2
		pg_down
		return 1
	fi

	local attempt port started=
	for attempt in 1 2 3 4 5 6 7 8; do
		port=$(shuf -i 20000-60999 -n 1)
		_pg_port_free "$port" || continue
		if _pg_as "$PGBIN/pg_ctl" -D "$PGTMP/data" -l "$PGTMP/server.log" -w -t 30 \
			-o "-c listen_addresses=127.0.0.1 -p $port -k $PGTMP -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
			start >/dev/null; then
			started=1
			break
		fi
		echo "pg.sh: start on port $port failed (attempt $attempt), retrying" >&2
	done
	if [[ -z $started ]]; then
		echo "pg.sh: could not start PostgreSQL; server log:" >&2
		tail -n 30 "$PGTMP/server.log" >&2 2>/dev/null
		pg_down
		return 1
	fi

	if ! _pg_as "$PGBIN/createdb" -h 127.0.0.1 -p "$port" -U postgres "$db"; then
		echo "pg.sh: createdb $db failed" >&2
		pg_down
		return 1
	fi

	export PG_PORT=$port
	export TEST_DATABASE_URL="postgres://postgres@127.0.0.1:$port/$db?sslmode=disable"
	echo "pg.sh: PostgreSQL $("$PGBIN/postgres" -V | awk '{print $3}') up: $TEST_DATABASE_URL (dir $PGTMP)" >&2
}

# pg_down stops the cluster and removes its directory. Safe to call twice.
pg_down() {
	[[ -n ${PGTMP:-} ]] || return 0
	if [[ -f $PGTMP/data/postmaster.pid ]]; then
		_pg_as "$PGBIN/pg_ctl" -D "$PGTMP/data" -m fast -w -t 30 stop >/dev/null 2>&1 ||
			echo "pg.sh: pg_ctl stop failed for $PGTMP" >&2
	fi
	rm -rf "$PGTMP"
	unset PGTMP PG_PORT TEST_DATABASE_URL
}
