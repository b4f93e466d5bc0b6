// mes's create statement and answer as bytes on the wire: a loopback proxy between `mes serve` and PostgreSQL
// records the Parse and Bind of one POST /api-jobs, so a bench can replay the statement without the server
// (`sql-limit.ts`, pgbench) or behind a server of its own (`ideal-server.ts`).
import { randomBytes } from "node:crypto"
import { createConnection, createServer, type Socket } from "node:net"
import { startMes, tenantIn } from "./mes-serve.ts"

/** The request body of `../shared/bench/load.mjs` (the values `pgbench/create.sql` inserts). */
export const loadBody = (jobNumber: string) => ({
  job_number: jobNumber, customer: "Acme Fabrication", due_date: "2026-12-31", priority: 5, notes: "benchmark job",
  parts: Array.from({ length: 5 }, (_, i) => ({
    part_number: `P-${i + 1}`, quantity: 10, material: "S355 steel", description: "Bracket",
    operations: ["Laser cut", "Deburr", "Bend", "Weld"].map((operation_name, j) => ({ operation_name, sequence: j + 1, estimated_time_minutes: 15 }))
  }))
})

export interface Bound {
  readonly text: string
  readonly params: ReadonlyArray<string | null>
}

/**
 * A loopback proxy to the PostgreSQL server of `upstreamUrl` that remembers the text and (text) parameters of every
 * statement the client binds. The frontend's first messages carry no type byte (SSL request, start-up).
 */
const recordingProxy = async (upstreamUrl: string) => {
  const target = new URL(upstreamUrl)
  const bound: Array<Bound> = []
  const server = createServer((client: Socket) => {
    const upstream = createConnection({ host: target.hostname, port: Number(target.port || 5432) })
    const named = new Map<string, string>()
    let buffer = Buffer.alloc(0)
    let started = false
    const cstring = (b: Buffer, at: number): [string, number] => {
      const end = b.indexOf(0, at)
      return [b.toString("utf8", at, end), end + 1]
    }
    const message = (type: number, m: Buffer) => {
      if (type === 0x50) { // Parse: name, text
        const [stmt, at] = cstring(m, 0)
        named.set(stmt, cstring(m, at)[0])
      } else if (type === 0x42) { // Bind: portal, statement, formats, parameters
        let [, at] = cstring(m, 0)
        const [stmt, next] = cstring(m, at)
        at = next
        const formats = m.readInt16BE(at)
        at += 2 + 2 * formats
        const count = m.readInt16BE(at)
        at += 2
        const params: Array<string | null> = []
        for (let i = 0; i < count; i++) {
          const len = m.readInt32BE(at)
          at += 4
          params.push(len < 0 ? null : m.toString("utf8", at, at + len))
          at += Math.max(len, 0)
        }
        bound.push({ text: named.get(stmt) ?? "", params })
      }
    }
    client.on("data", (chunk: Buffer) => {
      upstream.write(chunk)
      buffer = Buffer.concat([buffer, chunk])
      for (;;) {
        if (!started) {
          if (buffer.length < 8) return
          const len = buffer.readInt32BE(0)
          if (buffer.length < len) return
          started = buffer.readInt32BE(4) !== 80877103 // an SSL request is followed by the start-up message
          buffer = buffer.subarray(len)
          continue
        }
        if (buffer.length < 5) return
        const len = buffer.readInt32BE(1)
        if (buffer.length < 1 + len) return
        message(buffer[0]!, buffer.subarray(5, 1 + len))
        buffer = buffer.subarray(1 + len)
      }
    })
    upstream.pipe(client)
    client.on("error", () => upstream.destroy())
    upstream.on("error", () => client.destroy())
    client.on("close", () => upstream.destroy())
  })
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()))
  const port = (server.address() as { port: number }).port
  const u = new URL(upstreamUrl)
  u.hostname = "127.0.0.1"
  u.port = String(port)
  return { bound, url: u.toString(), close: () => new Promise((r) => server.close(r)) }
}

export interface Captured {
  /** The bound statement that inserts the job: its text, and its parameters ($1 the plans, a JSON array). */
  readonly statement: Bound
  readonly tenantId: string
  /** The job number of the captured create: it stands in the plan and in the answer. */
  readonly marker: string
  /** The body of the 201 answer. */
  readonly answer: string
}

/**
 * Creates a tenant in the database of `databaseUrl` (migrating it first if it must) and captures the create
 * statement and the answer of one POST /api-jobs of `loadBody`.
 */
export const captureCreate = async (databaseUrl: string): Promise<Captured> => {
  const { env: direct, tenant } = tenantIn(databaseUrl, ["--name", "Capture"])
  const proxy = await recordingProxy(databaseUrl)
  const { stop, url: base } = await startMes({ ...direct, DATABASE_URL: proxy.url })
  const marker = "CAPTURE-MARKER-JOB"
  let answer: string
  try {
    const res = await fetch(`${base}/api-jobs`, {
      method: "POST",
      headers: { authorization: `Bearer ${tenant.api_key}`, "content-type": "application/json" },
      body: JSON.stringify(loadBody(marker))
    })
    answer = await res.text()
    if (res.status !== 201) throw new Error(`POST /api-jobs answered ${res.status}: ${answer.slice(0, 300)}`)
  } finally {
    await stop()
    await proxy.close()
  }
  const found = proxy.bound.find((b) => b.text.includes("INSERT INTO jobs") && (b.params[0] ?? "").includes(marker))
  if (found === undefined) throw new Error("no statement inserting the job was bound")
  return { statement: found, tenantId: String(tenant.tenant_id), marker, answer }
}

/** What `withIdPrefix` puts in place of the first 12 hex digits of every id. */
export const ID_PREFIX = "5eed5eed-5eed"

/**
 * `text` with every id but the tenant's given the prefix `ID_PREFIX`: a replay makes fresh ids for a create by
 * replacing the prefix with a random one (the ids of one create differ in the rest).
 */
export const withIdPrefix = (text: string, tenantId: string) =>
  text.replace(/"([0-9a-f]{8}-[0-9a-f]{4})(-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"/g, (id, _head: string, tail: string) =>
    id.slice(1, -1) === tenantId ? id : `"${ID_PREFIX}${tail}"`)

/** One create made from the templates: the plan (one element of $1) and the 201 answer, with the same fresh ids. */
export interface FreshCreate {
  readonly plan: string
  readonly answer: string
}

/**
 * mes's create, captured once (`captureCreate`), as templates a server without mes can serve: the statement's text
 * and its other parameters, and `fresh(body)`, a plan with fresh ids and the body's job number, and the answer that
 * names them. What `ideal-server.ts` serves, on `node:http` + `pg` or on the project's stack.
 */
export const createTemplates = async (databaseUrl: string) => {
  const { statement, tenantId, marker, answer } = await captureCreate(databaseUrl)
  const plan = withIdPrefix(JSON.stringify((JSON.parse(statement.params[0]!) as Array<unknown>)[0]), tenantId)
  const answerTemplate = withIdPrefix(answer, tenantId)
  if (!plan.includes(ID_PREFIX) || !answerTemplate.includes(ID_PREFIX) || !answer.includes(marker)) {
    throw new Error("the captured plan or answer has no ids or no job number to replace")
  }
  return {
    text: statement.text,
    /** $2 on: the statement's parameters after the plans (the tenant). */
    rest: statement.params.slice(1),
    tenantId,
    /** A create of a request body (its JSON text); undefined when it is not JSON. */
    fresh: (body: string): FreshCreate | undefined => {
      let jobNumber: string
      try {
        jobNumber = JSON.stringify(String((JSON.parse(body) as { job_number: unknown }).job_number)).slice(1, -1)
      } catch {
        return undefined
      }
      const h = randomBytes(6).toString("hex")
      const prefix = `${h.slice(0, 8)}-${h.slice(8)}`
      return {
        plan: plan.replaceAll(ID_PREFIX, prefix).replaceAll(marker, jobNumber),
        answer: answerTemplate.replaceAll(ID_PREFIX, prefix).replaceAll(marker, jobNumber)
      }
    }
  }
}
