#!/bin/bash
# total CPU seconds (user+sys) of PostgreSQL: every live postgres process, plus what the postmaster reaped
pm=$(pgrep -o -x postgres)
tot=0
for p in $(pgrep -x postgres); do
  read -r -a f < /proc/$p/stat 2>/dev/null || continue
  tot=$((tot + f[13] + f[14]))
  [ "$p" = "$pm" ] && tot=$((tot + f[15] + f[16]))
done
echo $tot
