#!/bin/sh
# The stand-in postgres:15 image's entrypoint (docker/build-offline.sh), doing what the
# official image's does with the same variables: on the first start, initdb in $PGDATA with
# $POSTGRES_USER / $POSTGRES_PASSWORD and create $POSTGRES_DB; then the server in the
# foreground, listening on every address, password-checked from other hosts.
set -eu
: "${POSTGRES_USER:=postgres}"
: "${POSTGRES_DB:=$POSTGRES_USER}"
: "${PGDATA:=/var/lib/postgresql/data}"
bin=/usr/lib/postgresql/15/bin

if [ "${1:-postgres}" != postgres ]; then
  exec "$@"
fi
[ $# -gt 0 ] && shift

mkdir -p "$PGDATA" /var/run/postgresql
chown postgres:postgres "$PGDATA" /var/run/postgresql
chmod 700 "$PGDATA"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pwfile=$(mktemp)
  printf '%s\n' "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD}" > "$pwfile"
  chown postgres "$pwfile"
  runuser -u postgres -- "$bin/initdb" -D "$PGDATA" -U "$POSTGRES_USER" --pwfile="$pwfile" \
    -E UTF8 --locale=C --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm -f "$pwfile"
  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
  if [ "$POSTGRES_DB" != postgres ]; then
    echo "CREATE DATABASE \"$POSTGRES_DB\" OWNER \"$POSTGRES_USER\";" |
      runuser -u postgres -- "$bin/postgres" --single -D "$PGDATA" postgres >/dev/null
  fi
fi
# setpriv execs (runuser would stay as PID 1 between docker and the server's signals).
exec setpriv --reuid=postgres --regid=postgres --init-groups "$bin/postgres" -D "$PGDATA" -c listen_addresses='*' "$@"
