// Issues and NCRs: create, list, read, update (spec 4.7). No delete: the spec has none.
import { eventPlan, type EventType } from "../events.ts"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { BadRequest, Forbidden, ValidationFailed } from "../errors.ts"
import { Conflict, NotFound } from "../errors.ts"
import { readOwned, takenFirst } from "../crud.ts"
import type { JsonText } from "../json.ts"
import { hasAtMostChars, renameAliases } from "../fields.ts"
import { CurrentTenant, newId, References } from "../ports.ts"
import { listWith, type Page } from "../query.ts"
import { checkedReferences, checkOwner, checkReferences, ensureOwned, missingReferenceDetails, type Reference } from "../references.ts"
import { decodeInput, decodePatchInput, detail, isNameCandidate, validationFailed, type ValidationDetail } from "../validation.ts"
import {
  Issue,
  issueAliases,
  IssueCreate,
  issueListSpec,
  IssuePatch,
  type IssueStatus
} from "./schema.ts"
import { type IssueStamps, IssueStore } from "./store.ts"

type Services = CurrentTenant

const ENTITY = "issue"
/** A value that would pass the ncr_number rule (1-50 storable chars), so its uniqueness can be checked first. */
const isNcrNumber = (v: unknown): v is string => isNameCandidate(v) && hasAtMostChars(v, 50)

const profileFields = ["reported_by_id", "assigned_to_id", "resolved_by_id", "verified_by_id"] as const

const profileRefs = (input: Partial<Record<(typeof profileFields)[number], string | null>>): Array<Reference> =>
  profileFields.flatMap((f) => (input[f] != null ? [{ table: "profiles" as const, id: input[f]!, path: [f] }] : []))

/** resolved_at follows the status: set when it becomes resolved or closed (kept while it stays so), cleared when reopened. */
const resolvedStamp = (status: IssueStatus | undefined): IssueStamps =>
  status === undefined ? {} : status === "resolved" || status === "closed" ? { resolved_at: "first" } : { resolved_at: "clear" }

/** verified_at follows verified_by_id: set (now) with a verifier, cleared with null. */
const verifiedStamp = (verifiedBy: string | null | undefined): IssueStamps =>
  verifiedBy === undefined ? {} : verifiedBy === null ? { verified_at: "clear" } : { verified_at: "now" }

const severityRequired = (input: unknown): ValidationDetail =>
  detail(ENTITY, input, ["severity"], "NOT_NULL", "severity is required when issue_type is ncr")

export class Issues extends Context.Service<Issues, {
  /** Creates a general issue or an NCR; an NCR without ncr_number gets the next `NCR-<year>-NNNNN`. */
  readonly create: (input: unknown) => Effect.Effect<Issue, Conflict | ValidationFailed, Services>
  readonly list: (query: Readonly<Record<string, string>>) => Effect.Effect<Page<Issue>, BadRequest | ValidationFailed, Services>
  readonly get: (id: string) => Effect.Effect<JsonText<Issue>, NotFound | Forbidden, Services>
  /** PATCH: verified_by_id stamps verified_at, status stamps or clears resolved_at, in the same statement. */
  readonly update: (id: string, input: unknown) => Effect.Effect<JsonText<Issue>, NotFound | Forbidden | Conflict | ValidationFailed, Services>
}>()("mes/domain/Issues") {
  static readonly layer = Layer.effect(Issues, Effect.gen(function*() {
    const store = yield* IssueStore
    const references = yield* References
    const withRefs = Effect.provideService(References, references)
    const decodeCreate = decodeInput(IssueCreate, ENTITY, { record: Issue })
    const decodePatch = decodePatchInput(IssuePatch, ENTITY)

    const takenMessage = (value: unknown) => `an issue with ncr_number ${value} already exists`
    const taken = (value: unknown) => new Conflict({ message: takenMessage(value), field: "ncr_number" })

    /** spec 7.4: a refusal (`e`) whose ncr_number another issue of the tenant has is 409 instead, even when other fields are invalid. */
    const numberFirst = (tenantId: string, body: unknown, exceptId?: string) => {
      const value = (body as Record<string, unknown> | null | undefined)?.ncr_number
      return takenFirst({
        field: "ncr_number",
        value: isNcrNumber(value) ? value : undefined,
        taken: (v) => store.ncrNumberTaken(tenantId, v, exceptId),
        message: takenMessage
      })
    }

    return Issues.of({
      create: (raw) =>
        withRefs(Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          const body = renameAliases(raw, issueAliases)
          // spec 7.4: a given ncr_number that is taken is 409 before any 422; looked up only when the body is refused
          // (the unique key answers it when the insert is tried)
          const refuse = numberFirst(tenant.id, body)
          const b = (body ?? {}) as Record<string, unknown>
          const rule = b.issue_type === "ncr" && b.severity == null ? [severityRequired(body)] : []
          const input = yield* decodeCreate(body).pipe(
            Effect.catchTag("ValidationFailed", (e) => refuse(validationFailed(ENTITY, [...e.details, ...rule])))
          )
          const refs: Array<Reference> = [{ table: "operations", id: input.operation_id, path: ["operation_id"] }, ...profileRefs(input)]
          // an NCR without severity is refused with every other reason
          if (rule.length > 0) return yield* refuse(validationFailed(ENTITY, [...(yield* checkReferences(ENTITY, body, refs)), ...rule]))
          const ncr = input.issue_type === "ncr"
          const events: Array<EventType> = [ncr ? "ncr.created" : "issue.created", ...(ncr && input.verified_by_id != null ? ["ncr.verified" as const] : [])]
          return yield* store.insert(
            { ...input, id: newId(), tenant_id: tenant.id },
            { ...resolvedStamp(input.status), ...verifiedStamp(input.verified_by_id) },
            { refs: checkedReferences(refs), events: events.map(eventPlan) }
          ).pipe(Effect.catchTags({
            MissingReferences: (e) => refuse(validationFailed(ENTITY, missingReferenceDetails(ENTITY, body, refs, e.indexes))),
            Conflict: (e) => Effect.fail(e.field === "ncr_number" ? taken(input.ncr_number) : e)
          }))
        })),
      list: (raw) =>
        listWith(issueListSpec, store.list)(raw),
      get: (id) => readOwned("issues", id, (tenantId) => store.read(tenantId, id)),
      update: (id, raw) =>
        withRefs(Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          const body = renameAliases(raw, issueAliases)
          // spec 7.4: 404 / 403, then 409, then 422; the owner and the number are looked up only when the body is refused
          const refuse = numberFirst(tenant.id, body, id)
          const input = yield* decodePatch(body).pipe(
            Effect.tapError(() => ensureOwned("issues", id)),
            Effect.catchTag("ValidationFailed", refuse)
          )
          const refs = profileRefs(input)
          const outcome = yield* store.patch(tenant.id, id, input, {
            refs: checkedReferences(refs),
            stamps: { ...resolvedStamp(input.status), ...verifiedStamp(input.verified_by_id) },
            // ncr.verified when an NCR gets a verifier (spec 6.1: corrective action verified); the store writes it only on a change
            events: input.verified_by_id != null ? [eventPlan("ncr.verified")] : []
          }).pipe(Effect.catchTag("Conflict", (e) => Effect.fail(e.field === "ncr_number" ? taken(input.ncr_number) : e)))
          yield* checkOwner("issues", id, outcome.owner)
          if (outcome.record !== undefined) return outcome.record
          // refused: a number taken elsewhere is 409 before the 422 of the references and the NCR's severity
          const details = missingReferenceDetails(ENTITY, body, refs, outcome.missingRefs)
          if (outcome.current === "ncr" && input.severity === null) details.push(severityRequired(body))
          return yield* refuse(details.length > 0 ? validationFailed(ENTITY, details) : new NotFound({ entity: ENTITY, id }))
        }))
    })
  }))
}
