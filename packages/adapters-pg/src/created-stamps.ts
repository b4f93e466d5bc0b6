// The stamps of a job created in a status of its own (domain jobCreatedMoves), for the INSERT of a create or sync.
import { jobCreatedMoves } from "@mes/domain"
import { literal } from "./sql-text.ts"

/**
 * Column → value of a new job whose status is the SQL expression `status`: each stamp of the moves that lead to that
 * status at the creation time (now(), or NULL for a stamp a later move clears), `actual_duration` 0; NULL for a
 * status no move stamps (not_started, or none given).
 */
export const createdJobStamps = (status: string): Record<string, string> => {
  const cases = new Map<string, Array<string>>()
  for (const [to, moves] of jobCreatedMoves) {
    const values = new Map<string, string>()
    for (const move of moves) {
      for (const [column, stamp] of Object.entries(move.stamps)) values.set(column, stamp === "clear" ? "NULL" : "now()")
      if (move.effects?.includes("actual_duration")) values.set("actual_duration", "0::float8")
    }
    for (const [column, value] of values) cases.set(column, [...(cases.get(column) ?? []), `WHEN ${literal(to)} THEN ${value}`])
  }
  return Object.fromEntries([...cases].map(([column, whens]) => [column, `CASE ${status} ${whens.join(" ")} END`]))
}
