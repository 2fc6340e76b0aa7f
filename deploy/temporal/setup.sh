#!/bin/sh
# Sets Temporal up on PostgreSQL for Switchboard, in two steps:
#   setup.sh schema     creates the two databases and brings their schemas to this release's latest
#                       (before the server starts; safe to run again, and after an upgrade)
#   setup.sh namespace  waits for the server, creates the namespace with its retention and registers
#                       Switchboard's search attributes (safe to run again)
# One script for both places that run it, so they cannot drift apart: docker-compose.yml runs it in
# the temporalio/admin-tools image; the cluster tests and benchmarks (bin/support/temporal-server.ts)
# run it here with the binaries built from the same release on PATH. The variables are the server
# image's own (DB, DB_PORT, POSTGRES_SEEDS, POSTGRES_USER, POSTGRES_PWD, DBNAME, VISIBILITY_DBNAME),
# plus TEMPORAL_ADDRESS, NAMESPACE, NAMESPACE_RETENTION and SEARCH_ATTRIBUTES (NAME=Type, space-separated).
# POSIX sh: the admin-tools image has busybox, not bash.
set -eu

step=${1:-}
: "${DB:=postgres12}"
: "${DB_PORT:=5432}"
: "${POSTGRES_SEEDS:?POSTGRES_SEEDS: the PostgreSQL host}"
: "${POSTGRES_USER:?POSTGRES_USER: the PostgreSQL user}"
: "${POSTGRES_PWD:=}"
: "${DBNAME:=temporal}"
: "${VISIBILITY_DBNAME:=temporal_visibility}"

sql_tool() {
  temporal-sql-tool --plugin "$DB" --endpoint "$POSTGRES_SEEDS" --port "$DB_PORT" \
    --user "$POSTGRES_USER" --password "$POSTGRES_PWD" "$@"
}

case "$step" in
schema)
  for pair in "$DBNAME:postgresql/v12/temporal" "$VISIBILITY_DBNAME:postgresql/v12/visibility"; do
    database=${pair%%:*}
    schema=${pair#*:}
    echo "temporal setup: database $database, schema $schema"
    sql_tool --database "$database" create-database
    sql_tool --database "$database" setup-schema --version 0.0
    sql_tool --database "$database" update-schema --schema-name "$schema"
  done
  ;;
namespace)
  : "${TEMPORAL_ADDRESS:?TEMPORAL_ADDRESS: host:port of the Temporal frontend}"
  : "${NAMESPACE:=default}"
  : "${NAMESPACE_RETENTION:=72h}"
  : "${SEARCH_ATTRIBUTES:?SEARCH_ATTRIBUTES: NAME=Type pairs, space-separated}"
  tries=0
  until temporal operator cluster health --address "$TEMPORAL_ADDRESS" >/dev/null 2>&1; do
    tries=$((tries + 1))
    if [ "$tries" -ge 120 ]; then
      echo "temporal setup: no Temporal server answered at $TEMPORAL_ADDRESS within 60 s" >&2
      exit 1
    fi
    sleep 0.5
  done
  if temporal operator namespace describe --address "$TEMPORAL_ADDRESS" --namespace "$NAMESPACE" >/dev/null 2>&1; then
    echo "temporal setup: namespace $NAMESPACE exists"
  else
    echo "temporal setup: creating namespace $NAMESPACE (retention $NAMESPACE_RETENTION)"
    temporal operator namespace create --address "$TEMPORAL_ADDRESS" --namespace "$NAMESPACE" --retention "$NAMESPACE_RETENTION"
  fi
  set --
  for attribute in $SEARCH_ATTRIBUTES; do
    set -- "$@" --name "${attribute%%=*}" --type "${attribute#*=}"
  done
  echo "temporal setup: search attributes $SEARCH_ATTRIBUTES"
  # A new namespace reaches the server's namespace cache within seconds; until then this is refused.
  tries=0
  until temporal operator search-attribute create --address "$TEMPORAL_ADDRESS" --namespace "$NAMESPACE" "$@"; do
    tries=$((tries + 1))
    if [ "$tries" -ge 60 ]; then
      echo "temporal setup: could not register the search attributes within 30 s" >&2
      exit 1
    fi
    sleep 0.5
  done
  ;;
*)
  echo "usage: setup.sh schema | namespace" >&2
  exit 2
  ;;
esac
