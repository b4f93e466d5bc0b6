// The toolsets `--toolsets` selects from. A module of its own, with no imports, so `mes --help` can name
// them without loading the tools (the API definition) or the SDK.
export const TOOLSETS = ["dashboard", "jobs", "parts", "operations", "quality", "substeps"] as const
export type Toolset = (typeof TOOLSETS)[number]
