// makeDirectory, the `mkdir -p` of the embedded database's directory and the CLI's lock: what Node's recursive
// mkdirSync does where it returns. Where Node's never returns (procfs), cli.test.ts runs `mes migrate` as a process,
// so that a regression fails on the test's timeout instead of blocking this worker for ever.
import { existsSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { makeDirectory, unusableDirectory } from "../src/index.ts"

const tmp = mkdtempSync(join(tmpdir(), "mes-directory-test-"))
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

const codeOf = (f: () => void) => {
  try {
    f()
    return undefined
  } catch (e) {
    return (e as NodeJS.ErrnoException).code
  }
}

describe("makeDirectory", () => {
  it("makes the directory and the missing ones above it; a directory already there is fine", () => {
    const deep = join(tmp, "a", "b", "c")
    makeDirectory(deep)
    expect(statSync(deep).isDirectory()).toBe(true)
    makeDirectory(deep)
    makeDirectory(join(tmp, "a"))
    expect(statSync(deep).isDirectory()).toBe(true)
  })

  it("refuses a file where the directory would be (EEXIST) or above it (ENOTDIR)", () => {
    const file = join(tmp, "a-file")
    writeFileSync(file, "")
    expect(codeOf(() => makeDirectory(file))).toBe("EEXIST")
    expect(codeOf(() => makeDirectory(join(file, "x", "y")))).toBe("ENOTDIR")
    expect(existsSync(join(file, "x"))).toBe(false)
  })

  it("refuses a dangling symbolic link where the directory would be or above it, saying so", () => {
    const link = join(tmp, "dangling")
    symlinkSync(join(tmp, "nowhere"), link)
    expect(unusableDirectory(link)).toBe(`cannot be a directory (ENOENT: a symbolic link to nothing, mkdir '${link}')`)
    expect(unusableDirectory(join(link, "storage", "x"))).toBe(`cannot be a directory (ENOENT: a symbolic link to nothing, mkdir '${link}')`)
    expect(existsSync(join(tmp, "nowhere"))).toBe(false)
    expect(unusableDirectory(join(tmp, "d", "e"))).toBeUndefined()
    expect(statSync(join(tmp, "d", "e")).isDirectory()).toBe(true)
    const file = join(tmp, "another-file")
    writeFileSync(file, "")
    expect(unusableDirectory(file)).toBe("is a file, not a directory")
  })
})
