// Response bodies from a pool (src/body-buffers.ts, DECISIONS "A list page's bytes"): a body of 8 kB to 1 MB is
// encoded into a pooled buffer that goes back to the pool only once Node has written it ('finish'); through the
// API, pages and created jobs answered at once from reused buffers arrive whole and each its own.
import { EventEmitter } from "node:events"
import { createServer, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { bodyBuffers } from "../src/body-buffers.ts"
import { client, type Harness, nestedJob, startServer } from "./harness.ts"

const letters = (n: number, shift = 0) => {
  const bytes = new Uint8Array(n)
  for (let i = 0; i < n; i++) bytes[i] = 0x61 + ((i + shift) % 26)
  return bytes
}

describe("bodyBuffers", () => {
  const pool = bodyBuffers(300_000)
  const served: Array<{ buffer: ArrayBufferLike; keptAtEnd: number; finished: Promise<number>; closed: Promise<void> }> = []
  const server = createServer((req, res) => {
    const url = new URL(req.url!, "http://localhost")
    const n = Number(url.searchParams.get("n"))
    const body = pool.take(n).subarray(0, n)
    body.set(letters(n, served.length))
    pool.giveBackAfter(res, body)
    // registered after the pool's own listener, so it sees what the pool did on 'finish'
    const finished = new Promise<number>((resolve) => res.once("finish", () => resolve(pool.kept())))
    const closed = new Promise<void>((resolve) => res.once("close", () => resolve()))
    if (url.searchParams.has("destroy")) {
      served.push({ buffer: body.buffer, keptAtEnd: pool.kept(), finished, closed })
      res.destroy()
      return
    }
    res.writeHead(200, { "content-length": String(n) })
    res.end(body)
    served.push({ buffer: body.buffer, keptAtEnd: pool.kept(), finished, closed })
  })
  let base: string
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
  })
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

  it("a 100 kB body is written whole from a pooled buffer, given back only once Node has written it, then taken again", async () => {
    const text = await (await fetch(`${base}?n=100000`)).text()
    expect(text).toBe(Buffer.from(letters(100_000, 0)).toString("latin1"))
    const first = served[0]!
    expect(first.keptAtEnd).toBe(0)
    expect(await first.finished).toBe(131_072)
    expect(pool.take(100_000).buffer).toBe(first.buffer)
    expect(pool.kept()).toBe(0)
  })

  it("bodies under 8 kB or over 1 MB are allocated, never kept", async () => {
    const before = served.length
    for (const n of [5_000, 1_100_000]) {
      expect((await (await fetch(`${base}?n=${n}`)).arrayBuffer()).byteLength).toBe(n)
    }
    for (const s of served.slice(before)) expect(await s.finished).toBe(0)
  })

  it("a response destroyed before it finishes leaves its buffer to the garbage collector", async () => {
    await expect(fetch(`${base}?n=100000&destroy`)).rejects.toThrow()
    await served.at(-1)!.closed
    expect(pool.kept()).toBe(0)
  })

  it("keeps at most its budget of idle bytes, and a buffer given back twice only once", () => {
    const small = bodyBuffers(300_000)
    const responses = [0, 1, 2].map(() => new EventEmitter() as unknown as ServerResponse)
    const bodies = responses.map(() => small.take(100_000))
    responses.forEach((r, i) => small.giveBackAfter(r, bodies[i]!))
    for (const r of responses) r.emit("finish")
    expect(small.kept()).toBe(262_144)
    const again = new EventEmitter() as unknown as ServerResponse
    small.giveBackAfter(again, bodies[0]!)
    again.emit("finish")
    expect(small.kept()).toBe(262_144)
  })
})

describe("through the API", () => {
  let h: Harness
  let api: ReturnType<typeof client>
  let key: string
  beforeAll(async () => {
    h = await startServer()
    ;({ api, key } = await h.as("Pool"))
    for (let i = 0; i < 30; i++) expect((await api.post("/api-jobs", nestedJob(`POOL-${i}`, 3, 2))).status).toBe(201)
  })
  afterAll(() => h?.close())

  const raw = async (path: string) => (await fetch(`${h.url}${path}`, { headers: { authorization: `Bearer ${key}` } })).text()

  it("24 pages answered at once from reused buffers are each the page, byte for byte", async () => {
    const page = await raw("/api-jobs?limit=100")
    expect(page.length).toBeGreaterThan(16_384)
    expect(JSON.parse(page).data.jobs).toHaveLength(30)
    const pages = await Promise.all(Array.from({ length: 24 }, () => raw("/api-jobs?limit=100")))
    for (const p of pages) expect(p).toBe(page)
  })

  it("created jobs answered while pages are read arrive whole, each its own", async () => {
    const [pages, created] = await Promise.all([
      Promise.all(Array.from({ length: 16 }, () => raw("/api-jobs?limit=100"))),
      Promise.all(Array.from({ length: 8 }, (_, i) => api.post("/api-jobs", nestedJob(`POOL-NEW-${i}`, 6, 4))))
    ])
    created.forEach((c, i) => {
      expect(c.status).toBe(201)
      expect(c.body.data.job.job_number).toBe(`POOL-NEW-${i}`)
      expect(c.body.data.job.parts.map((p: { operations: Array<unknown> }) => p.operations.length)).toEqual([4, 4, 4, 4, 4, 4])
    })
    for (const p of pages) {
      const numbers = (JSON.parse(p).data.jobs as Array<{ job_number: string }>).map((j) => j.job_number)
      expect(new Set(numbers).size).toBe(numbers.length)
      expect(numbers.length).toBeGreaterThanOrEqual(30)
    }
  })
})
