#ifndef NSE_CSQLITE_SHIM_H
#define NSE_CSQLITE_SHIM_H
#include <sqlite3.h>

/* SQLITE_TRANSIENT is a cast of -1 to a function pointer, which Swift cannot express: these wrappers bind text
   and blobs that SQLite copies before the call returns, so Swift's buffers need live only for the call. */
static inline int nse_sqlite3_bind_text(sqlite3_stmt *statement, int index, const char *text, int length) {
    return sqlite3_bind_text(statement, index, text, length, SQLITE_TRANSIENT);
}
static inline int nse_sqlite3_bind_blob(sqlite3_stmt *statement, int index, const void *bytes, int length) {
    return sqlite3_bind_blob(statement, index, bytes, length, SQLITE_TRANSIENT);
}
/* sqlite3_db_config is variadic, which Swift cannot call. Leaves the write-ahead log as it is when the last connection
   closes: a process that opens the database for one short job does not pay a checkpoint (two syncs) on its way out;
   the next commit past the auto-checkpoint size does it. */
static inline int nse_sqlite3_no_checkpoint_on_close(sqlite3 *db) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)0);
}
#endif
