const key = process.env.MES_KEY; const base = "http://127.0.0.1:3979/functions/v1/api-jobs"
const job = (n) => ({ job_number: n, customer: "Bench Customer", parts: Array.from({ length: 5 }, (_, i) => ({ part_number: "P-" + (i + 1), quantity: 2, operations: Array.from({ length: 4 }, (_, j) => ({ operation_name: "Op " + (j + 1), sequence: j + 1 })) })) })
const total = Number(process.argv[2]); const prefix = process.argv[3]; let next = 0; let bad = 0
const worker = async () => { while (next < total) { const i = next++; const r = await fetch(base, { method: "POST", headers: { authorization: "Bearer " + key, "content-type": "application/json" }, body: JSON.stringify(job(prefix + i)) }); if (r.status !== 201) bad++; await r.arrayBuffer() } }
await Promise.all(Array.from({ length: 32 }, worker)); console.log("done", total, "bad", bad)
