set -x
export DATABASE_URL=postgres://postgres@127.0.0.1:5432/test
new() { cd /tmp/clone-b && npx tsx bench/run.ts "$@" --no-write; }
old() { cd /tmp/old8 && NODE_OPTIONS=--conditions=development npx tsx bench/run.ts "$@" --no-write; }
new --db pglite --scenario create,list --duration 8 > /tmp/pl39/new-pglite-1.log 2>&1
old --db pglite --scenario create,list --duration 8 > /tmp/pl39/old-pglite-1.log 2>&1
new --db postgres --scenario lifecycle,webhook-throughput --duration 8 > /tmp/pl39/new-pg-1.log 2>&1
old --db postgres --scenario lifecycle --duration 8 > /tmp/pl39/old-pg-1.log 2>&1
old --db pglite --scenario create,list --duration 8 > /tmp/pl39/old-pglite-2.log 2>&1
new --db pglite --scenario create,list --duration 8 > /tmp/pl39/new-pglite-2.log 2>&1
old --db postgres --scenario lifecycle --duration 8 > /tmp/pl39/old-pg-2.log 2>&1
new --db postgres --scenario lifecycle,webhook-throughput --duration 8 > /tmp/pl39/new-pg-2.log 2>&1
for i in 3 4 5; do new --db postgres --scenario webhook-throughput --duration 8 > /tmp/pl39/new-webhooks-$i.log 2>&1; done
echo finished > /tmp/pl39/done
