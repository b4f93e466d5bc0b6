#!/usr/bin/env bash
# Issue 7's targets measured against 8cd7312 (the main of the issue) rather than against the hand-written baseline:
# PGlite create and list (≥ 2× its req/s) and lifecycle cycles/s on PostgreSQL (≥ 2×), each in the project's bench
# on this machine in one run, this checkout and 8cd7312 alternating; then webhook deliveries/s on PostgreSQL
# (≥ 2,000) in more runs of this checkout alone. Logs go to OUT, one per run (bench/RESULTS.md quotes them).
#   OUT=/tmp/against bench/against-8cd7312.sh          (DATABASE_URL defaults to the local PostgreSQL's test)
# Knobs: OLD (the worktree of 8cd7312, made and installed when missing; default /tmp/mes-8cd7312),
# DURATION (s per scenario, 8), WEBHOOK_RUNS (more webhook runs after the two pairs, 3). Build this checkout first.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:?OUT: the directory for the logs}
old=${OLD:-/tmp/mes-8cd7312}
duration=${DURATION:-8}
export DATABASE_URL=${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}
mkdir -p "$out"
if [ ! -d "$old" ]; then
  git -C "$root" worktree add -f "$old" 8cd7312
  (cd "$old" && npx -y pnpm@10.20.0 install --frozen-lockfile --offline)
fi

# run SIDE DB SCENARIOS LOG: 8cd7312 had no build, so its sources run through the development condition
run() {
  local dir=$root conditions=""
  if [ "$1" = old ]; then dir=$old conditions=--conditions=development; fi
  echo "[$(date +%T)] $1 $2 $3 → $out/$4.log"
  (cd "$dir" && NODE_OPTIONS=$conditions npx tsx bench/run.ts --db "$2" --scenario "$3" --duration "$duration" --no-write) > "$out/$4.log" 2>&1
}

# two pairs, the second in the other order
run new pglite create,list new-pglite-1
run old pglite create,list old-pglite-1
run new postgres lifecycle,webhook-throughput new-pg-1
run old postgres lifecycle old-pg-1
run old pglite create,list old-pglite-2
run new pglite create,list new-pglite-2
run old postgres lifecycle old-pg-2
run new postgres lifecycle,webhook-throughput new-pg-2
for i in $(seq 3 $((2 + ${WEBHOOK_RUNS:-3}))); do run new postgres webhook-throughput "new-webhooks-$i"; done
(cd "$out" && grep -E "^\| (create|list|lifecycle) \| (pglite|postgres) \| [0-9]|deliveries/s \(received\)" ./*.log)
