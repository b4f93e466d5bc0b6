// Batch writes through the compiled `mes serve` (issue 7 item 2): the requests per second of add-operations, a PATCH
// to ready, start and stop (with the operator's time shared out), each over 400 batches of 4 operations sent 16 at a
// time, on a freshly migrated PostgreSQL database of its own. Black-box over HTTP, so the same file times any build:
// copy it into another checkout's bench/ to compare.
//
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/batch-moves.ts [rounds=3]
import { psql, startMes, tenantDatabase } from "./lib/mes-serve.ts"

const admin = process.env.DATABASE_URL
if (admin === undefined) throw new Error("set DATABASE_URL (a PostgreSQL server; the bench creates and drops its databases)")
const rounds = Number(process.argv[2] ?? 3)
const BATCHES = 400
const CONCURRENCY = 16

/** Runs `send` for each item, `CONCURRENCY` at a time; answers requests per second. Every answer must be 2xx. */
const timed = async <A>(items: ReadonlyArray<A>, send: (item: A) => Promise<Response>) => {
  let next = 0
  const t0 = performance.now()
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < items.length) {
      const item = items[next++]!
      const res = await send(item)
      const text = await res.text()
      if (res.status >= 300) throw new Error(`${res.status} ${text.slice(0, 300)}`)
    }
  }))
  return Math.round((items.length / (performance.now() - t0)) * 1000 * 10) / 10
}

const round = async (k: number) => {
  const name = `mes_batch_bench_${process.pid}_${k}`
  const { env, tenant } = tenantDatabase(admin, name, ["--name", "Bench", "--plan", "enterprise"])
  const { stop, url } = await startMes(env)
  try {
    const call = (method: string, path: string, body?: unknown) =>
      fetch(`${url}${path}`, {
        method,
        headers: { authorization: `Bearer ${tenant.api_key}`, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
    const json = async (res: Response) => ((await res.json()) as { data: any }).data
    const cell = (await json(await call("POST", "/api-cells", { name: "Laser" }))).cell.id as string
    const operator = (await json(await call("POST", "/api-profiles", { display_name: "Olga" }))).profile.id as string
    await json(await call("POST", "/api-jobs/bulk-sync", {
      items: Array.from({ length: BATCHES }, (_, j) => ({
        external_id: `J${j}`,
        external_source: "erp",
        job_number: `J-${j}`,
        parts: [{ external_id: `J${j}-P`, part_number: "P", quantity: 1, operations: [0, 1, 2, 3].map((o) => ({ external_id: `J${j}-O${o}`, operation_name: `Op ${o}`, sequence: o + 1, estimated_time_minutes: 10 * (o + 1) })) }]
      }))
    }))
    const ops: Array<{ id: string; part_id: string; sequence: number }> = []
    for (let offset = 0; offset < BATCHES * 4; offset += 1000) {
      ops.push(...(await json(await call("GET", `/api-operations?limit=1000&offset=${offset}&sort=created_at`))).operations)
    }
    const byPart = new Map<string, Array<string>>()
    for (const o of [...ops].sort((a, b) => a.sequence - b.sequence)) byPart.set(o.part_id, [...(byPart.get(o.part_id) ?? []), o.id])
    const batches: Array<{ id: string; ops: Array<string> }> = []
    for (const [i, opIds] of [...byPart.values()].entries()) {
      const b = (await json(await call("POST", "/api-batches", { batch_number: `B-${i}`, cell_id: cell, operation_ids: opIds.slice(0, 2) }))).batch
      batches.push({ id: b.id, ops: opIds })
    }
    const add = await timed(batches, (b) => call("POST", `/api-batch-lifecycle/add-operations?id=${b.id}`, { operation_ids: b.ops.slice(2) }))
    const ready = await timed(batches, (b) => call("PATCH", `/api-batches?id=${b.id}`, { status: "ready", notes: "go" }))
    const start = await timed(batches, (b) => call("POST", `/api-batch-lifecycle/start?id=${b.id}`, { operator_id: operator }))
    // each batch has tracked an hour, so stop shares real time
    psql(env.DATABASE_URL!, ["-c", "UPDATE time_entries SET start_time = start_time - interval '1 hour'"])
    const stopped = await timed(batches, (b) => call("POST", `/api-batch-lifecycle/stop?id=${b.id}`, {}))
    const check = psql(env.DATABASE_URL!, ["-c", `SELECT count(*) FILTER (WHERE status = 'completed') || ' ' || (SELECT count(*) FROM batch_time_shares) FROM operations`]).trim()
    if (check !== `${BATCHES * 4} ${BATCHES * 4}`) throw new Error(`after stop: completed operations and shares ${check}`)
    return { add, ready, start, stop: stopped }
  } finally {
    await stop()
    psql(admin, ["-c", `DROP DATABASE ${name} WITH (FORCE)`])
  }
}

const results = []
for (let k = 0; k < rounds; k++) {
  const r = await round(k)
  results.push(r)
  console.log(JSON.stringify({ round: k + 1, batches: BATCHES, concurrency: CONCURRENCY, req_per_s: r }))
}
