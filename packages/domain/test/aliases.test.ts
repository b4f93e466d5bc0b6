import { describe, expect, it } from "vitest"
import { normalizeJobInput, renameAliases } from "../src/index.ts"

const op = (sequence: number, extra: Record<string, unknown> = {}) => ({ operation_name: `Op ${sequence}`, sequence, ...extra })

describe("input aliases (DECISIONS: aliases)", () => {
  it("renames an alias to its canonical key unless that key is given too, without touching the input", () => {
    const aliases = { customer_name: "customer", description: "notes" }
    const input = { job_number: "J-1", customer_name: "Acme", description: "d", notes: "kept" }
    expect(renameAliases(input, aliases)).toEqual({ job_number: "J-1", customer: "Acme", notes: "kept" })
    expect(input).toEqual({ job_number: "J-1", customer_name: "Acme", description: "d", notes: "kept" })
    const plain = { job_number: "J-2" }
    expect(renameAliases(plain, aliases)).toBe(plain)
    expect([renameAliases(null, aliases), renameAliases("x", aliases), renameAliases([1], aliases)]).toEqual([null, "x", [1]])
  })

  it("renames in a nested job at every level, copying only the job, part and operation list an alias was in", () => {
    const untouched = { part_number: "P-1", quantity: 1, operations: [op(1), op(2)] }
    const aliased = { part_number: "P-2", quantity: 1, operations: [op(1), op(2, { estimated_time: 15, instructions: "slowly" })] }
    const raw = { job_number: "J-1", parts: [untouched, aliased, null] }
    const job = normalizeJobInput(raw) as { parts: Array<{ operations: Array<unknown> } | null> }
    expect(job).toEqual({
      job_number: "J-1",
      parts: [untouched, { ...aliased, operations: [op(1), op(2, { estimated_time_minutes: 15, notes: "slowly" })] }, null]
    })
    expect(job.parts[0]).toBe(untouched)
    expect(job.parts[1]!.operations[0]).toBe(aliased.operations[0])
    expect(aliased.operations[1]).toEqual(op(2, { estimated_time: 15, instructions: "slowly" }))
    expect(raw.parts[1]).toBe(aliased)
  })

  it("hands back a body that names no alias as it is", () => {
    const raw = { job_number: "J-1", parts: [{ part_number: "P-1", quantity: 1, operations: [op(1)] }, { part_number: "P-2" }] }
    expect(normalizeJobInput(raw)).toBe(raw)
    const renamed = normalizeJobInput({ ...raw, customer_name: "Acme" }) as Record<string, unknown>
    expect(renamed.customer).toBe("Acme")
    expect(renamed.parts).toBe(raw.parts)
  })
})
