// NSECommandLine: what both front doors share for `nse run` (the small `nse` and the full `nse-tool`), kept out of
// the NSEHost library.
//
// Files:
//   RunOptions    `nse run` as one call: `execute()` opens the device, builds the host, delivers each payload, prints
//                 the verdict (JSON or text)
//   RunLimits     the one table of limits both parsers read, so they accept exactly the same values
//   CommandInput  stdin or a file, read with a size cap (1 MiB: anything longer is refused unread)
//   ExitStatus    the exit statuses (sysexits.h, docs/cli.md)
//   NSEVersion    `nse --version`
