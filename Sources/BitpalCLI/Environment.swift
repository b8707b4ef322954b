import Foundation
#if canImport(Glibc)
import Glibc
#endif
import PortfolioCore

/// Everything bitpal takes from the outside world, so tests can replace it.
public struct Environment {
    public var variables: [String: String]
    public var now: () -> Date
    public var stdoutIsTerminal: Bool
    /// Everything on standard input (for `import -`); throws past the read cap or on a read error.
    public var readStandardInput: () throws -> [UInt8]
    /// Waits between retries; tests pass a recorder instead of sleeping.
    public var sleep: (TimeInterval) -> Void
    /// Sends HTTP requests to the price service.
    public var transport: any HTTPTransport
    /// A monotonic clock in seconds, for network budgets (tests may add the time they pretend to sleep).
    public var clock: @Sendable () -> TimeInterval = NetworkBudget.monotonicNow

    public init(
        variables: [String: String], now: @escaping () -> Date, stdoutIsTerminal: Bool = false,
        readStandardInput: @escaping () throws -> [UInt8] = { [] }, sleep: @escaping (TimeInterval) -> Void = { _ in },
        transport: any HTTPTransport = CurlTransport()
    ) {
        self.variables = variables
        self.now = now
        self.stdoutIsTerminal = stdoutIsTerminal
        self.readStandardInput = readStandardInput
        self.sleep = sleep
        self.transport = transport
    }

    /// The real process environment, clock, terminal and network.
    public static func live() -> Environment {
        Environment(
            variables: ProcessInfo.processInfo.environment,
            now: { Date() },
            stdoutIsTerminal: isatty(STDOUT_FILENO) == 1,
            readStandardInput: { try FileSystem.readAll(fd: STDIN_FILENO) },
            sleep: { seconds in if seconds > 0 { Thread.sleep(forTimeInterval: seconds) } },
            transport: CurlTransport())
    }
}

/// Where output goes: straight to the process's stdout and stderr, or into strings for tests.
public final class Console {
    public private(set) var out = ""
    public private(set) var err = ""
    private let live: Bool

    public init(live: Bool) { self.live = live }

    public func print(_ text: String) {
        if live { Console.write(text, to: STDOUT_FILENO) } else { out += text }
    }

    /// Raw UTF-8 output (large exports), without building a `String` first.
    public func print(bytes: [UInt8]) {
        if live { Console.write(bytes, to: STDOUT_FILENO) } else { out += String(decoding: bytes, as: UTF8.self) }
    }

    public func error(_ text: String) {
        if live { Console.write(text, to: STDERR_FILENO) } else { err += text }
    }

    static func write(_ text: String, to fd: Int32) {
        write(Array(text.utf8), to: fd)
    }

    static func write(_ bytes: [UInt8], to fd: Int32) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { raw in Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += n
        }
    }
}
