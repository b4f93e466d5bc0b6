// The part status roll-up (spec 2.2, 3.2) in a statement that moves operations: a part is completed
// when all its operations are, in progress once any has started (mes_part_status, migration 0014).
// Only parts whose status changes are written, with part.started / part.completed. A move that
// completes operations rolls up through mes_roll_up_parts, serialized per part, so two requests
// completing a part's last operations at once still see each other.
import { eventPlan } from "@mes/domain"
import { type Catalog, fieldOf } from "./catalog.ts"
import type { EventSource } from "./events.ts"

/**
 * The roll-up after completions of the parts `partIds` yields (SQL for a uuid[]; $1 is the tenant),
 * given the operations the statement moved (`moved`: SQL yielding id and status after the move): the
 * parts written, each row a part with `previous`, its status before.
 */
const completionRollUpSql = (partIds: string, moved: string) =>
  `SELECT (r.rolled).*, r.was AS previous
   FROM (SELECT coalesce(array_agg(mv.id), '{}') AS ids, coalesce(array_agg(mv.status), '{}') AS statuses FROM (${moved}) mv) mv,
     mes_roll_up_parts($1, ${partIds}, mv.ids, mv.statuses) r`

/**
 * `moved`: a CTE of the moved operations (id, part_id, status after the move); `parts`: SQL that yields
 * the ids of the parts to roll up; `completes`: whether the move completes operations. Adds the CTE
 * `pu` (the parts written, with `previous`) and their events.
 */
export const rollUp = (catalog: Catalog["Service"], moved: string, parts: string, o: { readonly completes: boolean }) => {
  const ctes: Array<readonly [string, string]> = o.completes
    ? [["pu", completionRollUpSql(`ARRAY(${parts})`, `SELECT id, status FROM ${moved}`)]]
    : [["rs", `
      SELECT p.id, p.status AS previous,
        mes_part_status(bool_and(coalesce(mm.status, o.status) = 'completed'), bool_or(coalesce(mm.status, o.status) <> 'not_started'), p.status) AS status
      FROM parts p JOIN operations o ON o.tenant_id = $1 AND o.part_id = p.id
      LEFT JOIN ${moved} mm ON mm.id = o.id
      WHERE p.tenant_id = $1 AND p.id IN (${parts})
      GROUP BY p.id, p.status`], ["pu", `
      UPDATE parts p SET status = rs.status, updated_at = now()
      FROM rs WHERE p.tenant_id = $1 AND p.id = rs.id AND p.status <> rs.status
      RETURNING p.*, rs.previous`]]
  const event = (type: "part.started" | "part.completed", where: string): EventSource => ({
    event: eventPlan(type),
    from: `pu WHERE ${where}`,
    payload: { field: fieldOf(catalog.columns("parts"), "pu"), record: "pu.doc", previous: "pu.previous" }
  })
  return {
    ctes,
    events: [event("part.completed", "pu.status = 'completed'"), event("part.started", "pu.status = 'in_progress' AND pu.previous = 'not_started'")]
  }
}
