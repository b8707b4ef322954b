import Foundation
import Testing
@testable import PortfolioCore

/// A transport that answers from a table and records what was asked, never touching a socket.
final class RecordingTransport: HTTPTransport, @unchecked Sendable {
    private let lock = NSLock()
    private var asked: [String] = []
    private let answer: @Sendable (URL) throws(TransportError) -> HTTPResponse

    init(_ answer: @escaping @Sendable (URL) throws(TransportError) -> HTTPResponse) { self.answer = answer }

    /// Every URL asked for, query included.
    var paths: [String] { lock.withLock { asked } }

    func send(_ request: HTTPRequest) throws(TransportError) -> HTTPResponse {
        lock.withLock { asked.append(request.url.absoluteString) }
        return try answer(request.url)
    }

    /// `/simple/price` answers bitcoin at 60000 (at the session's time); everything else is a 404.
    static func bitcoinAt60000(_ now: Date) -> RecordingTransport {
        let stamp = Int(now.timeIntervalSince1970)
        return RecordingTransport { url in
            guard url.path.hasSuffix("/simple/price") else { return HTTPResponse(status: 404, headers: [:], body: Data()) }
            let body = #"{"bitcoin":{"usd":60000,"usd_24h_change":1.5,"last_updated_at":\#(stamp)}}"#
            return HTTPResponse(status: 200, headers: ["content-type": "application/json"], body: Data(body.utf8))
        }
    }
}

@Suite struct SessionTests {
    let now = day("2024-06-01T12:00:00Z")

    /// A session over `dir`; `settingsRead` counts how often the network settings were asked for.
    func session(_ dir: String, transport: any HTTPTransport, offline: Bool = false, at time: Date? = nil,
                 notices: NoticeLog = NoticeLog(), settingsRead: Counter = Counter()) -> Session {
        Session(SessionEnvironment(
            directory: dir, now: time ?? now, offline: offline, transport: transport,
            network: {
                settingsRead.count += 1
                return NetworkSettings(config: PriceServiceConfig(environment: ["BITPAL_API_URL": "http://127.0.0.1:9"]), secrets: [])
            }),
            notify: { notices.items.append($0) })
    }

    final class NoticeLog { var items: [SessionNotice] = [] }
    final class Counter { var count = 0 }

    /// A book with a coin and a registered stock in one portfolio.
    func seed(_ dir: String) throws {
        try PortfolioStore(directory: dir).update(now: now) { (book: inout Book) -> (write: Bool, result: Void) in
            book.assets.append(Asset(id: "AAPL", name: "Apple Inc.", type: .stock, currency: "USD", createdDate: day("2024-01-01")))
            book.add([Transaction(type: .buy, assetId: "bitcoin", amount: fixed("1"), price: fixed("30000"), date: day("2024-01-02"))])
            book.add([Transaction(type: .buy, assetId: "AAPL", amount: fixed("10"), price: fixed("150"), date: day("2024-01-03"))])
            return (true, ())
        }
    }

    @Test func reportsFetchOnlyCoinsAndOnlyWhenStale() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try seed(dir)
        let transport = RecordingTransport.bitcoinAt60000(now)
        let s = session(dir, transport: transport)
        let book = try s.repository.loadBook()
        let reports = try s.reports(book, portfolios: [Portfolio.mainName], refresh: true, names: .plain)
        #expect(transport.paths.count == 1)
        #expect(transport.paths.allSatisfy { $0.contains("/simple/price") && $0.contains("bitcoin") && !$0.contains("AAPL") })
        let btc = try #require(reports.holdings(sort: .value, byPortfolio: false).holdings.first { $0.asset.id == "bitcoin" })
        #expect(btc.currentValue == Exact36(fixed("60000")))

        // A second run 30 s later has fresh prices: no request at all.
        let again = session(dir, transport: transport, at: now.addingTimeInterval(30))
        _ = try again.reports(try again.repository.loadBook(), portfolios: [Portfolio.mainName], refresh: true, names: .plain)
        #expect(transport.paths.count == 1)
    }

    @Test func offlineAndUnneededRunsNeverReadNetworkSettings() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try seed(dir)
        let transport = RecordingTransport.bitcoinAt60000(now)
        let read = Counter()
        let s = session(dir, transport: transport, offline: true, settingsRead: read)
        _ = try s.reports(try s.repository.loadBook(), portfolios: [Portfolio.mainName], refresh: true, names: .plain)
        #expect(transport.paths.isEmpty)
        #expect(read.count == 0)
        #expect(throws: PriceError.offline) { try s.prices.fetchPrices(["bitcoin"], purpose: .explicit) }
    }

    @Test func aFailureIsRememberedAndSkipsTheNextAutomaticRefresh() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try seed(dir)
        let failing = RecordingTransport { _ throws(TransportError) in throw TransportError.cannotConnect("refused") }
        let log = NoticeLog()
        let s = session(dir, transport: failing, notices: log)
        let first = try s.reports(try s.repository.loadBook(), portfolios: [Portfolio.mainName], refresh: true, names: .plain)
        #expect(!failing.paths.isEmpty)
        guard case .pricesNotRefreshed = log.items.first else {
            Issue.record("expected a notice that prices were not refreshed, got \(log.items)")
            return
        }
        // No quote at all: valued at its latest trade, and said to be.
        #expect(first.holdings(sort: .value, byPortfolio: false).holdings.first { $0.asset.id == "bitcoin" }?.quote?.source == .trade)

        // Two minutes later the failure is remembered: no request, and a notice saying until when.
        let asked = failing.paths.count
        let laterLog = NoticeLog()
        let later = session(dir, transport: failing, at: now.addingTimeInterval(120), notices: laterLog)
        _ = try later.reports(try later.repository.loadBook(), portfolios: [Portfolio.mainName], refresh: true, names: .plain)
        #expect(failing.paths.count == asked)
        guard case .pricesNotRefreshedRecently(let failure, let known)? = laterLog.items.first else {
            Issue.record("expected a remembered failure, got \(laterLog.items)")
            return
        }
        #expect(failure.at == now)
        #expect(failure.retryAfter == now.addingTimeInterval(PriceService.failureMemorySeconds))
        #expect(failure.reason.contains("refused"))
        #expect(!known)

        // After five minutes it is tried again, and a success forgets the failure.
        let working = RecordingTransport.bitcoinAt60000(now.addingTimeInterval(400))
        let retry = session(dir, transport: working, at: now.addingTimeInterval(400))
        _ = try retry.reports(try retry.repository.loadBook(), portfolios: [Portfolio.mainName], refresh: true, names: .plain)
        #expect(working.paths.count == 1)
        #expect(retry.service.rememberedNetworkFailure() == nil)
    }

    @Test func namesAndAssetsResolveFromTheBookAndTheCatalog() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try seed(dir)
        let transport = RecordingTransport.bitcoinAt60000(now)
        let s = session(dir, transport: transport, offline: true)
        let book = try s.repository.loadSettings()
        #expect(try s.resolver.resolveAsset("aapl", in: book).id == "AAPL")
        #expect(try s.resolver.resolveAsset("BTC", in: book).id == "bitcoin")
        #expect(s.resolver.assetLabel("AAPL").name == "Apple Inc.")
        #expect(throws: PortfolioError.self) { try s.resolver.resolveAsset("no-such-coin-anywhere", in: book) }
        #expect(transport.paths.isEmpty)
    }

    @Test func aStoreThatBreaksARuleIsReportedOnceAndLeftOut() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try seed(dir)
        let s = session(dir, transport: RecordingTransport.bitcoinAt60000(now), offline: true)
        var book = try s.repository.loadBook()
        book.transactions.append(Transaction(type: .sell, assetId: "bitcoin", amount: fixed("5"), price: fixed("1"),
                                             date: day("2024-02-01")))
        let log = NoticeLog()
        s.notify = { log.items.append($0) }
        let ledger = s.checkedLedger(book, names: .plain)
        guard case .storeBreaksRules(_, let problems, let count, let leftOut)? = log.items.first else {
            Issue.record("expected a notice, got \(log.items)")
            return
        }
        #expect(count == 1 && leftOut && problems.count == 1)
        #expect(ledger.positions.values.contains { $0.assetId == "bitcoin" && $0.quantity == 1 })
    }
}
