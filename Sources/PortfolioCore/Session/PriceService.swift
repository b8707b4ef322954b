import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where a session's notices go: the one place every part of it sends them (the front end words them).
public final class Notices {
    public var send: (SessionNotice) -> Void

    public init(_ send: @escaping (SessionNotice) -> Void) { self.send = send }
}

/// The price service as one run uses it: its settings read once, one time budget shared by every
/// request, and the memory of a recent failure (`.network-failure` in the data folder).
public final class PriceService {
    public let directory: String
    public let now: Date
    public let offline: Bool
    private let environment: SessionEnvironment

    public init(_ environment: SessionEnvironment) {
        self.environment = environment
        directory = environment.directory
        now = environment.now
        offline = environment.offline
    }

    public static let automaticBudgetSeconds = 3
    public static let explicitBudgetSeconds = 30
    /// After a failure, automatic refreshes are skipped this long (reports use the cache at once).
    public static let failureMemorySeconds: TimeInterval = 300

    /// The budget of this run, fixed at its first network use and shared by every request after it.
    private var networkBudget: NetworkBudget?
    private var settings: NetworkSettings?

    /// The network settings, read (and checked) once; throws `PriceError.offline` when offline.
    public func networkSettings() throws -> NetworkSettings {
        if offline { throw PriceError.offline }
        if let settings { return settings }
        let read = try environment.network()
        settings = read
        return read
    }

    /// This run's one budget, fixed by the purpose of its first use.
    private func budget(_ purpose: NetworkPurpose, _ settings: NetworkSettings) -> NetworkBudget {
        let budget = networkBudget ?? NetworkBudget(
            seconds: settings.timeoutOverride ?? (purpose == .automatic ? Self.automaticBudgetSeconds : Self.explicitBudgetSeconds),
            clock: environment.clock)
        networkBudget = budget
        return budget
    }

    /// A client under this run's one budget.
    public func priceClient(_ purpose: NetworkPurpose) throws -> CoinGeckoClient {
        let settings = try networkSettings()
        return CoinGeckoClient(config: settings.config, transport: environment.transport, budget: budget(purpose, settings),
                               secrets: settings.secrets, sleep: environment.sleep)
    }

    /// A client of the exchange-rate service under the same budget. Its failures are not remembered:
    /// the memory is the price service's, which reports consult.
    public func fxClient(_ purpose: NetworkPurpose) throws -> FrankfurterClient {
        let settings = try networkSettings()
        return FrankfurterClient(config: settings.fxConfig, transport: environment.transport, budget: budget(purpose, settings),
                                 secrets: settings.secrets, sleep: environment.sleep)
    }

    /// Yahoo Finance under the same budget.
    public func yahooClient(_ purpose: NetworkPurpose) throws -> YahooClient {
        let settings = try networkSettings()
        return YahooClient(baseURL: settings.yahoo.url, userAgent: settings.yahoo.userAgent, transport: environment.transport,
                           budget: budget(purpose, settings))
    }

    /// Twelve Data under the same budget (without a key it asks nothing: each asset says the key is missing).
    public func twelveDataClient(_ purpose: NetworkPurpose) throws -> TwelveDataClient {
        let settings = try networkSettings()
        return TwelveDataClient(baseURL: settings.twelveData.url, key: settings.twelveData.key, transport: environment.transport,
                                budget: budget(purpose, settings))
    }

    /// Runs `body` with a client; a failure is remembered for a few minutes, a success forgets it.
    public func withPriceService<T>(_ purpose: NetworkPurpose, _ body: (CoinGeckoClient) throws(PriceError) -> T) throws -> T {
        let client = try priceClient(purpose)
        do {
            let result = try body(client)
            forgetNetworkFailure()
            return result
        } catch {
            rememberNetworkFailure(error, secrets: client.secrets)
            throw error
        }
    }

    private var networkFailurePath: String { directory + "/.network-failure" }
    /// The market data sources' (Yahoo, Twelve Data) own memory: their failure never stops the coins' refresh.
    private var marketFailurePath: String { directory + "/.market-failure" }

    /// A failure of the last few minutes; `nil` when there is none.
    public func rememberedNetworkFailure() -> NetworkFailure? { remembered(at: networkFailurePath) }

    /// A failure of the market data sources in the last few minutes (reports then use their cached quotes).
    public func rememberedMarketFailure() -> NetworkFailure? { remembered(at: marketFailurePath) }

    /// Remembers (`error`) or forgets (`nil`) the market data sources' failure. Best effort.
    public func noteMarketFailure(_ error: MarketDataError?) {
        guard let error else { unlink(marketFailurePath); return }
        let text = ISODate.format(now) + "\n" + error.description.replacingOccurrences(of: "\n", with: " ") + "\n"
        try? FileSystem.ensureDirectory(directory)
        try? FileSystem.writeAtomically(Array(text.utf8), to: marketFailurePath)
    }

    private func remembered(at path: String) -> NetworkFailure? {
        guard let bytes = try? FileSystem.read(path) else { return nil }
        let lines = bytes.split(separator: UInt8(ascii: "\n"), maxSplits: 1, omittingEmptySubsequences: false)
        guard let first = lines.first, let at = ISODate.parseTimestamp(utf8: first) else { return nil }
        let age = now.timeIntervalSince(at)
        guard age >= 0, age < Self.failureMemorySeconds else { return nil }
        let reason = lines.count > 1 ? String(decoding: lines[1], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) : ""
        return NetworkFailure(at: at, reason: String(reason.prefix(300)), retryAfter: at.addingTimeInterval(Self.failureMemorySeconds))
    }

    /// Writes `.network-failure` (the time, then the redacted reason). Best effort.
    private func rememberNetworkFailure(_ error: PriceError, secrets: [String]) {
        switch error {
        case .offline, .unknownCoin, .noRates, .historyDays, .historyBeyondPlan, .of: return  // the service answered, or another's failed
        default: break
        }
        let text = ISODate.format(now) + "\n" + PriceError.redact(error.description, secrets).replacingOccurrences(of: "\n", with: " ") + "\n"
        try? FileSystem.ensureDirectory(directory)
        try? FileSystem.writeAtomically(Array(text.utf8), to: networkFailurePath)
    }

    private func forgetNetworkFailure() { unlink(networkFailurePath) }

}
