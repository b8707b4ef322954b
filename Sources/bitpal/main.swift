import BitpalCLI
import Foundation
#if canImport(Glibc)
import Glibc
#endif

// A file-size limit must fail the write with EFBIG (old store kept), not kill the process.
signal(SIGXFSZ, SIG_IGN)
let cli = CLI(environment: .live(), console: Console(live: true))
exit(cli.run(Array(CommandLine.arguments.dropFirst())).rawValue)
