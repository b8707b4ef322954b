import BitpalCLI
import Foundation
#if canImport(Glibc)
import Glibc
#endif

// A file-size limit must fail the write with EFBIG (old store kept), not kill the process.
signal(SIGXFSZ, SIG_IGN)
tuneMalloc()
let cli = CLI(environment: .live(), console: Console(live: true))
exit(cli.run(Array(CommandLine.arguments.dropFirst())).rawValue)

/// bitpal is a short-lived process that grows large arrays. glibc serves blocks over 128 KiB with a
/// fresh `mmap` (new pages, page faults) and unmaps them on free; keeping blocks up to 32 MiB in
/// the heap lets freed memory be reused instead. (`mallopt` is not exported to Swift's Glibc module.)
func tuneMalloc() {
    typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
    guard let symbol = dlsym(nil, "mallopt") else { return }
    let mallopt = unsafeBitCast(symbol, to: Mallopt.self)
    _ = mallopt(-3, 32 << 20)  // M_MMAP_THRESHOLD
    _ = mallopt(-1, 64 << 20)  // M_TRIM_THRESHOLD
    _ = mallopt(-2, 16 << 20)  // M_TOP_PAD
}
