#!/bin/bash
# one create run against clone $1 (a|b) on db $2, port $3; prints req/s, server cpu ms/req, rss peak
c=$1; d=$2; port=$3
cd /tmp/clone-$c
DATABASE_URL=postgres://postgres@127.0.0.1:5432/$d NODE_OPTIONS="$XOPTS" node --v8-pool-size=1 --max-semi-space-size=8 packages/cli/bin/mes.js serve --port $port --host 127.0.0.1 > /tmp/ab-serve-$c.log 2>&1 &
pid=$!
for i in $(seq 1 50); do curl -s -o /dev/null http://127.0.0.1:$port/functions/v1/health && break; sleep 0.2; done
key=$(node -e "console.log(require('/tmp/ab-$c.json').api_key)")
cd /work/shared/bench && node load.mjs --url http://127.0.0.1:$port --key $key --scenario ${4:-create} --pid $pid --duration 10 2>/dev/null | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const r=JSON.parse(s);console.log(process.argv[1], r.req_per_s, (r.server_cpu_pct*10/r.req_per_s).toFixed(2), r.server_rss_mb.peak)})' $c
kill $pid; wait $pid 2>/dev/null
