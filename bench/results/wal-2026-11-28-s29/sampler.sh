#!/bin/bash
# every 0.2 s: time, WAL LSN (bytes), and active client backends of the bench databases by wait event
while true; do
  psql -h 127.0.0.1 -U postgres -d postgres -qAt -F'|' -c "select extract(epoch from clock_timestamp())::numeric(14,2), pg_wal_lsn_diff(pg_current_wal_lsn(),'0/0')::bigint, coalesce(string_agg(w, ','), '') from (select coalesce(wait_event_type,'CPU')||':'||coalesce(wait_event,'') as w from pg_stat_activity where state='active' and backend_type='client backend' and datname like 'mesbench%') s"
  sleep 0.2
done
