// NSEFleet: a fleet of `nse serve` nodes on one PostgreSQL (`--database`, docs/serve.md "A fleet on PostgreSQL"),
// on postgres-nio. It implements NSEAPNsServer's `FleetState`, so the server knows no database and only `nse-tool`
// links this module. Each node serves its own devices as before; what the nodes share is here.
//
// Files:
//   PostgresFleet      the FleetState: opened (connected once, schema up to date) before the node listens, run
//                      (the pool, the results writer) while it serves, finished after its last result is copied
//   FleetDatabaseURL   `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`, parsed; its description redacts the password
//   FleetConnection    a PostgresClient with a bounded pool (`--database-connections`), a first connection outside it,
//                      and PostgreSQL's errors in one line
//   FleetSchema        versioned migrations, applied once in one transaction under an advisory lock
//   FleetRequestLog    every node's `POST /3/device` requests, for `GET /v1/requests` on any node
//   FleetFaults        push fault rules used up fleet-wide (one statement per push, the rule's row locked) and the
//                      unavailable switch
//   FleetDevices       which node serves which token, written at start
//   FleetResults       every node's results, copied after the device's own store took them, in batches, in order
//   FleetEvents        the other nodes' results, notified as they are copied (LISTEN/NOTIFY), into `GET /v1/events`
