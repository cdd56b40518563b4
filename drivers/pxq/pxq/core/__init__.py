"""The core: errors, escaping, bounds, paths, records and their schemas, the registries the binaries
export, layouts, process groups, and the plugin declarations. It imports nothing of pxq above it."""
