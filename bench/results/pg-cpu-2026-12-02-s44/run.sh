#!/bin/bash
# side (baseline|mes) round: fresh db, serve, 10 s create load; prints req/s and ms per create of: server, postgres (all its processes), loadgen+rest, idle
side=$1; r=$2; db=pgcpu_${side}_$r; port=$((3950 + r))
psql -h 127.0.0.1 -U postgres -d test -qc "drop database if exists $db" -c "create database $db" >/dev/null
url=postgres://postgres@127.0.0.1:5432/$db
if [ $side = baseline ]; then
  cd /work/shared/bench; key=$(node baseline/server.mjs --database-url $url --setup | tail -1 | node -pe 'JSON.parse(require("fs").readFileSync(0)).api_key')
  node baseline/server.mjs --database-url $url --port $port > /tmp/pgcpu-$side.log 2>&1 & pid=$!
else
  cd /tmp/clone-a; export DATABASE_URL=$url; node packages/cli/bin/mes.js migrate >/dev/null 2>&1; key=$(node packages/cli/bin/mes.js tenant create --name b --json | tail -1 | node -pe 'JSON.parse(require("fs").readFileSync(0)).api_key')
  node --v8-pool-size=1 --max-semi-space-size=8 packages/cli/bin/mes.js serve --port $port --host 127.0.0.1 > /tmp/pgcpu-$side.log 2>&1 & pid=$!
fi
for i in $(seq 1 50); do curl -s -o /dev/null http://127.0.0.1:$port/functions/v1/health && break; sleep 0.2; done
sleep 1
pgticks() { for p in $(pgrep -u postgres); do awk '{print $14+$15}' /proc/$p/stat 2>/dev/null; done | awk '{s+=$1} END {print s}'; }
idle() { awk '/^cpu /{print $5+$6}' /proc/stat; }
p0=$(pgticks); i0=$(idle)
cd /work/shared/bench && out=$(node load.mjs --url http://127.0.0.1:$port/functions/v1 --key $key --scenario create --pid $pid --duration 10 2>/dev/null)
p1=$(pgticks); i1=$(idle)
echo "$out" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const r=JSON.parse(s);const [side,pg,idle]=process.argv.slice(1);const n=r.requests;console.log(side, r.req_per_s, "srv", (r.server_cpu_pct*r.duration_s*10/n).toFixed(2), "pg", (pg*10/n).toFixed(2), "loadgen", (r.loadgen_cpu_pct*r.duration_s*10/n).toFixed(2), "idle", (idle*10/n).toFixed(2), "non2xx", r.non2xx)})' $side $((p1-p0)) $((i1-i0))
kill $pid; wait $pid 2>/dev/null
psql -h 127.0.0.1 -U postgres -d test -qc "drop database if exists $db" >/dev/null
