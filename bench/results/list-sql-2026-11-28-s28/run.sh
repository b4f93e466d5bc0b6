#!/usr/bin/env bash
# The database work of one GET /api-jobs?limit=100 (2,000 jobs × 5 parts seeded through mes's API), replayed by
# pgbench: mes's list statement and variants of it, beside the baseline's three statements.
# Usage: run.sh DATABASE_URL TENANT_ID [SECONDS] [REPEATS]
set -euo pipefail
url=$1 tenant=$2 secs=${3:-8} reps=${4:-3}
dir=$(cd "$(dirname "$0")" && pwd)
pgbench=${PGBENCH:-/usr/lib/postgresql/15/bin/pgbench}
jobs=$(psql "$url" -Atc "SELECT '{' || string_agg(id::text, ',') || '}' FROM (SELECT id FROM jobs WHERE deleted_at IS NULL ORDER BY created_at DESC, id DESC LIMIT 100) s")
for r in $(seq "$reps"); do
  for f in baseline mes mes-without-parts mes-without-count mes-parts-unordered mes-columns-not-row mes-parts-grouped-join; do
    for mode in extended prepared; do
      tps=$("$pgbench" -n -M "$mode" -D "tenant_id=$tenant" -D "job_ids=$jobs" -f "$dir/$f.sql" -c 4 -j 2 -T "$secs" "$url" 2>&1 | sed -n 's/^tps = \([0-9.]*\).*/\1/p')
      echo "{\"round\":$r,\"sql\":\"$f\",\"mode\":\"$mode\",\"tps\":$tps}"
    done
  done
done
