// The Clang half of `import SQLite3` (see module.modulemap): the system's header, whole, as Apple's module has it.
#include <sqlite3.h>
