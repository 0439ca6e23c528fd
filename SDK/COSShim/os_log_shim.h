// The Clang half of `import os.log` (see module.modulemap). Apple's <os/log.h> declares the C API (os_log_create,
// os_log_type_t, the os_log macros); nse declares those types in Swift (Sources/os), so this header is empty: it only
// gives the submodule `os.log` a header to exist by.
