// Pieces of SQL text for statements built once per shape (their values travel as parameters).

/** A column or table name as an identifier; only plain lower-case names pass. */
export const ident = (name: string) => {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`bad column name ${name}`)
  return `"${name}"`
}

/** A string constant. */
export const literal = (s: string) => `'${s.replace(/'/g, "''")}'`

/** A text[] constant (statuses of a guard). */
export const textArray = (items: ReadonlyArray<string>) => `ARRAY[${items.map(literal).join(", ")}]::text[]`
