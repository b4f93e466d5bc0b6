import { defineProject } from "vitest/config"

export default defineProject({
  resolve: { conditions: ["development"] },
  test: { include: ["test/**/*.test.ts"], testTimeout: 60_000, hookTimeout: 120_000 }
})
