// Directories for the embedded database (and the CLI's lock beside it): the domain's `mkdir -p` that always
// returns, over Node's file system.
import { mkdirSync, statSync } from "node:fs"
import { dirname, resolve } from "node:path"
import { directories } from "@mes/domain"

/**
 * `makeDirectory(path)` makes `path` and the missing directories above it, or throws why it cannot;
 * `unusableDirectory(dir)` makes it too, and says why it cannot be one (undefined when it is one now).
 */
export const { make: makeDirectory, unusable: unusableDirectory } = directories({ statSync, mkdirSync }, { resolve, dirname })
