#!/usr/bin/env bash
# The forty-eighth sitting: webhook-throughput runs alternating between 9087145 (before the webhook work of the
# forty-sixth and forty-seventh sittings; `git worktree add -f /tmp/mes-9087145 9087145` and a pnpm install there)
# and a clean clone of fa03572 at /tmp/clone-a, in pairs whose order alternates. Logs: <side>-<pair>.log.
export DATABASE_URL=postgres://postgres@127.0.0.1:5432/test
out=/tmp/wh; mkdir -p $out
for i in 1 2 3 4; do
  for side in old new; do
    dir=/tmp/clone-a; [ $side = old ] && dir=/tmp/mes-9087145
    if [ $((i % 2)) = 0 ]; then if [ $side = old ]; then dir=/tmp/clone-a; s=new; else dir=/tmp/mes-9087145; s=old; fi; else s=$side; fi
    (cd $dir && npx tsx bench/run.ts --db postgres --scenario webhook-throughput --duration 8 --no-write) > $out/$s-$i.log 2>&1
    echo "$s $i $(grep -o 'round 1: [0-9.]* deliveries/s (received).*steady [0-9.]*/s' $out/$s-$i.log)"
  done
done
