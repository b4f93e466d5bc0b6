// The validation-detail builder (spec 7.3): turns schema failures and rule checks into
// `{field, message, value, constraint, entityType, entityIndex}` items, all at once.
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import * as SchemaIssue from "effect/SchemaIssue"
import { ValidationFailed } from "./errors.ts"
import { hasAtMostChars, isoRangeMessage } from "./fields.ts"

export type Constraint =
  | "NOT_NULL"
  | "FK_CONSTRAINT"
  | "FK_REQUIRED"
  | "UUID_FORMAT"
  | "TYPE_MISMATCH"
  | "MIN_VALUE"
  | "MAX_VALUE"
  | "MIN_LENGTH"
  | "MAX_LENGTH"
  | "PATTERN_MISMATCH"
  | "ENUM_CONSTRAINT"
  | "DATE_FORMAT"
  | "UNIQUE_CONSTRAINT"
  | "CIRCULAR_REFERENCE"

export interface ValidationDetail {
  readonly field: string
  readonly message: string
  readonly value: unknown
  readonly constraint: Constraint
  readonly entityType: string
  readonly entityIndex: number
}

export type Path = ReadonlyArray<string | number>

/** `["parts", 0, "operations", 1, "sequence"]` → `parts[0].operations[1].sequence` */
export const formatPath = (path: Path): string =>
  path.reduce<string>(
    (acc, k) => (typeof k === "number" ? `${acc}[${k}]` : acc === "" ? k : `${acc}.${k}`),
    ""
  )

// Nested arrays name the entity of their items (spec 7.3 entityType).
const childEntity: Record<string, string> = { parts: "part", operations: "operation", items: "item" }

const entityOf = (root: string, path: Path): { entityType: string; entityIndex: number } => {
  let entityType = root
  let entityIndex = 0
  for (let i = 0; i < path.length - 1; i++) {
    const k = path[i]
    const next = path[i + 1]
    // an index into an array of entities (not of values: a batch's operation_ids[1] is still batch 0)
    if (typeof k === "string" && typeof next === "number" && Object.hasOwn(childEntity, k)) {
      entityType = childEntity[k]!
      entityIndex = next
    }
  }
  return { entityType, entityIndex }
}

const valueAt = (input: unknown, path: Path): unknown => {
  let v: unknown = input
  for (const k of path) {
    if (v === null || typeof v !== "object") return undefined
    v = (v as Record<string | number, unknown>)[k]
  }
  return v === undefined ? null : v
}

/** One detail for a rule the schema cannot express (uniqueness, references, ...). */
export const detail = (
  root: string,
  input: unknown,
  path: Path,
  constraint: Constraint,
  message: string,
  value: unknown = valueAt(input, path)
): ValidationDetail => ({ field: formatPath(path), message, value, constraint, ...entityOf(root, path) })

/** `n` and the word, plural unless `n` is 1: "1 error", "2 errors", "0 jobs". */
export const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? "" : "s"}`

export const validationFailed = (root: string, details: ReadonlyArray<ValidationDetail>) =>
  new ValidationFailed({
    message: `Validation failed for ${root}: ${plural(details.length, "error")}`,
    details
  })

/** Fails with ValidationFailed when there are details. */
export const failIfAny = (root: string, details: ReadonlyArray<ValidationDetail>) =>
  details.length === 0 ? Effect.void : Effect.fail(validationFailed(root, details))

const filterConstraint: Record<string, Constraint> = {
  "effect/schema/isMinLength": "MIN_LENGTH",
  "effect/schema/isMaxLength": "MAX_LENGTH",
  "effect/schema/isLengthBetween": "MAX_LENGTH",
  "mes/isMinChars": "MIN_LENGTH",
  "mes/isMaxChars": "MAX_LENGTH",
  "effect/schema/isGreaterThanOrEqualTo": "MIN_VALUE",
  "effect/schema/isGreaterThan": "MIN_VALUE",
  "effect/schema/isLessThanOrEqualTo": "MAX_VALUE",
  "effect/schema/isLessThan": "MAX_VALUE",
  "effect/schema/isBetween": "MAX_VALUE",
  "effect/schema/isInt": "TYPE_MISMATCH",
  "effect/schema/isFinite": "TYPE_MISMATCH",
  "effect/schema/isUUID": "UUID_FORMAT",
  "effect/schema/isPattern": "PATTERN_MISMATCH",
  "mes/isIsoDate": "DATE_FORMAT",
  "mes/isIsoTimestamp": "DATE_FORMAT",
  "mes/isIsoNotBefore": "MIN_VALUE",
  "mes/isIsoNotAfter": "MAX_VALUE",
  "mes/isHttpUrl": "PATTERN_MISMATCH"
}

const isLiteralUnion = (ast: SchemaAST.AST): boolean =>
  SchemaAST.isUnion(ast) && ast.types.every((t) => SchemaAST.isLiteral(t))

const describe = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v)

const leafFor = (
  issue: SchemaIssue.Issue,
  value: unknown,
  name: string
): { constraint: Constraint; message: string } => {
  switch (issue._tag) {
    case "MissingKey":
      return { constraint: "NOT_NULL", message: `${name} is required` }
    case "InvalidType":
      return value === null || value === undefined
        ? { constraint: "NOT_NULL", message: `${name} is required` }
        : { constraint: "TYPE_MISMATCH", message: `${name} must be ${expected(issue.ast)}, got ${describe(value)}` }
    case "AnyOf": {
      if (isLiteralUnion(issue.ast)) {
        const allowed = (issue.ast as SchemaAST.Union).types.map((t) => String((t as SchemaAST.Literal).literal))
        return { constraint: "ENUM_CONSTRAINT", message: `${name} must be one of: ${allowed.join(", ")}` }
      }
      return value === null
        ? { constraint: "NOT_NULL", message: `${name} must not be null` }
        : { constraint: "TYPE_MISMATCH", message: `${name} has an invalid type (${describe(value)})` }
    }
    default:
      return { constraint: "TYPE_MISMATCH", message: `${name} is invalid` }
  }
}

const expected = (ast: SchemaAST.AST): string => {
  switch (ast._tag) {
    case "String":
      return "a string"
    case "Number":
      return "a number"
    case "Boolean":
      return "a boolean"
    case "Arrays":
      return "an array"
    case "Objects":
      return "an object"
    default:
      return "of another type"
  }
}

const filterMessage = (constraint: Constraint, name: string, rep: { id?: string; payload?: Record<string, unknown> } | undefined): string => {
  const p = rep?.payload ?? {}
  // a date or timestamp outside the years the API takes: the range, whichever end it is past
  if (rep?.id === "mes/isIsoNotBefore" || rep?.id === "mes/isIsoNotAfter") return isoRangeMessage(name, p)
  switch (constraint) {
    case "MIN_LENGTH":
      return `${name} must have a length of at least ${p.minLength}`
    case "MAX_LENGTH":
      return `${name} must have a length of at most ${p.maxLength}`
    case "MIN_VALUE":
      return `${name} must be at least ${p.minimum}`
    case "MAX_VALUE":
      return `${name} must be at most ${p.maximum}`
    case "UUID_FORMAT":
      return `${name} must be a UUID`
    case "DATE_FORMAT":
      return `${name} must be an ISO 8601 date`
    case "TYPE_MISMATCH":
      return rep?.id === "effect/schema/isFinite" ? `${name} must be a finite number` : `${name} must be an integer`
    default:
      return `${name} has an invalid format`
  }
}

/** Walks a schema issue tree into spec 7.3 details (every leaf, not only the first). */
export const issueDetails = (root: string, input: unknown, issue: SchemaIssue.Issue): Array<ValidationDetail> => {
  const out: Array<ValidationDetail> = []
  /** The details of a failed integer (or finiteness) check; each carries the value checked. */
  const integerChecks = new Set<ValidationDetail>()
  const walk = (i: SchemaIssue.Issue, path: Path): void => {
    switch (i._tag) {
      case "Pointer":
        return walk(i.issue, [...path, ...(i.path as ReadonlyArray<string | number>)])
      case "Composite":
        return i.issues.forEach((c) => walk(c, path))
      case "Encoding":
        return walk(i.issue, path)
      case "Filter": {
        const rep = (i.filter.annotations as { representation?: { id?: string; payload?: Record<string, unknown> } })
          ?.representation
        const constraint = filterConstraint[rep?.id ?? ""] ?? "PATTERN_MISMATCH"
        const name = formatPath(path) || root
        const custom = (i.filter.annotations as { message?: string } | undefined)?.message
        const d = detail(root, input, path, constraint, custom ?? filterMessage(constraint, name, rep))
        if (constraint === "TYPE_MISMATCH") integerChecks.add(d)
        out.push(d)
        return
      }
      case "AnyOf":
        if (!isLiteralUnion(i.ast) && i.issues.length > 0) return i.issues.forEach((c) => walk(c, path))
      // falls through: a literal union (enum) is one leaf
      default: {
        const name = formatPath(path) || root
        const v = valueAt(input, path)
        const { constraint, message } = leafFor(i, v, name)
        out.push(detail(root, input, path, constraint, message, v))
      }
    }
  }
  walk(issue, [])
  // A whole number too large to be exact (past 2^53, or 1e400 read as Infinity) fails the integer check by its size
  // alone: its bound's detail says what is wrong, and "must be an integer" beside it read as a second mistake.
  const bounded = new Set(out.filter((d) => d.constraint === "MIN_VALUE" || d.constraint === "MAX_VALUE").map((d) => d.field))
  const bySizeAlone = (d: ValidationDetail) =>
    integerChecks.has(d) && bounded.has(d.field) && typeof d.value === "number" && (Number.isInteger(d.value) || !Number.isFinite(d.value))
  // A nullable member's failures repeat per member; keep one detail per (field, constraint).
  const seen = new Set<string>()
  return out.filter((d) => {
    const key = `${d.field}|${d.constraint}`
    return seen.has(key) || bySizeAlone(d) ? false : (seen.add(key), true)
  })
}

// UTF-16 halves without their other half: UTF-8 (a URL's query) cannot carry them, only JSON's \u escapes
const UNPAIRED_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

// NUL, and unpaired surrogates: PostgreSQL's text, json and jsonb cannot hold them
const UNSTORABLE = new RegExp(`\\u0000|${UNPAIRED_SURROGATE.source}`)

/** True for a string with a UTF-16 half without its other half (which a URL would carry as U+FFFD). */
export const hasUnpairedSurrogate = (s: string): boolean => UNPAIRED_SURROGATE.test(s)

/** False for a string PostgreSQL cannot store (a NUL character or an unpaired surrogate). */
export const isStorableText = (s: string): boolean => !UNSTORABLE.test(s)

const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true })

/**
 * The text of UTF-8 bytes (a byte order mark dropped), or undefined where they are not UTF-8: read leniently, such
 * bytes become U+FFFD and would be stored as that (an ERP's Windows-1252 "Müller" as "M\uFFFDller").
 */
export const utf8Text = (bytes: Uint8Array | ArrayBuffer): string | undefined => {
  try {
    return STRICT_UTF8.decode(bytes)
  } catch {
    return undefined
  }
}

/** A value worth looking up in a unique name column: a storable string of 1 to 255 characters (code points). */
export const isNameCandidate = (v: unknown): v is string =>
  typeof v === "string" && v.length > 0 && hasAtMostChars(v, 255) && isStorableText(v)

/** Deeper input is refused: 400 for a body (the HTTP layer), a MAX_LENGTH detail in the domain (`unstorableDetails`). */
export const MAX_INPUT_DEPTH = 64

/** True when arrays and objects nest deeper than `max` levels; recursion at most `max` deep, stops at the first such branch. */
export const nestsDeeperThan = (value: unknown, max: number): boolean => {
  // no [value, depth] pair per value: a bulk body of 26,000 objects in ≈ 1 ms
  if (value === null || typeof value !== "object") return false
  if (max <= 0) return true
  if (Array.isArray(value)) {
    for (const child of value) if (nestsDeeperThan(child, max - 1)) return true
    return false
  }
  for (const k in value) {
    if (Object.hasOwn(value, k) && nestsDeeperThan((value as Record<string, unknown>)[k], max - 1)) return true
  }
  return false
}

/**
 * True when a string, number or field name anywhere in `value` cannot be stored, or arrays and objects nest deeper than
 * MAX_INPUT_DEPTH (as `nestsDeeperThan`): the input needs `unstorableDetails`' closer look.
 */
const needsACloserLook = (value: unknown, depth: number): boolean => {
  if (typeof value === "string") return !isStorableText(value)
  if (typeof value === "number") return !Number.isFinite(value)
  if (value === null || typeof value !== "object") return false
  if (depth >= MAX_INPUT_DEPTH) return true
  if (Array.isArray(value)) {
    for (const child of value) if (needsACloserLook(child, depth + 1)) return true
    return false
  }
  for (const k in value) {
    if (Object.hasOwn(value, k) && (!isStorableText(k) || needsACloserLook((value as Record<string, unknown>)[k], depth + 1))) return true
  }
  return false
}

/** The field a value deep in the input sits in: down through arrays of records (`parts[0].operations[1]`), then one name. */
const fieldOf = (path: Path): Path => {
  let i = 0
  while (typeof path[i] === "string" && childEntity[path[i] as string] !== undefined && typeof path[i + 1] === "number") i += 2
  return path.slice(0, i + 1)
}

/**
 * A number JSON read as ±Infinity (`1e400`): JSON has no such value, so in free JSON (`metadata`) it was stored as
 * null. MAX_VALUE (MIN_VALUE below zero) at its path, as a typed number field says of it.
 */
const infinite = (root: string, input: unknown, path: Path, v: number) =>
  detail(root, input, path, v > 0 ? "MAX_VALUE" : "MIN_VALUE", `${formatPath(path) || root} is too ${v > 0 ? "large" : "small"} to be stored (beyond ±1.7976931348623157e+308)`, v)

/** Whether `d` is an `infinite` detail. */
const isInfinite = (d: ValidationDetail) => typeof d.value === "number" && !Number.isFinite(d.value) && (d.constraint === "MAX_VALUE" || d.constraint === "MIN_VALUE")

/**
 * One detail (PATTERN_MISMATCH, with the field's path) for every string of the input, key or value, that
 * PostgreSQL cannot store, one (`infinite`) for every number beyond a double's range, and one (MAX_LENGTH, without the value) for each field whose arrays and objects nest
 * deeper than MAX_INPUT_DEPTH, which the HTTP layer refuses with 400 before: an adapter without that check (the
 * import, an embedding service) gets a validation error where the plan's JSON would overflow the stack.
 * Iterative, so hostile nesting cannot exhaust the stack.
 */
export const unstorableDetails = (root: string, input: unknown): Array<ValidationDetail> => {
  // the common case walks without building a path per value (1,000 bulk records of 5 parts × 4 operations:
  // 2.4 ms against 6.4)
  if (!needsACloserLook(input, 0)) return []
  const out: Array<ValidationDetail> = []
  const tooDeep = new Set<string>()
  const stack: Array<[unknown, Path]> = [[input, []]]
  while (stack.length > 0) {
    const [v, path] = stack.pop()!
    if (typeof v === "string") {
      if (!isStorableText(v)) {
        out.push(detail(root, input, path, "PATTERN_MISMATCH", `${formatPath(path) || root} contains a character that cannot be stored (NUL or an unpaired UTF-16 surrogate)`, v))
      }
    } else if (typeof v === "number") {
      if (!Number.isFinite(v)) out.push(infinite(root, input, path, v))
    } else if (v !== null && typeof v === "object" && path.length >= MAX_INPUT_DEPTH) {
      const field = fieldOf(path)
      const name = formatPath(field)
      if (!tooDeep.has(name)) {
        tooDeep.add(name)
        out.push(detail(root, input, field, "MAX_LENGTH", `${name || root} nests arrays and objects deeper than ${MAX_INPUT_DEPTH} levels`, null))
      }
    } else if (v !== null && typeof v === "object") {
      if (Array.isArray(v)) {
        for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], [...path, i]])
      } else {
        const keys = Object.keys(v)
        for (let i = keys.length - 1; i >= 0; i--) {
          const k = keys[i]!
          if (!isStorableText(k)) {
            out.push(detail(root, input, [...path, k], "PATTERN_MISMATCH", `a field name contains a character that cannot be stored (NUL or an unpaired UTF-16 surrogate)`, k))
          } else stack.push([(v as Record<string, unknown>)[k], [...path, k]])
        }
      }
    }
  }
  return out
}

/** Decodes a PATCH body: the schema's fields only, unknown keys are errors. */
export const decodePatchInput = <S extends Schema.Struct<any> & { readonly DecodingServices: never }>(schema: S, root: string) =>
  decodeInput(schema, root, { onlyKeys: Object.keys(schema.fields) })


/**
 * Decodes untrusted input against a schema, collecting every problem as spec 7.3 details.
 * The input must be a JSON object.
 */
export const decodeInput = <S extends Schema.Top & { readonly DecodingServices: never }>(
  schema: S,
  root: string,
  options: {
    readonly onlyKeys?: ReadonlyArray<string>
    /** The record a create makes: its fields that the create schema does not take are refused, as PATCH refuses them. */
    readonly record?: Schema.Struct<any>
  } = {}
) => {
  const decode = Schema.decodeUnknownExit(schema as any)
  const settable = "fields" in schema ? Object.keys((schema as unknown as Schema.Struct<any>).fields) : []
  const notSettable = options.record === undefined ? [] : Object.keys(options.record.fields).filter((k) => !settable.includes(k))
  return (input: unknown): Effect.Effect<S["Type"], ValidationFailed> => {
    if (input === null || typeof input !== "object" || Array.isArray(input)) {
      return Effect.fail(
        validationFailed(root, [
          { field: "", message: `Request body must be a JSON object`, value: input ?? null, constraint: "TYPE_MISMATCH", entityType: root, entityIndex: 0 }
        ])
      )
    }
    // PATCH bodies may only name updatable fields (spec 4.1-4.3 "allowed fields")
    const extra: Array<ValidationDetail> = options.onlyKeys === undefined
      ? []
      : Object.keys(input).filter((k) => !options.onlyKeys!.includes(k)).map((k) =>
        detail(root, input, [k], "ENUM_CONSTRAINT", `${k} cannot be updated; updatable fields: ${options.onlyKeys!.join(", ")}`)
      )
    for (const k of notSettable) {
      if (k in input) extra.push(detail(root, input, [k], "ENUM_CONSTRAINT", `${k} cannot be set on create; settable fields: ${settable.join(", ")}`))
    }
    extra.push(...unstorableDetails(root, input))
    const exit = decode(input, { errors: "all" }) as Exit.Exit<S["Type"], Schema.SchemaError>
    if (Exit.isSuccess(exit)) return extra.length === 0 ? Effect.succeed(exit.value) : Effect.fail(validationFailed(root, extra))
    const err = exit.cause.reasons.find((r) => r._tag === "Fail") as { error: Schema.SchemaError } | undefined
    if (err === undefined) return Effect.die(exit.cause)
    // a field the schema refuses is said to be wrong once: a typed number's own bound, or a string's type, alone
    const issues = issueDetails(root, input, err.error.issue)
    const refused = new Set(issues.map((d) => d.field))
    return Effect.fail(validationFailed(root, [...extra.filter((d) => !(isInfinite(d) && refused.has(d.field))), ...issues]))
  }
}
