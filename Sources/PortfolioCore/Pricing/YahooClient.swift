import Foundation

/// Why a market data source (Yahoo Finance, Twelve Data) gave no usable quote for an asset.
public enum MarketDataError: Error, Equatable, Sendable {
    /// The service does not know the symbol, or it was delisted (HTTP 404): a broken rule (exit 1).
    case unknownSymbol(service: String, symbol: String)
    /// Its quotes are in another currency than the asset's (after sub-units): a broken rule (exit 1).
    case wrongCurrency(symbol: String, quoted: String, asset: String)
    /// The service could not be reached, refused for now (429, a page that is not JSON, 5xx) or ran
    /// past the deadline: nothing was lost, the next run tries again (exit 3).
    case unavailable(service: String, detail: String)
    /// The service wants a key and the variable that holds it is not set: a broken rule (exit 1).
    /// With `rejected`, the service refused the key it holds (HTTP 401).
    case missingKey(service: String, variable: String, rejected: Bool = false)
    /// The service answers that the symbol is not on the key's plan (HTTP 403): a broken rule (exit 1).
    case notOnPlan(service: String, symbol: String)
    /// The plan's requests for this minute are used up (HTTP 429): nothing more is asked this run, and
    /// `waiting` symbols (this one included) wait for the next (exit 3).
    case rateLimited(service: String, waiting: Int)

    /// A broken rule (1), else the service's failure (3).
    public var isBrokenRule: Bool {
        switch self {
        case .unknownSymbol, .wrongCurrency, .missingKey, .notOnPlan: true
        case .unavailable, .rateLimited: false
        }
    }

    /// The `--quote` word of the service named `service` (`yahoo` for Yahoo Finance).
    static func sourceWord(_ service: String) -> String {
        AssetQuoteSource.Service.allCases.first { $0.name == service }?.rawValue ?? service.lowercased()
    }
}

extension MarketDataError: CustomStringConvertible {
    public var description: String {
        switch self {
        case let .unknownSymbol(service, symbol):
            "\(service) does not know the symbol '\(TextEscaping.escaped(symbol))' (HTTP 404: unknown or delisted); "
                + "give another with 'bitpal asset edit CODE --quote \(Self.sourceWord(service)):SYMBOL'"
        case let .wrongCurrency(symbol, quoted, asset):
            "\(TextEscaping.escaped(symbol)) is quoted in \(TextEscaping.escaped(quoted)), the asset in \(asset): "
                + "change the asset's currency ('bitpal asset edit CODE --currency \(TextEscaping.escaped(quoted))') while nothing uses it, or give another symbol"
        case let .unavailable(service, detail):
            "\(service) gave no quote: \(detail); the next run tries again"
        case let .missingKey(service, variable, rejected):
            rejected ? "\(service) refused the API key in \(variable) (HTTP 401): check it"
                : "\(service) needs an API key: set \(variable) (a free key is enough for a few symbols)"
        case let .notOnPlan(service, symbol):
            "\(service) does not serve '\(TextEscaping.escaped(symbol))' on your key's plan (HTTP 403); "
                + "give another with 'bitpal asset edit CODE --quote \(Self.sourceWord(service)):SYMBOL', or another source"
        case let .rateLimited(service, waiting):
            "\(service) refused for now (HTTP 429: the plan's requests for this minute are used up, 8 a minute on the free plan); "
                + "nothing more was asked this run: \(waiting) symbol\(waiting == 1 ? "" : "s") waited for the next run"
        }
    }
}

/// Yahoo Finance's chart endpoint (`GET {base}/v8/finance/chart/{symbol}`, no key): an asset's
/// latest price and its daily closes (research: market-data.md §1).
///
/// Sent with a User-Agent (Yahoo refuses requests without one), one request per symbol, no cookie,
/// no redirect followed, no retry (a 429 or a page that is not JSON is "refused for now"), within
/// the run's one budget. Prices go through the hardened number path (`ServiceNumbers`); a
/// sub-unit currency (`GBp`, `ZAc`, `ILA`) is scaled to its currency.
public struct YahooClient: Sendable {
    public static let defaultURL = "https://query2.finance.yahoo.com"
    public static let name = "Yahoo Finance"
    /// The largest reply read (a year of daily bars is about 60 KiB).
    public static let maxBodyBytes = 4 << 20

    public var baseURL: String
    public var userAgent: String
    public var transport: any HTTPTransport
    public var budget: NetworkBudget

    public init(baseURL: String, userAgent: String, transport: any HTTPTransport, budget: NetworkBudget) {
        self.baseURL = baseURL
        self.userAgent = userAgent
        self.transport = transport
        self.budget = budget
    }

    /// `BITPAL_YAHOO_URL`, else Yahoo's; `BITPAL_USER_AGENT`, else bitpal's own.
    public static func settings(environment env: [String: String], version: String) -> (url: String, userAgent: String) {
        let url = env["BITPAL_YAHOO_URL"].flatMap { $0.isEmpty ? nil : $0 } ?? defaultURL
        let agent = env["BITPAL_USER_AGENT"].flatMap { $0.isEmpty ? nil : $0 } ?? "Mozilla/5.0 (compatible; bitpal/\(version))"
        return (url, agent)
    }

    /// What one chart reply says: the latest price and its time, the currency, and the daily closes.
    public struct Chart: Sendable, Equatable {
        /// The currency after sub-units are scaled (`GBp` → `GBP`).
        public var currency: String
        public var latest: (price: Decimal, time: Date)?
        public var closes: [(time: Date, price: Decimal)]
        /// Prices dropped as unusable (zero, negative, absurd), for a warning.
        public var dropped: Int
        /// The exchange's zone (`meta.exchangeTimezoneName`): the days its bars belong to.
        public var exchangeZone: TimeZone?
        /// The splits the reply reports (`events.splits`), oldest first: when, and NEW:OLD.
        public var splits: [(time: Date, new: Decimal, old: Decimal)] = []

        /// The closes as traded: Yahoo adjusts every close for every later split (even one after the
        /// window), so each is multiplied back by the ratio of every split after it. A close that
        /// becomes unusable so (absurd, not a number) is left out, as any unusable price is.
        public var closesAsTraded: [(time: Date, price: Decimal)] {
            closes.compactMap { bar in
                var price = bar.price
                for s in splits where s.time > bar.time && s.old > 0 { price = price * s.new / s.old }
                guard !price.isNaN, let usable = ServiceNumbers.price(DecimalFormatting.exact(price)) else { return nil }
                return (bar.time, usable)
            }
        }

        /// The largest NEW or OLD of a split bitpal believes (a 1:1000000 reverse split is far past any seen).
        static let maxSplitPart: Decimal = 1_000_000

        public static func == (a: Chart, b: Chart) -> Bool {
            a.currency == b.currency && a.latest?.price == b.latest?.price && a.latest?.time == b.latest?.time
                && a.closes.map(\.time) == b.closes.map(\.time) && a.closes.map(\.price) == b.closes.map(\.price) && a.dropped == b.dropped
        }
    }

    /// The chart of `symbol`: daily bars of the last 5 days, or with `since` from then to `now`
    /// (never `range=max`, which gives monthly bars); the latest price comes with any window.
    public func chart(symbol: String, since: Date? = nil, now: Date = Date()) throws(MarketDataError) -> Chart {
        let encoded = symbol.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: ".-_=~"))) ?? symbol
        var query = [("interval", "1d"), ("events", "div|split")]
        if let since {
            query += [("period1", String(Int64(since.timeIntervalSince1970))), ("period2", String(Int64(now.timeIntervalSince1970) + 1))]
        } else {
            query.append(("range", "5d"))
        }
        let body = try get("/v8/finance/chart/\(encoded)", query: query, symbol: symbol)
        do {
            return try Self.readChart(body)
        } catch {
            throw .unavailable(service: Self.name, detail: "a reply bitpal could not read (\(error.message))")
        }
    }

    private func get(_ path: String, query: [(String, String)], symbol: String) throws(MarketDataError) -> Data {
        let request = MarketDataRequest(service: Self.name, baseURL: baseURL, urlVariable: "BITPAL_YAHOO_URL",
                                        headers: ["accept": "application/json", "user-agent": userAgent], maxBodyBytes: Self.maxBodyBytes,
                                        transport: transport, budget: budget)
        let response = try request.send(path, query: query)
        let looksLikeJSON = response.body.first.map { $0 == UInt8(ascii: "{") } ?? false
        switch response.status {
        case 200 where looksLikeJSON: return response.body
        case 404 where looksLikeJSON: throw .unknownSymbol(service: Self.name, symbol: symbol)
        case 429: throw .unavailable(service: Self.name, detail: "it refused for now (HTTP 429, too many requests)")
        case 200, 404, 300...399: throw request.notJSON(response)
        default: throw .unavailable(service: Self.name, detail: "it failed (HTTP \(response.status))")
        }
    }

    /// Sub-units some markets quote in, as (currency, divisor).
    static let subUnits: [String: String] = ["GBp": "GBP", "GBX": "GBP", "ZAc": "ZAR", "ILA": "ILS"]

    /// Whether a service's `quoted` currency can be one: a sub-unit, or three ASCII letters. Anything else
    /// (free text, a key the server echoes) makes the reply unreadable, and is never printed as a currency.
    static func isCurrencyCode(_ quoted: String) -> Bool {
        subUnits[quoted] != nil || (quoted.utf8.count == 3 && quoted.utf8.allSatisfy { ($0 | 0x20) >= 97 && ($0 | 0x20) <= 122 })
    }

    /// Reads a chart reply: `meta.currency`, `meta.regularMarketPrice` at `regularMarketTime`, and
    /// `timestamp` with `indicators.quote[0].close` (a `null` close is skipped; no `timestamp` is an
    /// empty window). Numbers are read exactly from their text.
    static func readChart(_ body: Data) throws(JSONReadError) -> Chart {
        let buffer = ByteBuffer(copying: Array(body))
        var r = JSONReader(buffer: buffer)
        var currencyText: String?
        var marketPrice: String?, marketTime: String?, zoneName: String?
        var splits: [(date: String, new: String, old: String)] = []
        var stamps: [String?] = [], closes: [String?] = []
        func numbers(_ r: inout JSONReader) throws(JSONReadError) -> [String?] {
            try r.readArray { (e: inout JSONReader) throws(JSONReadError) -> String? in e.consumeNull() ? nil : try e.readNumberText() }
        }
        try r.beginObject()
        while let k = try r.nextKey() {
            guard k == "chart" else { try r.skipValue(); continue }
            try r.beginObject()
            while let ck = try r.nextKey() {
                guard ck == "result", !r.consumeNull() else { try r.skipValue(); continue }
                try r.beginArray()
                var first = true
                while try r.nextElement() {
                    guard first else { try r.skipValue(); continue }
                    first = false
                    try r.beginObject()
                    while let rk = try r.nextKey() {
                        switch rk {
                        case "meta":
                            try r.beginObject()
                            while let mk = try r.nextKey() {
                                switch mk {
                                case "currency": currencyText = try r.readStringOrNull()
                                case "regularMarketPrice": marketPrice = r.consumeNull() ? nil : try r.readNumberText()
                                case "regularMarketTime": marketTime = r.consumeNull() ? nil : try r.readNumberText()
                                case "exchangeTimezoneName": zoneName = try r.readStringOrNull()
                                default: try r.skipValue()
                                }
                            }
                        case "timestamp": stamps = try numbers(&r)
                        case "events":
                            try r.beginObject()
                            while let ek = try r.nextKey() {
                                guard ek == "splits" else { try r.skipValue(); continue }
                                try r.beginObject()
                                while try r.nextKey() != nil {
                                    var date = "", new = "", old = ""
                                    try r.beginObject()
                                    while let sk = try r.nextKey() {
                                        switch sk {
                                        case "date": date = try r.readNumberText()
                                        case "numerator": new = try r.readNumberText()
                                        case "denominator": old = try r.readNumberText()
                                        default: try r.skipValue()
                                        }
                                    }
                                    splits.append((date, new, old))
                                }
                            }
                        case "indicators":
                            try r.beginObject()
                            while let ik = try r.nextKey() {
                                guard ik == "quote" else { try r.skipValue(); continue }
                                try r.beginArray()
                                var firstQuote = true
                                while try r.nextElement() {
                                    guard firstQuote else { try r.skipValue(); continue }
                                    firstQuote = false
                                    try r.beginObject()
                                    while let qk = try r.nextKey() {
                                        if qk == "close" { closes = try numbers(&r) } else { try r.skipValue() }
                                    }
                                }
                            }
                        default: try r.skipValue()
                        }
                    }
                }
            }
        }
        try r.finish()
        guard let quoted = currencyText, !quoted.isEmpty else { throw r.error("no meta.currency") }
        guard isCurrencyCode(quoted) else { throw r.error("meta.currency is not a currency code") }
        let hundredth = subUnits[quoted] != nil
        let currency = subUnits[quoted] ?? quoted.uppercased()
        var dropped = 0
        func price(_ text: String?) -> Decimal? {
            guard let text else { return nil }
            guard var v = ServiceNumbers.exact(text), v > 0 else { dropped += 1; return nil }
            if hundredth { v /= 100 }
            guard let usable = ServiceNumbers.price(DecimalFormatting.exact(v)) else { dropped += 1; return nil }
            return usable
        }
        var chart = Chart(currency: currency, latest: nil, closes: [], dropped: 0, exchangeZone: zoneName.flatMap(TimeZone.init(identifier:)))
        chart.splits = splits.compactMap { s in
            guard let t = ServiceNumbers.date(s.date), let n = ServiceNumbers.exact(s.new), let d = ServiceNumbers.exact(s.old), n > 0, d > 0,
                  n <= Chart.maxSplitPart, d <= Chart.maxSplitPart else { return nil }
            return (t, n, d)
        }.sorted { $0.time < $1.time }
        if let p = price(marketPrice), let t = marketTime.flatMap({ ServiceNumbers.date($0) }) { chart.latest = (p, t) }
        for (i, stamp) in stamps.enumerated() where i < closes.count {
            guard let stamp, let time = ServiceNumbers.date(stamp), let p = price(closes[i]) else { continue }
            chart.closes.append((time, p))
        }
        chart.dropped = dropped
        return chart
    }
}
