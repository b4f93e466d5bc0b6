// X (each key but the last): 20 webhooks to a receiver that never answers, one job with 5 parts (120 deliveries);
// then Y (the last key), with one webhook to a receiver that answers at once, creates a job: how long until Y's
// first delivery arrives? The forty-sixth sitting ran it with one X, the forty-seventh with two.
import http from "node:http"
const [base, ...keys] = process.argv.slice(2)
const keysX = keys.slice(0, -1), keyY = keys.at(-1)
const listen = (handler) => new Promise((r) => { const s = http.createServer(handler); s.listen(0, "127.0.0.1", () => r(s)) })
let yAt = 0, holes = 0
const hole = await listen((req) => { holes++; req.resume() })
const fast = await listen((req, res) => { req.resume(); req.on("end", () => { if (yAt === 0) yAt = Date.now(); res.end("ok") }) })
const call = async (key, method, path, body) => {
  const r = await fetch(base + path, { method, headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: body && JSON.stringify(body) })
  const t = await r.text(); if (r.status >= 300) throw new Error(`${method} ${path} ${r.status} ${t.slice(0, 300)}`); return JSON.parse(t)
}
for (const key of keysX) {
  for (let i = 0; i < 20; i++) await call(key, "POST", "/api-webhooks", { url: `http://127.0.0.1:${hole.address().port}/h${i}`, events: ["job.created", "part.created"] })
}
await call(keyY, "POST", "/api-webhooks", { url: `http://127.0.0.1:${fast.address().port}/y`, events: ["job.created"] })
const job = (n) => ({ job_number: n, parts: Array.from({ length: 5 }, (_, i) => ({ part_number: `${n}-P${i}`, quantity: 1, operations: [{ operation_name: "Cut", sequence: 1 }] })) })
for (const [i, key] of keysX.entries()) await call(key, "POST", "/api-jobs", job(`X${i + 1}-${Date.now()}`))
await new Promise((r) => setTimeout(r, 300))
const t0 = Date.now()
const holesAtY = holes
await call(keyY, "POST", "/api-jobs", job(`Y-${Date.now()}`))
while (yAt === 0 && Date.now() - t0 < 90_000) await new Promise((r) => setTimeout(r, 20))
console.log(JSON.stringify({ y_delay_ms: yAt - t0, black_hole_requests_when_y_created: holesAtY, black_hole_requests_by_then: holes }))
process.exit(0)
