// A memo of a pure function of a string for the dispatcher's per-attempt work (URL parsing, signing keys): at most
// `capacity` entries, emptied when full (the keys are few webhook URLs and secrets; a miss only recomputes).
export const boundedMemo = <V>(compute: (key: string) => V, capacity = 1_000): (key: string) => V => {
  const memo = new Map<string, V>()
  return (key) => {
    let value = memo.get(key)
    if (value === undefined) {
      if (memo.size >= capacity) memo.clear()
      memo.set(key, value = compute(key))
    }
    return value
  }
}
