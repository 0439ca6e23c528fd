// The `os` module a developer's extension imports (`import os`, `import os.log`): Apple's unified logging, whose
// implementation is NSEOSLog (Sources/NSEOSLog). Compiled by `nse extension build` as the overlay of the Clang module
// `os` (SDK/COSShim), so that its submodules `os.log` and `os.signpost` resolve.
@_exported public import NSEOSLog
