#!/bin/bash
# $1: the checkout whose bin serves; two tenants X1, X2 whose receivers never answer, then Y (the s46 run.mjs)
here=$(cd "$(dirname "$0")" && pwd)
cd "$1"
psql -q -h 127.0.0.1 -U postgres -d postgres -c "drop database if exists scratch" -c "create database scratch" 2>&1 | grep -v NOTICE
export DATABASE_URL=postgres://postgres@127.0.0.1:5432/scratch
node packages/cli/bin/mes.js migrate > /dev/null
key() { node packages/cli/bin/mes.js tenant create --name "$1" --json | node -pe 'JSON.parse(require("fs").readFileSync(0)).api_key'; }
KX1=$(key X1); KX2=$(key X2); KY=$(key Y)
node packages/cli/bin/mes.js serve --port 7401 --host 127.0.0.1 > /tmp/fair-serve.log 2>&1 &
pid=$!
for i in $(seq 50); do curl -s -o /dev/null http://127.0.0.1:7401/functions/v1/health && break; sleep 0.2; done
node "$here/../webhook-fairness-2026-12-02-s46/run.mjs" http://127.0.0.1:7401/functions/v1 $KX1 $KX2 $KY
kill $pid; wait $pid 2>/dev/null
