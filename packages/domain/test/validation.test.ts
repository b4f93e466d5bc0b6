// The validation-detail builder (spec 7.3): every rule yields one detail with its path, constraint,
// entity and the offending value, and all problems of a request are reported at once.
import { Effect, Exit, Schema, type SchemaIssue } from "effect"
import { describe, expect, it } from "vitest"
import {
  BatchCreate,
  decodeInput,
  decodePatchInput,
  detail,
  formatPath,
  IsoDate,
  isStorableText,
  issueDetails,
  JobCreate,
  JobPatch,
  MAX_INPUT_DEPTH,
  nestsDeeperThan,
  normalizeJobInput,
  OperationCreate,
  OperationPatch,
  PartCreate,
  queryInstant,
  readInstant,
  renameAliases,
  TimeEntryCreate,
  unstorableDetails,
  UploadUrlRequest,
  type ValidationDetail,
  ValidationFailed,
  utf8Text
} from "../src/index.ts"

const decodeJob = decodeInput(JobCreate, "job")
const patchJob = decodePatchInput(JobPatch, "job")
const decodePart = decodeInput(PartCreate, "part")
const decodeOperation = decodeInput(OperationCreate, "operation")

const failure = (effect: Effect.Effect<unknown, ValidationFailed>): ValidationFailed => {
  const e = Effect.runSync(Effect.flip(effect))
  expect(e).toBeInstanceOf(ValidationFailed)
  return e
}
const jobErrors = (input: unknown) => failure(decodeJob(input)).details
const only = (details: ReadonlyArray<ValidationDetail>): ValidationDetail => {
  expect(details).toHaveLength(1)
  return details[0]!
}
const at = (details: ReadonlyArray<ValidationDetail>, field: string): ValidationDetail => {
  const found = details.filter((d) => d.field === field)
  expect(found, `one detail at ${field} in ${JSON.stringify(details)}`).toHaveLength(1)
  return found[0]!
}

const op = (sequence: number, extra: Record<string, unknown> = {}) => ({ operation_name: `Op ${sequence}`, sequence, ...extra })
const part = (extra: Record<string, unknown> = {}) => ({ part_number: "P-1", quantity: 1, operations: [op(1)], ...extra })
const job = (extra: Record<string, unknown> = {}) => ({ job_number: "J-1", parts: [part()], ...extra })

describe("formatPath", () => {
  it("joins keys with dots and indexes with brackets", () => {
    expect(formatPath(["parts", 0, "operations", 1, "sequence"])).toBe("parts[0].operations[1].sequence")
    expect(formatPath(["job_number"])).toBe("job_number")
    expect(formatPath(["parts", 2])).toBe("parts[2]")
    expect(formatPath([])).toBe("")
  })
})

describe("detail", () => {
  it("names the entity and index of the innermost nested array and echoes the value at the path", () => {
    const input = { parts: [part(), part({ operations: [op(1), op(7)] })] }
    expect(detail("job", input, ["parts", 1, "operations", 1, "sequence"], "MAX_VALUE", "too big")).toEqual({
      field: "parts[1].operations[1].sequence",
      message: "too big",
      value: 7,
      constraint: "MAX_VALUE",
      entityType: "operation",
      entityIndex: 1
    })
  })

  it("an index into an array of values is not an entity's: a batch's operation_ids[1] is batch 0", () => {
    const input = { operation_ids: ["a", "not-a-uuid"] }
    expect(detail("batch", input, ["operation_ids", 1], "UUID_FORMAT", "not a UUID")).toMatchObject({
      field: "operation_ids[1]",
      value: "not-a-uuid",
      entityType: "batch",
      entityIndex: 0
    })
  })

  it("uses the root entity at index 0 for top-level fields, and null for a missing value", () => {
    expect(detail("job", {}, ["job_number"], "NOT_NULL", "required")).toEqual({
      field: "job_number",
      message: "required",
      value: null,
      constraint: "NOT_NULL",
      entityType: "job",
      entityIndex: 0
    })
  })

  it("keeps an explicit value", () => {
    expect(detail("job", { a: 1 }, ["a"], "FK_CONSTRAINT", "m", "given").value).toBe("given")
  })
})

describe("issueDetails", () => {
  const issueOf = (schema: Schema.Top & { readonly DecodingServices: never }, input: unknown): SchemaIssue.Issue => {
    const exit = Schema.decodeUnknownExit(schema as any)(input, { errors: "all" }) as Exit.Exit<unknown, Schema.SchemaError>
    expect(Exit.isFailure(exit)).toBe(true)
    if (Exit.isSuccess(exit)) throw new Error("expected a failure")
    const reason = exit.cause.reasons.find((r) => r._tag === "Fail") as { error: Schema.SchemaError }
    return reason.error.issue
  }

  it("walks every leaf of the issue tree, with item entities for `items` arrays", () => {
    const schema = Schema.Struct({
      name: Schema.String,
      items: Schema.Array(Schema.Struct({ qty: Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)) }))
    })
    const input = { items: [{ qty: 1 }, { qty: 0 }, { qty: "x" }] }
    const details = issueDetails("batch", input, issueOf(schema, input))
    expect(details).toHaveLength(3)
    expect(at(details, "name")).toMatchObject({ constraint: "NOT_NULL", entityType: "batch", entityIndex: 0, value: null })
    expect(at(details, "items[1].qty")).toMatchObject({ constraint: "MIN_VALUE", entityType: "item", entityIndex: 1, value: 0 })
    expect(at(details, "items[2].qty")).toMatchObject({ constraint: "TYPE_MISMATCH", entityType: "item", entityIndex: 2, value: "x" })
  })
})

describe("decodeInput: job create (spec 7.3)", () => {
  it("accepts a minimal valid job", () => {
    const decoded = Effect.runSync(decodeJob(job()))
    expect(decoded.job_number).toBe("J-1")
    expect(decoded.parts[0]!.operations[0]!.sequence).toBe(1)
  })

  it("rejects a body that is not a JSON object", () => {
    for (const body of [null, [], "job", 3]) {
      const d = only(jobErrors(body))
      expect(d.constraint).toBe("TYPE_MISMATCH")
      expect(d.entityType).toBe("job")
    }
  })

  describe("NOT_NULL", () => {
    it("missing job_number", () => {
      const { job_number: _, ...input } = job()
      expect(only(jobErrors(input))).toEqual({
        field: "job_number",
        message: expect.stringContaining("job_number"),
        value: null,
        constraint: "NOT_NULL",
        entityType: "job",
        entityIndex: 0
      })
    })

    it("null job_number", () => {
      expect(only(jobErrors(job({ job_number: null })))).toMatchObject({ field: "job_number", constraint: "NOT_NULL", value: null })
    })

    it("missing parts", () => {
      const { parts: _, ...input } = job()
      expect(only(jobErrors(input))).toMatchObject({ field: "parts", constraint: "NOT_NULL", entityType: "job" })
    })

    it("missing quantity of a part", () => {
      const { quantity: _, ...p } = part()
      expect(only(jobErrors(job({ parts: [part(), p] })))).toMatchObject({
        field: "parts[1].quantity",
        constraint: "NOT_NULL",
        value: null,
        entityType: "part",
        entityIndex: 1
      })
    })

    it("null operation_name of a nested operation", () => {
      expect(only(jobErrors(job({ parts: [part({ operations: [op(1), op(2, { operation_name: null })] })] })))).toMatchObject({
        field: "parts[0].operations[1].operation_name",
        constraint: "NOT_NULL",
        value: null,
        entityType: "operation",
        entityIndex: 1
      })
    })

    it("missing sequence of a nested operation", () => {
      expect(only(jobErrors(job({ parts: [part({ operations: [{ operation_name: "Cut" }] })] })))).toMatchObject({
        field: "parts[0].operations[0].sequence",
        constraint: "NOT_NULL",
        entityType: "operation",
        entityIndex: 0
      })
    })
  })

  describe("TYPE_MISMATCH", () => {
    it("a string where an integer is expected, with the value echoed", () => {
      expect(only(jobErrors(job({ parts: [part({ quantity: "3" })] })))).toMatchObject({
        field: "parts[0].quantity",
        constraint: "TYPE_MISMATCH",
        value: "3",
        entityType: "part",
        entityIndex: 0
      })
    })

    it("a fractional quantity", () => {
      expect(only(jobErrors(job({ parts: [part({ quantity: 1.5 })] })))).toMatchObject({
        field: "parts[0].quantity",
        constraint: "TYPE_MISMATCH",
        value: 1.5
      })
    })

    it("a number where a string is expected", () => {
      expect(only(jobErrors(job({ customer: 5 })))).toMatchObject({ field: "customer", constraint: "TYPE_MISMATCH", value: 5 })
    })

    it("parts that is not an array", () => {
      expect(only(jobErrors(job({ parts: "x" })))).toMatchObject({ field: "parts", constraint: "TYPE_MISMATCH", value: "x" })
    })

    it("metadata that is not an object", () => {
      expect(only(jobErrors(job({ metadata: [1] })))).toMatchObject({ field: "metadata", constraint: "TYPE_MISMATCH" })
    })

    it("is_bullet_card that is not a boolean", () => {
      expect(only(jobErrors(job({ parts: [part({ is_bullet_card: "yes" })] })))).toMatchObject({
        field: "parts[0].is_bullet_card",
        constraint: "TYPE_MISMATCH",
        value: "yes"
      })
    })
  })

  describe("MIN_LENGTH / MAX_LENGTH", () => {
    it("empty job_number", () => {
      expect(only(jobErrors(job({ job_number: "" })))).toMatchObject({ field: "job_number", constraint: "MIN_LENGTH", value: "" })
    })

    it("job_number of 256 characters; 255 is accepted", () => {
      expect(only(jobErrors(job({ job_number: "x".repeat(256) })))).toMatchObject({ field: "job_number", constraint: "MAX_LENGTH" })
      expect(Effect.runSync(decodeJob(job({ job_number: "x".repeat(255) }))).job_number).toHaveLength(255)
    })

    it("customer over 255 characters", () => {
      const customer = "c".repeat(256)
      expect(only(jobErrors(job({ customer })))).toMatchObject({ field: "customer", constraint: "MAX_LENGTH", value: customer })
    })

    it("empty part_number", () => {
      expect(only(jobErrors(job({ parts: [part({ part_number: "" })] })))).toMatchObject({
        field: "parts[0].part_number",
        constraint: "MIN_LENGTH",
        entityType: "part"
      })
    })

    it("drawing_no over 255 characters", () => {
      expect(only(jobErrors(job({ parts: [part({ drawing_no: "d".repeat(256) })] })))).toMatchObject({
        field: "parts[0].drawing_no",
        constraint: "MAX_LENGTH"
      })
    })

    it("operation_name over 255 characters", () => {
      expect(only(jobErrors(job({ parts: [part({ operations: [op(1, { operation_name: "o".repeat(256) })] })] })))).toMatchObject({
        field: "parts[0].operations[0].operation_name",
        constraint: "MAX_LENGTH",
        entityType: "operation"
      })
    })

    it("a job needs at least one part", () => {
      expect(only(jobErrors(job({ parts: [] })))).toEqual({
        field: "parts",
        message: expect.any(String),
        value: [],
        constraint: "MIN_LENGTH",
        entityType: "job",
        entityIndex: 0
      })
    })

    it("a nested part needs at least one operation", () => {
      expect(only(jobErrors(job({ parts: [part(), part({ part_number: "P-2", operations: [] })] })))).toEqual({
        field: "parts[1].operations",
        message: expect.any(String),
        value: [],
        constraint: "MIN_LENGTH",
        entityType: "part",
        entityIndex: 1
      })
    })
  })

  describe("MIN_VALUE", () => {
    it("quantity >= 1", () => {
      expect(only(jobErrors(job({ parts: [part({ quantity: 0 })] })))).toMatchObject({
        field: "parts[0].quantity",
        constraint: "MIN_VALUE",
        value: 0
      })
      expect(Effect.runSync(decodeJob(job({ parts: [part({ quantity: 1 })] }))).parts[0]!.quantity).toBe(1)
    })

    it("sequence >= 1", () => {
      expect(only(jobErrors(job({ parts: [part({ operations: [op(0)] })] })))).toMatchObject({
        field: "parts[0].operations[0].sequence",
        constraint: "MIN_VALUE",
        value: 0,
        entityType: "operation"
      })
    })

    it("priority >= 0 (0 accepted)", () => {
      expect(only(jobErrors(job({ priority: -1 })))).toMatchObject({ field: "priority", constraint: "MIN_VALUE", value: -1 })
      expect(Effect.runSync(decodeJob(job({ priority: 0 }))).priority).toBe(0)
    })

    it("a whole number past the integer bounds is one detail, its bound's: not also 'must be an integer' (beyond 2^53, or Infinity from 1e400)", () => {
      for (const [priority, constraint] of [[2 ** 53 + 2, "MAX_VALUE"], [-(2 ** 60), "MIN_VALUE"], [Infinity, "MAX_VALUE"], [-Infinity, "MIN_VALUE"]] as const) {
        expect(jobErrors(job({ priority })).map((d) => [d.field, d.constraint]), String(priority)).toEqual([["priority", constraint]])
      }
      // a fraction is two mistakes: not whole, and too large
      expect(jobErrors(job({ priority: 2147483648.5 })).map((d) => d.constraint).sort()).toEqual(["MAX_VALUE", "TYPE_MISMATCH"])
      expect(only(jobErrors(job({ priority: 1.5 })))).toMatchObject({ field: "priority", constraint: "TYPE_MISMATCH", message: "priority must be an integer" })
    })

    it("every number field is bounded, so a size past 2^53 or 1e400 (Infinity) is one bound detail, a decimal's never 'must be an integer'", () => {
      const upload = (size_bytes: number) => failure(decodeInput(UploadUrlRequest, "upload")({ content_type: "image/png", size_bytes })).details
      for (const size of [2 ** 53 + 2, Infinity]) {
        expect(only(upload(size)), String(size)).toMatchObject({ field: "size_bytes", constraint: "MAX_VALUE", message: "size_bytes must be at most 2147483647" })
      }
      const batch = (thickness_mm: number) => failure(decodeInput(BatchCreate, "batch")({ batch_number: "B9", cell_id: "00000000-0000-4000-8000-000000000001", thickness_mm })).details
      expect(only(batch(Infinity))).toMatchObject({ field: "thickness_mm", constraint: "MAX_VALUE", message: `thickness_mm must be at most ${Number.MAX_VALUE}` })
      expect(only(batch(-Infinity))).toMatchObject({ field: "thickness_mm", constraint: "MIN_VALUE" })
      expect(Effect.runSync(decodeInput(BatchCreate, "batch")({ batch_number: "B9", cell_id: "00000000-0000-4000-8000-000000000001", thickness_mm: 2 ** 53 + 2 })).thickness_mm).toBe(2 ** 53 + 2)
      const estimate = jobErrors(job({ parts: [part({ operations: [op(1, { estimated_time_minutes: Infinity })] })] }))
      expect(only(estimate)).toMatchObject({ field: "parts[0].operations[0].estimated_time_minutes", constraint: "MAX_VALUE" })
      // a finiteness check of its own says so, not "must be an integer"
      const finite = failure(decodeInput(Schema.Struct({ x: Schema.Finite }), "thing")({ x: Infinity })).details
      expect(only(finite)).toMatchObject({ field: "x", constraint: "TYPE_MISMATCH", message: "x must be a finite number" })
    })

    it("estimated_time_minutes >= 0 (0 accepted)", () => {
      expect(only(jobErrors(job({ parts: [part({ operations: [op(1, { estimated_time_minutes: -0.5 })] })] })))).toMatchObject({
        field: "parts[0].operations[0].estimated_time_minutes",
        constraint: "MIN_VALUE",
        value: -0.5
      })
      const ok = Effect.runSync(decodeJob(job({ parts: [part({ operations: [op(1, { estimated_time_minutes: 0 })] })] })))
      expect(ok.parts[0]!.operations[0]!.estimated_time_minutes).toBe(0)
    })

    it("setup_time_minutes >= 0", () => {
      expect(only(jobErrors(job({ parts: [part({ operations: [op(1, { setup_time_minutes: -1 })] })] })))).toMatchObject({
        field: "parts[0].operations[0].setup_time_minutes",
        constraint: "MIN_VALUE"
      })
    })
  })

  describe("UUID_FORMAT", () => {
    it("current_cell_id of the job", () => {
      expect(only(jobErrors(job({ current_cell_id: "not-a-uuid" })))).toMatchObject({
        field: "current_cell_id",
        constraint: "UUID_FORMAT",
        value: "not-a-uuid"
      })
    })

    it("cell_id of a nested operation", () => {
      expect(only(jobErrors(job({ parts: [part({ operations: [op(1, { cell_id: "123" })] })] })))).toMatchObject({
        field: "parts[0].operations[0].cell_id",
        constraint: "UUID_FORMAT",
        entityType: "operation"
      })
    })

    it("job_id of a standalone part", () => {
      const { operations: _, ...p } = part()
      expect(only(failure(decodePart({ ...p, job_id: "abc" })).details)).toEqual({
        field: "job_id",
        message: expect.any(String),
        value: "abc",
        constraint: "UUID_FORMAT",
        entityType: "part",
        entityIndex: 0
      })
    })
  })

  describe("ENUM_CONSTRAINT", () => {
    it("unknown job status", () => {
      const d = only(jobErrors(job({ status: "paused" })))
      expect(d).toMatchObject({ field: "status", constraint: "ENUM_CONSTRAINT", value: "paused", entityType: "job" })
      expect(d.message).toContain("not_started")
    })

    it("every job status of spec 2.1 is accepted", () => {
      for (const status of ["not_started", "in_progress", "on_hold", "completed"]) {
        expect(Effect.runSync(decodeJob(job({ status }))).status).toBe(status)
      }
    })

    it("unknown part status", () => {
      expect(only(jobErrors(job({ parts: [part({ status: "on_hold" })] })))).toMatchObject({
        field: "parts[0].status",
        constraint: "ENUM_CONSTRAINT",
        entityType: "part"
      })
    })

    it("operation PATCH status accepts `paused` and rejects unknown values", () => {
      const patchOp = decodePatchInput(OperationPatch, "operation")
      expect(Effect.runSync(patchOp({ status: "paused" })).status).toBe("paused")
      expect(only(failure(patchOp({ status: "stopped" })).details)).toMatchObject({
        field: "status",
        constraint: "ENUM_CONSTRAINT",
        entityType: "operation"
      })
    })
  })

  describe("DATE_FORMAT", () => {
    for (const due_date of ["2023-02-29", "tomorrow", "2024-13-01", "2024-1-01", "2024-04-31", ""]) {
      it(`rejects due_date ${JSON.stringify(due_date)}`, () => {
        expect(only(jobErrors(job({ due_date })))).toEqual({
          field: "due_date",
          message: expect.any(String),
          value: due_date,
          constraint: "DATE_FORMAT",
          entityType: "job",
          entityIndex: 0
        })
      })
    }

    it("accepts the leap day 2024-02-29", () => {
      expect(Effect.runSync(decodeJob(job({ due_date: "2024-02-29" }))).due_date).toBe("2024-02-29")
    })

    it("IsoDate accepts dates and ISO timestamps, and rejects impossible days", () => {
      const ok = (s: string) => Exit.isSuccess(Schema.decodeUnknownExit(IsoDate)(s))
      expect(ok("2024-02-29")).toBe(true)
      expect(ok("2024-12-31")).toBe(true)
      expect(ok("2024-02-29T10:30:00Z")).toBe(true)
      expect(ok("2023-02-29")).toBe(false)
      expect(ok("2024-13-01")).toBe(false)
      expect(ok("2024-00-10")).toBe(false)
      expect(ok("tomorrow")).toBe(false)
      expect(ok("2024-02-29garbage")).toBe(false)
    })
  })

  describe("a date's or timestamp's time of day and offset", () => {
    const decodeEntry = decodeInput(TimeEntryCreate, "time_entry")
    const entry = (start_time: string) => ({ operation_id: "01a2384f-e23a-7c5b-9b1f-cd8453a71487", start_time })
    const BAD_TIME = ["2026-01-01T25:00:00Z", "2026-01-01T10:60Z", "2026-01-01T12:00:61Z", "2026-01-01T24:30:00Z", "2026-01-01T10:00:00+99:99", "2026-01-01T10:00:00+15:60"]
    const BAD_OFFSET = ["+16:00", "-16:00", "+1600", "-18:00", "+23:59", "-23:59"].map((z) => `2026-01-01T10:00:00${z}`)

    it("a date's time of day and offset are checked as a timestamp's: one that is none, or an offset past ±15:59, is DATE_FORMAT", () => {
      for (const due_date of [...BAD_TIME, ...BAD_OFFSET]) {
        expect(at(jobErrors(job({ due_date })), "due_date"), due_date).toMatchObject({ constraint: "DATE_FORMAT", message: "due_date must be an ISO 8601 date" })
      }
      for (const due_date of ["2026-01-01T24:00:00Z", "2026-01-01T10:00:00+15:59", "2026-01-01T10:00:00-1559", "2026-01-01 23:59:59.999999-05:00"]) {
        expect(Effect.runSync(decodeJob(job({ due_date }))).due_date, due_date).toBe(due_date)
      }
    })

    it("a timestamp's offset past ±15:59 (which JavaScript reads and PostgreSQL refuses) is DATE_FORMAT, in a body and a query", () => {
      for (const start_time of [...BAD_TIME, ...BAD_OFFSET]) {
        expect(only(failure(decodeEntry(entry(start_time))).details), start_time).toMatchObject({ field: "start_time", constraint: "DATE_FORMAT" })
        expect(queryInstant("from", start_time), start_time).toMatchObject({ field: "from", constraint: "DATE_FORMAT" })
      }
      expect(Effect.runSync(decodeEntry(entry("2026-01-01T10:00:00-15:59"))).start_time).toBe("2026-01-01T10:00:00-15:59")
      expect(queryInstant("from", "2026-01-01T10:00:00+15:59")).toBe(Date.parse("2025-12-31T18:01:00Z"))
    })
  })

  describe("length limits count characters (code points)", () => {
    it("255 emoji are a job_number of 255 characters, 256 are MAX_LENGTH; an empty one MIN_LENGTH", () => {
      expect(Effect.runSync(decodeJob(job({ job_number: "😀".repeat(255) }))).job_number).toBe("😀".repeat(255))
      expect(at(jobErrors(job({ job_number: "😀".repeat(256) })), "job_number")).toMatchObject({ constraint: "MAX_LENGTH", message: "job_number must have a length of at most 255" })
      expect(at(jobErrors(job({ job_number: "" })), "job_number")).toMatchObject({ constraint: "MIN_LENGTH", message: "job_number must have a length of at least 1" })
      // an unpaired surrogate is one code point (and refused as unstorable, not by its length)
      expect(at(jobErrors(job({ job_number: `${"😀".repeat(254)}\ud800` })), "job_number").constraint).toBe("PATTERN_MISMATCH")
    })
  })

  describe("years 0001 to 9999 (DECISIONS: dates and timestamps)", () => {
    const dateRange = "due_date must be between 0001-01-01 and 9999-12-31"
    const timeRange = "start_time must be between 0001-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z"
    const decodeEntry = decodeInput(TimeEntryCreate, "time_entry")
    const entry = (start_time: string) => ({ operation_id: "01a2384f-e23a-7c5b-9b1f-cd8453a71487", start_time })
    const entryErrors = (start_time: string) => failure(decodeEntry(entry(start_time))).details

    it("accepts dates of years 0001 to 0099 (JavaScript's Date.UTC reads them as 1900 to 1999) and 9999", () => {
      for (const due_date of ["0001-01-01", "0001-01-01T00:00:00Z", "0004-02-29", "0099-12-31", "0100-01-01", "9999-12-31"]) {
        expect(Effect.runSync(decodeJob(job({ due_date }))).due_date, due_date).toBe(due_date)
      }
      // the leap years of those centuries as anywhere else
      expect(at(jobErrors(job({ due_date: "0001-02-29" })), "due_date").constraint).toBe("DATE_FORMAT")
      expect(at(jobErrors(job({ due_date: "0100-02-29" })), "due_date").constraint).toBe("DATE_FORMAT")
    })

    it("refuses year 0000, a negative year and one past 9999 with the range: MIN_VALUE / MAX_VALUE", () => {
      for (const [due_date, constraint] of [
        ["0000-01-01", "MIN_VALUE"],
        ["0000-12-31T23:00:00-05:00", "MIN_VALUE"],
        ["-0001-01-01", "MIN_VALUE"],
        ["-000001-01-01", "MIN_VALUE"],
        ["10000-01-01", "MAX_VALUE"],
        ["+010000-01-01", "MAX_VALUE"],
        ["+275760-09-13T00:00:00Z", "MAX_VALUE"]
      ] as const) {
        expect(only(jobErrors(job({ due_date }))), due_date).toEqual({
          field: "due_date",
          message: dateRange,
          value: due_date,
          constraint,
          entityType: "job",
          entityIndex: 0
        })
      }
      // a year within the range written otherwise, or an impossible day of one outside it, is no date the API takes
      for (const due_date of ["+2024-01-01", "02024-01-01", "0000-02-30", "10000-13-01", "-0001-01-01x"]) {
        expect(at(jobErrors(job({ due_date })), "due_date").constraint, due_date).toBe("DATE_FORMAT")
      }
    })

    it("accepts timestamps from 0001-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z, by their instant", () => {
      for (const start_time of ["0001-01-01T00:00:00Z", "0001-01-01 00:00:00Z", "0001-01-01T00:30:00-00:30", "0050-06-01T12:00:00+02:00", "9999-12-31T23:59:59.999Z", "9999-12-31T23:59:59.9999Z"]) {
        expect(Effect.runSync(decodeEntry(entry(start_time))).start_time, start_time).toBe(start_time)
      }
      for (const [start_time, constraint] of [
        ["0001-01-01T00:00:00+01:00", "MIN_VALUE"],
        ["0001-01-01 00:59:59.999+01:00", "MIN_VALUE"],
        ["0000-06-01T00:00:00Z", "MIN_VALUE"],
        ["-0001-01-01T00:00:00Z", "MIN_VALUE"],
        ["9999-12-31T23:00:00-05:00", "MAX_VALUE"],
        ["+010000-01-01T00:00:00Z", "MAX_VALUE"]
      ] as const) {
        expect(only(entryErrors(start_time)), start_time).toMatchObject({ field: "start_time", message: timeRange, value: start_time, constraint })
      }
      expect(only(entryErrors("0001-01-01T25:00:00Z")).constraint).toBe("DATE_FORMAT")
    })

    it("reads a space for the T as the T, also before year 0100 (JavaScript's own reading takes 0001 for 2001)", () => {
      expect(readInstant("0001-01-01 10:00:00Z")).toBe(Date.parse("0001-01-01T10:00:00Z"))
      expect(readInstant("0050-01-01 10:00Z")).toBe(Date.parse("0050-01-01T10:00Z"))
      expect(readInstant("0001-01-01")).toBe(Date.parse("0001-01-01T00:00:00Z"))
      expect(readInstant("0000-01-01")).toBe("MIN_VALUE")
      expect(readInstant("9999-12-31T23:00:00-05:00")).toBe("MAX_VALUE")
    })

    it("a query's date or timestamp outside them is the range as well, MIN_VALUE / MAX_VALUE; one that is none DATE_FORMAT", () => {
      const range = "must be between 0001-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z"
      for (const [value, constraint] of [
        ["0000-12-31", "MIN_VALUE"],
        ["-0001-01-01T00:00:00Z", "MIN_VALUE"],
        ["0001-01-01T00:30:00+01:00", "MIN_VALUE"],
        ["10000-01-01", "MAX_VALUE"],
        ["9999-12-31T23:00:00-05:00", "MAX_VALUE"]
      ] as const) {
        expect(queryInstant("from", value), value).toEqual({ field: "from", message: `from ${range}`, value, constraint, entityType: "query", entityIndex: 0 })
      }
      for (const value of ["soon", "2026-02-30", "+2026-01-01"]) {
        expect(queryInstant("to", value), value).toEqual({
          field: "to", message: "to must be an ISO 8601 date or timestamp", value, constraint: "DATE_FORMAT", entityType: "query", entityIndex: 0
        })
      }
      expect(queryInstant("to", "9999-12-31T23:59:59.999Z")).toBe(Date.parse("9999-12-31T23:59:59.999Z"))
    })
  })

  describe("a timestamp without an offset is UTC (DECISIONS: dates and timestamps)", () => {
    const decodeEntry = decodeInput(TimeEntryCreate, "time_entry")
    const start = (start_time: string) => Effect.runSync(decodeEntry({ operation_id: "01a2384f-e23a-7c5b-9b1f-cd8453a71487", start_time })).start_time
    /** `f` with the process's local time 5 hours behind UTC (in January), 4 in summer. */
    const inNewYork = (f: () => void) => {
      const tz = process.env.TZ
      process.env.TZ = "America/New_York"
      try {
        expect(new Date(2026, 0, 2, 10).toISOString()).toBe("2026-01-02T15:00:00.000Z")
        f()
      } finally {
        if (tz === undefined) delete process.env.TZ
        else process.env.TZ = tz
      }
    }

    it("is read as UTC, not as the process's local time", () =>
      inNewYork(() => {
        expect(readInstant("2026-01-02T10:00:00")).toBe(Date.parse("2026-01-02T10:00:00Z"))
        expect(readInstant("2026-07-02 10:00")).toBe(Date.parse("2026-07-02T10:00:00Z"))
        expect(readInstant("0050-06-01 12:00:00.5")).toBe(Date.parse("0050-06-01T12:00:00.500Z"))
        expect(readInstant("2026-01-02")).toBe(Date.parse("2026-01-02T00:00:00Z"))
        // the range by the UTC instant: read as local time, the last millisecond was 5 hours past it
        expect(start("9999-12-31T23:59:59.999")).toBe("9999-12-31T23:59:59.999Z")
        expect(queryInstant("to", "9999-12-31T23:59:59.999")).toBe(Date.parse("9999-12-31T23:59:59.999Z"))
      }))

    it("is decoded with its zone written out, so that the database reads the same instant whatever its session's zone", () => {
      expect(start("2026-01-02T10:00:00")).toBe("2026-01-02T10:00:00Z")
      expect(start("2026-01-02 10:00")).toBe("2026-01-02 10:00Z")
      expect(start("0001-01-01T00:00:00.000001")).toBe("0001-01-01T00:00:00.000001Z")
      expect(start("2026-01-02")).toBe("2026-01-02T00:00:00Z")
      for (const given of ["2026-01-02T10:00:00Z", "2026-01-02T10:00:00+02:00", "2026-01-02 10:00-02:30"]) expect(start(given)).toBe(given)
    })
  })

  describe("all errors at once", () => {
    const input = {
      job_number: "",
      priority: -2,
      status: "bogus",
      due_date: "2024-13-01",
      parts: [
        { part_number: "P-1", quantity: 0, operations: [op(1), op(0)] },
        { part_number: "P-2", quantity: 1, operations: [] }
      ]
    }
    const e = failure(decodeJob(input))

    it("collects every problem with its path, entity and index", () => {
      const byField = Object.fromEntries(e.details.map((d) => [d.field, [d.constraint, d.entityType, d.entityIndex, d.value]]))
      expect(byField).toEqual({
        job_number: ["MIN_LENGTH", "job", 0, ""],
        priority: ["MIN_VALUE", "job", 0, -2],
        status: ["ENUM_CONSTRAINT", "job", 0, "bogus"],
        due_date: ["DATE_FORMAT", "job", 0, "2024-13-01"],
        "parts[0].quantity": ["MIN_VALUE", "part", 0, 0],
        "parts[0].operations[1].sequence": ["MIN_VALUE", "operation", 1, 0],
        "parts[1].operations": ["MIN_LENGTH", "part", 1, []]
      })
    })

    it("the summary message states the count", () => {
      expect(e.details).toHaveLength(7)
      expect(e.message).toMatch(/\b7 errors\b/)
      expect(e.message).toContain("job")
      expect(failure(decodeJob(job({ priority: -1 }))).message).toMatch(/\b1 error\b/)
    })

    it("every detail carries a non-empty message", () => {
      for (const d of e.details) expect(d.message.length).toBeGreaterThan(0)
    })
  })

  describe("standalone create", () => {
    it("operation create: part_id and operation_name required, sequence optional", () => {
      const details = failure(decodeOperation({})).details
      expect(details.map((d) => [d.field, d.constraint, d.entityType]).sort()).toEqual([
        ["operation_name", "NOT_NULL", "operation"],
        ["part_id", "NOT_NULL", "operation"]
      ])
      const ok = Effect.runSync(decodeOperation({ part_id: "0b7c3b36-5b0f-4b0e-9d4f-2f3c9a1b2c3d", operation_name: "Cut" }))
      expect(ok.sequence).toBeUndefined()
    })

    it("part create: quantity >= 1", () => {
      const d = only(failure(decodePart({ job_id: "0b7c3b36-5b0f-4b0e-9d4f-2f3c9a1b2c3d", part_number: "P", quantity: 0 })).details)
      expect(d).toMatchObject({ field: "quantity", constraint: "MIN_VALUE", entityType: "part", entityIndex: 0, value: 0 })
    })
  })
})

describe("decodePatchInput: job PATCH", () => {
  it("accepts the allowed fields", () => {
    const patch = Effect.runSync(patchJob({ customer: "B", due_date: "2024-02-29", notes: "n", metadata: { a: 1 }, priority: 3, status: "in_progress" }))
    expect(patch).toEqual({ customer: "B", due_date: "2024-02-29", notes: "n", metadata: { a: 1 }, priority: 3, status: "in_progress" })
  })

  for (const field of ["job_number", "id", "tenant_id", "created_at", "parts", "started_at"]) {
    it(`rejects the non-updatable field ${field} with ENUM_CONSTRAINT`, () => {
      expect(only(failure(patchJob({ [field]: "x" })).details)).toMatchObject({
        field,
        constraint: "ENUM_CONSTRAINT",
        value: "x",
        entityType: "job",
        entityIndex: 0
      })
    })
  }

  it("reports non-updatable fields together with invalid values", () => {
    const e = failure(patchJob({ job_number: "x", priority: -1, due_date: "2023-02-29" }))
    expect(e.details.map((d) => [d.field, d.constraint]).sort()).toEqual([
      ["due_date", "DATE_FORMAT"],
      ["job_number", "ENUM_CONSTRAINT"],
      ["priority", "MIN_VALUE"]
    ])
    expect(e.message).toMatch(/\b3 errors\b/)
  })

  it("null clears a nullable field", () => {
    expect(Effect.runSync(patchJob({ customer: null, due_date: null }))).toEqual({ customer: null, due_date: null })
  })
})

describe("renameAliases", () => {
  it("moves an alias to its canonical name", () => {
    expect(renameAliases({ customer_name: "Acme", description: "d" }, { customer_name: "customer", description: "notes" })).toEqual({
      customer: "Acme",
      notes: "d"
    })
  })

  it("keeps the canonical value when both are given, and drops the alias", () => {
    expect(renameAliases({ customer_name: "Alias", customer: "Canonical" }, { customer_name: "customer" })).toEqual({ customer: "Canonical" })
  })

  it("returns the input itself when no alias is present, and leaves non-objects alone", () => {
    const input = { customer: "x" }
    expect(renameAliases(input, { customer_name: "customer" })).toBe(input)
    expect(renameAliases(null, { a: "b" })).toBe(null)
    expect(renameAliases([1], { a: "b" })).toEqual([1])
  })

  it("normalizeJobInput renames job and nested operation aliases before decoding", () => {
    const input = normalizeJobInput({
      job_number: "J",
      customer_name: "Acme",
      description: "rush",
      parts: [{ part_number: "P", quantity: 1, operations: [{ operation_name: "Cut", sequence: 1, estimated_time: 12, instructions: "go" }] }]
    })
    const decoded = Effect.runSync(decodeJob(input))
    expect(decoded.customer).toBe("Acme")
    expect(decoded.notes).toBe("rush")
    expect(decoded.parts[0]!.operations[0]!.estimated_time_minutes).toBe(12)
    expect(decoded.parts[0]!.operations[0]!.notes).toBe("go")
  })
})

describe("input PostgreSQL cannot store (issue 8)", () => {
  it("isStorableText refuses NUL and unpaired surrogates, and keeps surrogate pairs", () => {
    expect(isStorableText("plain ü €")).toBe(true)
    expect(isStorableText("rocket \ud83d\ude80")).toBe(true)
    expect(isStorableText("a\u0000b")).toBe(false)
    expect(isStorableText("\ud83d")).toBe(false)
    expect(isStorableText("\ude80x")).toBe(false)
    expect(isStorableText("\ude80\ud83d")).toBe(false)
  })

  it("utf8Text reads UTF-8 (a byte order mark dropped) and refuses bytes that are not, instead of reading U+FFFD", () => {
    expect(utf8Text(Buffer.from("Müller €"))).toBe("Müller €")
    expect(utf8Text(Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d]))).toBe("{}")
    expect(utf8Text(Buffer.from("\uFFFD", "utf8"))).toBe("\uFFFD")
    expect(utf8Text(Buffer.from("Müller", "latin1"))).toBeUndefined()
    expect(utf8Text(Buffer.from([0xe2, 0x82]))).toBeUndefined()
    expect(utf8Text(new ArrayBuffer(0))).toBe("")
  })

  it("unstorableDetails names every bad value and key by its path, with the entity of nested arrays", () => {
    const input = { job_number: "ok", parts: [{ notes: "x", operations: [{ notes: "\u0000" }] }], metadata: { "k\ud800": 1 } }
    const details = unstorableDetails("job", input)
    expect(details.map((d) => [d.field, d.constraint, d.entityType, d.entityIndex])).toEqual([
      ["parts[0].operations[0].notes", "PATTERN_MISMATCH", "operation", 0],
      ["metadata.k\ud800", "PATTERN_MISMATCH", "job", 0]
    ])
  })

  it("unstorableDetails names every number beyond a double's range (JSON's 1e400, read as ±Infinity) by its path", () => {
    const input = { metadata: { a: Infinity, b: [1.5e308, -Infinity], c: Number.MAX_VALUE }, parts: [{ metadata: { n: -Infinity } }] }
    expect(unstorableDetails("job", input).map((d) => [d.field, d.constraint, d.entityType, d.entityIndex])).toEqual([
      ["metadata.a", "MAX_VALUE", "job", 0],
      ["metadata.b[1]", "MIN_VALUE", "job", 0],
      ["parts[0].metadata.n", "MIN_VALUE", "part", 0]
    ])
  })

  it("nestsDeeperThan counts arrays and objects, and stops at the limit (100,000 levels do not overflow the stack)", () => {
    const deep = JSON.parse("[".repeat(100_000) + "]".repeat(100_000))
    expect(nestsDeeperThan(deep, 64)).toBe(true)
    expect(nestsDeeperThan({ a: [{ b: [1] }] }, 4)).toBe(false)
    expect(nestsDeeperThan({ a: [{ b: [1] }] }, 3)).toBe(true)
    expect(nestsDeeperThan("text", 0)).toBe(false)
  })

  it("unstorableDetails names each field nested deeper than MAX_INPUT_DEPTH once, in its entity, without the value, and agrees with nestsDeeperThan", () => {
    const deep = (levels: number) => JSON.parse("[".repeat(levels) + "]".repeat(levels))
    const input = {
      job_number: "ok",
      metadata: { a: deep(100_000), b: deep(100_000) },
      parts: [{ part_number: "P" }, { metadata: { x: [deep(70)] }, operations: [{ metadata: deep(70) }, { metadata: deep(70) }] }]
    }
    const details = unstorableDetails("job", input)
    expect(details.map((d) => [d.field, d.constraint, d.entityType, d.entityIndex, d.value])).toEqual([
      ["metadata", "MAX_LENGTH", "job", 0, null],
      ["parts[1].metadata", "MAX_LENGTH", "part", 1, null],
      ["parts[1].operations[0].metadata", "MAX_LENGTH", "operation", 0, null],
      ["parts[1].operations[1].metadata", "MAX_LENGTH", "operation", 1, null]
    ])
    expect(details[0]!.message).toBe("metadata nests arrays and objects deeper than 64 levels")
    // the same limit as the HTTP layer's 400: a body nestsDeeperThan lets through gets no such detail
    for (const levels of [61, 62, 63, 64]) {
      const body = { metadata: { a: deep(levels) } }
      expect(unstorableDetails("job", body).length > 0, `${levels}`).toBe(nestsDeeperThan(body, MAX_INPUT_DEPTH))
    }
    expect(unstorableDetails("job", { metadata: { a: deep(62) } })).toEqual([])
  })

  it("decodeInput reports unstorable strings together with the schema's problems", () => {
    const exit = Effect.runSyncExit(decodeInput(OperationCreate, "operation")({ part_id: "nope", operation_name: "a\u0000" }))
    const fields = Exit.isFailure(exit) ? (exit.cause.reasons[0] as any).error.details.map((d: ValidationDetail) => `${d.field}:${d.constraint}`) : []
    expect(fields).toEqual(expect.arrayContaining(["operation_name:PATTERN_MISMATCH", "part_id:UUID_FORMAT"]))
  })
})
