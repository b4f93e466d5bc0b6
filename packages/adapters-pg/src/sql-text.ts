// Pieces of SQL text for statements built once per shape (their values travel as parameters), and
// the cache that keeps each shape's statement.

/** A column or table name as an identifier; only plain lower-case names pass. */
export const ident = (name: string) => {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`bad column name ${name}`)
  return `"${name}"`
}

/** A string constant. */
export const literal = (s: string) => `'${s.replace(/'/g, "''")}'`

/** A text[] constant (statuses of a guard). */
export const textArray = (items: ReadonlyArray<string>) => `ARRAY[${items.map(literal).join(", ")}]::text[]`

/** A PostgreSQL array literal for an array parameter (`{a,b}`) of items that need no quoting: ids, statuses. */
export const arrayParam = (items: ReadonlyArray<string>) => `{${items.join(",")}}`

/** The keys that hold a value (not undefined) in any of `rows`, in the order first seen. */
export const givenKeys = (rows: ReadonlyArray<object>): Array<string> => {
  const keys = new Set<string>()
  // no Object.entries: a bulk sync asks this of 26,000 rows several times
  for (const r of rows) {
    for (const k in r) if (Object.hasOwn(r, k) && (r as Record<string, unknown>)[k] !== undefined) keys.add(k)
  }
  return [...keys]
}

/** The part of a statement's shape that `row` decides: the keys it gives a value, sorted. */
export const shapeKey = (row: object) => givenKeys([row]).sort().join(",")

/** Statements built once per shape key and then reused, so the driver keeps each one prepared. */
export const statementCache = () => {
  const cache = new Map<string, string>()
  return (key: string, build: () => string): string => {
    let statement = cache.get(key)
    if (statement === undefined) cache.set(key, statement = build())
    return statement
  }
}
