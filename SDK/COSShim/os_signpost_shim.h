// The Clang half of `import os.signpost` (see module.modulemap): the import resolves, as on Apple's platforms, but nse
// has no signpost API (os_signpost, OSSignposter, OSSignpostID): code that calls one does not compile (docs/sdk.md).
