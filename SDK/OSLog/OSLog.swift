// OSLog: Apple's framework for reading and writing the unified log. On Apple's platforms it re-exports `os`, so a
// file that says `import OSLog` uses `Logger` and `os_log`; so does nse's (docs/sdk.md). Apple's reading API
// (`OSLogStore`, `OSLogEntry`) is not here: an extension has nothing to read. Compiled by `nse extension build`.
@_exported public import os
