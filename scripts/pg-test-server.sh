#!/usr/bin/env bash
# Start (or reuse) a throwaway PostgreSQL server for drivelab's database tests.
#
# - Installs Debian's `postgresql` package when no server binaries are found (needs root).
# - Keeps one cluster under $DRIVELAB_PG_DIR (default /tmp/drivelab-pg-test), listening on
#   127.0.0.1 only, on the first free port from 54329 up; the unix socket lives in that
#   directory too. Host logins need a password (scram-sha-256); local socket logins are trusted.
# - Creates the role and database `drivelab_test` (password `drivelab_test_pw`).
# - Idempotent: a second call finds the running server and reuses it.
# - Progress goes to stderr; the last line on stdout is
#     export DRIVELAB_TEST_PG_URL=postgres://drivelab_test:drivelab_test_pw@127.0.0.1:PORT/drivelab_test
#
# Usage: eval "$(bash scripts/pg-test-server.sh)"
#        bash scripts/pg-test-server.sh --stop     # stop the server (data is kept)
set -euo pipefail

STATE_DIR="${DRIVELAB_PG_DIR:-/tmp/drivelab-pg-test}"
DATA_DIR="$STATE_DIR/data"
DB_NAME=drivelab_test
DB_USER=drivelab_test
DB_PASSWORD=drivelab_test_pw
FIRST_PORT=54329
LAST_PORT=54399

log() { echo "pg-test-server: $*" >&2; }
die() { log "error: $*"; exit 1; }

find_bindir() {
    local dir
    dir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
    if [[ -n "$dir" && -x "$dir/initdb" && -x "$dir/pg_ctl" ]]; then
        echo "$dir"
    elif command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
        dirname "$(command -v pg_ctl)"
    fi
}

BINDIR="$(find_bindir)"
if [[ -z "$BINDIR" ]]; then
    [[ $EUID -eq 0 ]] || die "PostgreSQL is not installed and installing it needs root (apt-get install postgresql)"
    log "installing Debian's postgresql package"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq --no-install-recommends postgresql >&2
    BINDIR="$(find_bindir)"
    [[ -n "$BINDIR" ]] || die "postgresql was installed but initdb/pg_ctl were not found"
fi

# Root runs the server as the `postgres` user (the server refuses to run as root);
# anyone else runs it as themselves.
if [[ $EUID -eq 0 ]]; then
    id postgres >/dev/null 2>&1 || die "the postgres system user is missing"
    RUN_AS=(runuser -u postgres --)
    OWNER=postgres
else
    RUN_AS=()
    OWNER="$(id -un)"
fi
as_owner() { (cd "$STATE_DIR" && "${RUN_AS[@]}" "$@"); }

mkdir -p "$STATE_DIR"
chown "$OWNER" "$STATE_DIR"
chmod 700 "$STATE_DIR"

# Several test processes may call this at once: one at a time.
exec 9>"$STATE_DIR.lock"
flock 9

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

server_running() { [[ -f "$DATA_DIR/postmaster.pid" ]] && as_owner "$BINDIR/pg_ctl" -D "$DATA_DIR" status >/dev/null 2>&1; }

psql_super() { as_owner "$BINDIR/psql" -h "$STATE_DIR" -p "$PORT" -U postgres -d postgres -v ON_ERROR_STOP=1 -qtA "$@"; }

if [[ "${1:-}" == "--stop" ]]; then
    if server_running; then
        as_owner "$BINDIR/pg_ctl" -D "$DATA_DIR" -w stop -m fast >/dev/null
        log "stopped"
    else
        log "not running"
    fi
    exit 0
fi

if [[ ! -f "$DATA_DIR/PG_VERSION" ]]; then
    log "creating a cluster in $DATA_DIR"
    rm -rf "$DATA_DIR"
    pwfile="$STATE_DIR/superuser.pw"
    echo "postgres" > "$pwfile"
    chown "$OWNER" "$pwfile"
    as_owner "$BINDIR/initdb" -D "$DATA_DIR" -U postgres --pwfile="$pwfile" \
        --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8 >/dev/null
    rm -f "$pwfile"
    cat >> "$DATA_DIR/postgresql.conf" <<EOF
# drivelab test server
listen_addresses = '127.0.0.1'
unix_socket_directories = '$STATE_DIR'
max_connections = 100
fsync = off
synchronous_commit = off
full_page_writes = off
EOF
fi

if server_running; then
    PORT="$(cat "$STATE_DIR/port")"
    log "reusing the server running on 127.0.0.1:$PORT"
else
    PORT=""
    for ((p = FIRST_PORT; p <= LAST_PORT; p++)); do
        port_in_use "$p" && continue
        log "starting the server on 127.0.0.1:$p"
        if as_owner "$BINDIR/pg_ctl" -D "$DATA_DIR" -l "$STATE_DIR/server.log" -w -t 60 \
            -o "-p $p" start >/dev/null 9>&-; then  # the server must not inherit the lock
            PORT="$p"
            break
        fi
        log "could not start on port $p (see $STATE_DIR/server.log); trying the next one"
    done
    [[ -n "$PORT" ]] || die "no free port in $FIRST_PORT..$LAST_PORT, or the server fails to start (see $STATE_DIR/server.log)"
    echo "$PORT" > "$STATE_DIR/port"
fi

if [[ "$(psql_super -c "SELECT 1 FROM pg_roles WHERE rolname = '$DB_USER'")" != 1 ]]; then
    log "creating role $DB_USER"
    psql_super -c "CREATE ROLE $DB_USER LOGIN PASSWORD '$DB_PASSWORD'"
fi
if [[ "$(psql_super -c "SELECT 1 FROM pg_database WHERE datname = '$DB_NAME'")" != 1 ]]; then
    log "creating database $DB_NAME"
    psql_super -c "CREATE DATABASE $DB_NAME OWNER $DB_USER"
fi

echo "export DRIVELAB_TEST_PG_URL=postgres://$DB_USER:$DB_PASSWORD@127.0.0.1:$PORT/$DB_NAME"
