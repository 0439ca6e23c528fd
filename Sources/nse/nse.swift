// nse: the front door. Runs `nse run` itself and execs `nse-tool` beside it for everything else (other commands,
// help, a `run` whose arguments need explaining). Links NSECommandLine and the host alone: a binary that links NIO,
// Hummingbird, BoringSSL, jwt-kit and swift-argument-parser spent about 14 ms of an 18 ms `nse run` before `main`.
// Statically linked in release builds, its hot functions first (`hot-functions.order`), as `nse-extension` is.
//
// Files:
//   main          `run` here, anything else exec'd
//   RunArguments  `run`'s options parsed by hand, from the same RunLimits as nse-tool's parser
