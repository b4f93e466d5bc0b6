// List queries (spec 4.15, DECISIONS "Query parameters"): malformed values are 400, well-formed but
// out-of-range values are 422 with details, and defaults fill what is missing.
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { BadRequest, cellListSpec, decodeListQuery, jobListSpec, operationListSpec, requireId, ValidationFailed } from "../src/index.ts"

const decode = (query: Record<string, string>) => decodeListQuery(jobListSpec, query)
const ok = (query: Record<string, string>) => Effect.runSync(decode(query))
const error = (query: Record<string, string>) => Effect.runSync(Effect.flip(decode(query)))
const invalid = (query: Record<string, string>) => {
  const e = error(query)
  expect(e).toBeInstanceOf(ValidationFailed)
  return e as ValidationFailed
}
const malformed = (query: Record<string, string>) => {
  const e = error(query)
  expect(e).toBeInstanceOf(BadRequest)
  return e as BadRequest
}

describe("decodeListQuery(jobListSpec)", () => {
  it("defaults: limit 100, offset 0, sort created_at, order desc, no filters", () => {
    expect(ok({})).toEqual({ filters: {}, sort: "created_at", order: "desc", limit: 100, offset: 0 })
  })

  it("reads limit, offset, sort, order and every filter", () => {
    const q = ok({
      limit: "5",
      offset: "10",
      sort: "job_number",
      order: "asc",
      status: "on_hold",
      customer: "acme",
      job_number: "J-",
      priority: "3",
      search: "steel"
    })
    expect(q).toEqual({
      filters: { status: "on_hold", customer: "acme", job_number: "J-", priority: 3, search: "steel" },
      sort: "job_number",
      order: "asc",
      limit: 5,
      offset: 10
    })
  })

  it("accepts the bounds limit 1 and limit 1000", () => {
    expect(ok({ limit: "1" }).limit).toBe(1)
    expect(ok({ limit: "1000" }).limit).toBe(1000)
  })

  it("accepts every sort of spec 4.1", () => {
    for (const sort of ["job_number", "customer", "due_date", "created_at", "status", "priority"]) {
      expect(ok({ sort }).sort).toBe(sort)
    }
  })

  it("ignores empty filter values", () => {
    expect(ok({ status: "", customer: "" }).filters).toEqual({})
  })

  describe("400 BAD_REQUEST for malformed values", () => {
    for (const limit of ["abc", "1.5", "10x", ""]) {
      it(`limit=${JSON.stringify(limit)}`, () => {
        expect(malformed({ limit }).message).toContain("limit")
      })
    }

    it("offset=abc", () => {
      expect(malformed({ offset: "abc" }).message).toContain("offset")
    })

    it("priority=high", () => {
      expect(malformed({ priority: "high" }).message).toContain("priority")
    })

    it("id filter that is not a UUID", () => {
      expect(malformed({ id: "123" }).message).toContain("id")
    })

    it("a boolean filter that is not true or false", () => {
      const e = Effect.runSync(Effect.flip(decodeListQuery(cellListSpec, { active: "yes" })))
      expect(e).toBeInstanceOf(BadRequest)
      expect(e.message).toContain("active")
    })
  })

  describe("422 VALIDATION_ERROR for out-of-range values", () => {
    it("limit=0", () => {
      expect(invalid({ limit: "0" }).details).toEqual([
        { field: "limit", message: expect.any(String), value: 0, constraint: "MIN_VALUE", entityType: "query", entityIndex: 0 }
      ])
    })

    it("limit=1001", () => {
      expect(invalid({ limit: "1001" }).details).toEqual([
        { field: "limit", message: expect.any(String), value: 1001, constraint: "MAX_VALUE", entityType: "query", entityIndex: 0 }
      ])
    })

    it("offset=-1", () => {
      expect(invalid({ offset: "-1" }).details).toEqual([
        { field: "offset", message: expect.any(String), value: -1, constraint: "MIN_VALUE", entityType: "query", entityIndex: 0 }
      ])
    })

    it("an unknown status", () => {
      const [d] = invalid({ status: "paused" }).details
      expect(d).toEqual({ field: "status", message: expect.stringContaining("not_started"), value: "paused", constraint: "ENUM_CONSTRAINT", entityType: "query", entityIndex: 0 })
    })

    it("an unknown sort", () => {
      expect(invalid({ sort: "deleted_at" }).details).toEqual([
        { field: "sort", message: expect.stringContaining("job_number"), value: "deleted_at", constraint: "ENUM_CONSTRAINT", entityType: "query", entityIndex: 0 }
      ])
    })

    it("an unknown order", () => {
      expect(invalid({ order: "up" }).details).toMatchObject([{ field: "order", constraint: "ENUM_CONSTRAINT", value: "up" }])
    })

    it("collects every problem at once and states the count", () => {
      const e = invalid({ limit: "0", offset: "-5", status: "x", sort: "y", order: "z" })
      expect(e.details.map((d) => d.field).sort()).toEqual(["limit", "offset", "order", "sort", "status"])
      expect(e.message).toMatch(/\b5 errors\b/)
    })
  })

  it("operation lists default to sequence asc and accept sort_by/sort_order aliases", () => {
    const base = Effect.runSync(decodeListQuery(operationListSpec, {}))
    expect([base.sort, base.order]).toEqual(["sequence", "asc"])
    const aliased = Effect.runSync(decodeListQuery(operationListSpec, { sort_by: "created_at", sort_order: "desc" }))
    expect([aliased.sort, aliased.order]).toEqual(["created_at", "desc"])
  })
})

describe("requireId", () => {
  const id = "0B7C3B36-5B0F-4B0E-9D4F-2F3C9A1B2C3D"

  it("returns the id, lowercased", () => {
    expect(Effect.runSync(requireId({ id }))).toBe(id.toLowerCase())
  })

  it("a non-UUID id is 400", () => {
    const e = Effect.runSync(Effect.flip(requireId({ id: "42" })))
    expect(e).toBeInstanceOf(BadRequest)
  })

  for (const query of [{}, { id: "" }]) {
    it(`a missing id (${JSON.stringify(query)}) is 422 NOT_NULL`, () => {
      const e = Effect.runSync(Effect.flip(requireId(query)))
      expect(e).toBeInstanceOf(ValidationFailed)
      expect((e as ValidationFailed).details).toEqual([
        { field: "id", message: expect.any(String), value: null, constraint: "NOT_NULL", entityType: "query", entityIndex: 0 }
      ])
    })
  }

  it("reads another parameter name", () => {
    expect(Effect.runSync(requireId({ job_id: id }, "job_id"))).toBe(id.toLowerCase())
    const e = Effect.runSync(Effect.flip(requireId({ id }, "job_id")))
    expect((e as ValidationFailed).details[0]!.field).toBe("job_id")
  })
})
