// NSEDatabase: durable state in SQLite, one file per owner (the App Group store, the SIP server's bindings and held
// messages, serve's results), shared by processes: a write commits whole or leaves nothing.
//
// Files:
//   Database       WAL kept between connections (a short-lived process syncs only what it commits durably), a 10 s
//                  busy timeout, numbered migrations, write transactions each `.durable` (synced) or `.crashSafe`
//   SQLValue       bound parameters and read columns
//   DatabaseError  what kind of failure (full, busy, corrupt…), SQLite's code and its message
//   SQLite         the only file touching SQLite: a connection owns its `sqlite3*`
