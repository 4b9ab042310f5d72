#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the PostgreSQL tests and benchmarks.
#
#   scripts/postgres-cluster.sh start DIR   # initdb in DIR, start on a socket in DIR; prints the URL
#   scripts/postgres-cluster.sh stop DIR    # stops it (the folder stays until you delete it)
#
# With MODELSTORE_POSTGRES_TLS=1 the cluster also listens on localhost's TCP port with TLS on: a
# certificate authority and a server certificate for "localhost" are made in DIR/tls (ca.crt is
# what a client trusts), for the TLS tests.
#
# PostgreSQL refuses to run as root: as root, the cluster runs as the `postgres` user that
# Debian's package creates. Installs Debian's `postgresql` when no server is found.
set -euo pipefail
command="${1:?start or stop}"
dir="${2:?a folder for the cluster}"
port="${MODELSTORE_POSTGRES_PORT:-54329}"

bindir=""
for candidate in /usr/lib/postgresql/*/bin; do
    if [ -x "$candidate/initdb" ]; then bindir="$candidate"; fi
done
if [ -z "$bindir" ] && [ "$command" = start ]; then
    echo "No PostgreSQL server found: installing Debian's postgresql" >&2
    SUDO=""
    if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
    $SUDO apt-get update -q >&2
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q postgresql >&2
    for candidate in /usr/lib/postgresql/*/bin; do
        if [ -x "$candidate/initdb" ]; then bindir="$candidate"; fi
    done
fi
[ -n "$bindir" ] || { echo "no PostgreSQL server binaries" >&2; exit 1; }

as_owner() {
    if [ "$(id -u)" = "0" ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

case "$command" in
start)
    mkdir -p "$dir"
    if [ "$(id -u)" = "0" ]; then chown postgres "$dir"; fi
    if [ ! -f "$dir/data/PG_VERSION" ]; then
        as_owner "$bindir/initdb" -D "$dir/data" -U modelstore --auth=trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
            || { cat "$dir/initdb.log" >&2; exit 1; }
    fi
    # fsync off: a throwaway cluster for tests; a crash loses it, which is fine here.
    if as_owner "$bindir/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
        echo "postgres://modelstore@localhost:$port/modelstore?host=$dir"
        exit 0
    fi
    listen="-c listen_addresses=''"
    if [ "${MODELSTORE_POSTGRES_TLS:-0}" = "1" ]; then
        tls="$dir/tls"
        if [ ! -f "$tls/server.crt" ]; then
            as_owner mkdir -p "$tls"
            as_owner openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=ModelStore test CA" \
                -keyout "$tls/ca.key" -out "$tls/ca.crt" >/dev/null 2>&1
            as_owner openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" \
                -keyout "$tls/server.key" -out "$tls/server.csr" >/dev/null 2>&1
            printf 'subjectAltName=DNS:localhost\n' | as_owner tee "$tls/san.ext" >/dev/null
            as_owner openssl x509 -req -in "$tls/server.csr" -CA "$tls/ca.crt" -CAkey "$tls/ca.key" -CAcreateserial \
                -days 2 -extfile "$tls/san.ext" -out "$tls/server.crt" >/dev/null 2>&1
            as_owner chmod 600 "$tls/server.key"
            chmod 755 "$dir" "$tls" 2>/dev/null || true
        fi
        listen="-c listen_addresses=localhost -c ssl=on -c ssl_cert_file=$tls/server.crt -c ssl_key_file=$tls/server.key"
    fi
    as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
        -o "-k $dir -p $port $listen -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=400" \
        start >&2
    as_owner "$bindir/createdb" -h "$dir" -p "$port" -U modelstore modelstore 2>/dev/null || true
    echo "postgres://modelstore@localhost:$port/modelstore?host=$dir"
    ;;
stop)
    as_owner "$bindir/pg_ctl" -D "$dir/data" -m fast stop >&2 || true
    ;;
restart)
    as_owner "$bindir/pg_ctl" -D "$dir/data" -m fast -w restart >&2
    ;;
*)
    echo "start, stop or restart" >&2
    exit 2
    ;;
esac
