#!/usr/bin/env bash
# Brings up a local team server to try: a PostgreSQL server in a folder of its own and bench-web
# on it, taking pushes from bench-run. Stops PostgreSQL again when bench-web exits (Ctrl-C).
#
# Usage: tools/team-server.sh [--dir DIR] [--addr ADDR] [--private]
#   --dir DIR     where the database, its socket and the tokens live
#                 (default /tmp/bench-team-server; kept between starts)
#   --addr ADDR   where bench-web listens (default 127.0.0.1:8080)
#   --private     reads need the read token too
#
# Needs Debian's postgresql package (initdb and pg_ctl under /usr/lib/postgresql/*/bin, or
# BENCH_PG_BIN). As root, PostgreSQL runs as the `postgres` user, so DIR must be a folder that
# user can enter (not under /root).
#
# For an existing PostgreSQL, skip this script:
#   bench-web --db 'postgres://USER@HOST/DB' --tokens-file FILE
set -euo pipefail
cd "$(dirname "$0")/.."

dir=/tmp/bench-team-server
addr=127.0.0.1:8080
private=()
while [ $# -gt 0 ]; do
    case "$1" in
        --dir) dir="$2"; shift 2 ;;
        --addr) addr="$2"; shift 2 ;;
        --private) private=(--private); shift ;;
        -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
        *) printf 'unknown argument %s (see --help)\n' "$1" >&2; exit 2 ;;
    esac
done

bin="${BENCH_PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)}"
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
    printf 'error: PostgreSQL not found; install it (apt-get install -y postgresql) or set BENCH_PG_BIN\n' >&2
    exit 2
fi
as_server_user=()
if [ "$(id -u)" -eq 0 ]; then
    as_server_user=(runuser -u postgres --)
fi

mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
case "$dir" in
    /root|/root/*)
        if [ "$(id -u)" -eq 0 ]; then
            printf 'error: %s is under /root, which the postgres user cannot enter; pass --dir /tmp/...\n' "$dir" >&2
            exit 2
        fi ;;
esac
[ "$(id -u)" -eq 0 ] && chown postgres:postgres "$dir"

if [ ! -d "$dir/pgdata" ]; then
    printf '==> initdb %s/pgdata\n' "$dir" >&2
    "${as_server_user[@]}" "$bin/initdb" -D "$dir/pgdata" -U postgres --auth=trust -E UTF8 \
        --locale=C >/dev/null
fi
options="-k $dir -p 5432 -c listen_addresses=''"
if ! "${as_server_user[@]}" "$bin/pg_ctl" -D "$dir/pgdata" status >/dev/null 2>&1; then
    printf '==> starting PostgreSQL (socket in %s)\n' "$dir" >&2
    "${as_server_user[@]}" "$bin/pg_ctl" -D "$dir/pgdata" -l "$dir/postgres.log" -o "$options" \
        -w start >/dev/null
fi
stop_postgres() {
    printf '==> stopping PostgreSQL\n' >&2
    "${as_server_user[@]}" "$bin/pg_ctl" -D "$dir/pgdata" -m fast -w stop >/dev/null || true
}
trap stop_postgres EXIT

if ! "$bin/psql" -h "$dir" -p 5432 -U postgres -Atc "SELECT 1 FROM pg_database WHERE datname = 'bench'" | grep -q 1; then
    "$bin/createdb" -h "$dir" -p 5432 -U postgres bench
fi

tokens="$dir/tokens"
if [ ! -s "$tokens" ]; then
    umask 077
    {
        printf '# bench-web tokens: SCOPE:SECRET, one per line\n'
        printf 'push:%s\n' "$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
        printf 'read:%s\n' "$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
    } >"$tokens"
fi
push_token="$(sed -n 's/^push://p' "$tokens" | head -n 1)"
read_token="$(sed -n 's/^read://p' "$tokens" | head -n 1)"

printf '==> building bench-web\n' >&2
cargo build --release --quiet -p web --bin bench-web
url="postgres://postgres@localhost/bench?host=$dir&port=5432"
cat >&2 <<EOF

The team server's ledger: $url
Push from a runner or your machine:
  BENCH_PUSH_TOKEN=$push_token bench-run --suite NAME --push http://$addr
  BENCH_PUSH_TOKEN=$push_token bench-run ab --suite NAME --base main --push http://$addr
Gate through it (BENCH_READ_TOKEN is needed with --private):
  BENCH_READ_TOKEN=$read_token bench-run gate --server http://$addr --base main --head latest
Move a local history there:
  bench-run ledger copy --from results/ledger.sqlite --to '$url'
Tokens are in $tokens. Ctrl-C stops bench-web and PostgreSQL.

EOF
target_dir="$(realpath -m "${CARGO_TARGET_DIR:-target}")"
"$target_dir/release/bench-web" --db "$url" --addr "$addr" --tokens-file "$tokens" "${private[@]}"
