set -x
export DATABASE_URL=postgres://postgres@127.0.0.1:5432/test
new() { cd /tmp/clone-b && npx tsx bench/run.ts "$@" --no-write; }
old() { cd /tmp/old8 && NODE_OPTIONS=--conditions=development npx tsx bench/run.ts "$@" --no-write; }
new --db pglite --scenario create,list --duration 8 > /tmp/pl39b/new-pglite-3.log 2>&1
old --db pglite --scenario create,list --duration 8 > /tmp/pl39b/old-pglite-3.log 2>&1
old --db pglite --scenario create,list --duration 8 > /tmp/pl39b/old-pglite-4.log 2>&1
new --db pglite --scenario create,list --duration 8 > /tmp/pl39b/new-pglite-4.log 2>&1
for i in 6 7 8 9 10; do new --db postgres --scenario webhook-throughput --duration 8 > /tmp/pl39b/new-webhooks-$i.log 2>&1; done
echo finished > /tmp/pl39b/done
