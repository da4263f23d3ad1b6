#!/usr/bin/env bash
# CI: make sure the PostgreSQL server binaries are installed (the tests start and stop a
# throwaway server of their own with initdb and pg_ctl: tests/postgres_server.py).
set -euo pipefail
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql
fi
