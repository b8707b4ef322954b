import Foundation

/// Twelve Data (`GET {base}/quote` and `{base}/time_series`, the key as `apikey=` in the query): an
/// asset's latest price and its daily closes (research: market-data.md §4).
///
/// `SYMBOL@MIC` names the market (`SAP@XETR` is sent as `symbol=SAP&mic_code=XETR`). One request
/// per symbol, no retry, no redirect followed, within the run's one budget. Errors come as
/// `{"code", "message", "status": "error"}` with HTTP 200 or with that status: 404 and 400 an
/// unknown symbol, 403 not on the key's plan, 401 a key refused, 429 the minute's requests used up.
/// Closes are asked with `adjust=none` (the service adjusts for splits by default): as traded.
/// The key never appears in a message.
public struct TwelveDataClient: Sendable {
    public static let defaultURL = "https://api.twelvedata.com"
    public static let name = AssetQuoteSource.Service.twelvedata.name
    public static let keyVariable = "BITPAL_TWELVEDATA_KEY"
    /// The largest reply read (5,000 daily bars are about 700 KiB).
    public static let maxBodyBytes = 4 << 20

    public var baseURL: String
    /// `nil`: not set; every request fails with `.missingKey` before asking.
    public var key: String?
    public var transport: any HTTPTransport
    public var budget: NetworkBudget

    public init(baseURL: String, key: String?, transport: any HTTPTransport, budget: NetworkBudget) {
        self.baseURL = baseURL
        self.key = key
        self.transport = transport
        self.budget = budget
    }

    /// `BITPAL_TWELVEDATA_URL`, else Twelve Data's; `BITPAL_TWELVEDATA_KEY` (`nil` when unset or empty).
    public static func settings(environment env: [String: String]) -> (url: String, key: String?) {
        (env["BITPAL_TWELVEDATA_URL"].flatMap { $0.isEmpty ? nil : $0 } ?? defaultURL, env[keyVariable].flatMap { $0.isEmpty ? nil : $0 })
    }

    /// The symbol and the market of `SYMBOL@MIC` (no `@`: no market).
    static func address(_ symbol: String) -> [(String, String)] {
        guard let at = symbol.lastIndex(of: "@") else { return [("symbol", symbol)] }
        return [("symbol", String(symbol[..<at])), ("mic_code", String(symbol[symbol.index(after: at)...]))]
    }

    /// The latest price (`/quote`: `close` at `last_quote_at`, else at `timestamp`) and its currency.
    public func latest(symbol: String) throws(MarketDataError) -> YahooClient.Chart {
        guard let body = try get("/quote", query: Self.address(symbol), symbol: symbol) else {
            throw .unknownSymbol(service: Self.name, symbol: symbol)
        }
        return try read(symbol) { () throws(JSONReadError) in try Self.readQuote(body) }
    }

    /// The daily closes from `since` to `now` as traded (`/time_series?interval=1day&adjust=none`,
    /// both ends given, so every day between comes, up to 5,000), oldest first, each at the first
    /// instant of its day in the exchange's zone (`meta.exchange_timezone`). A window without trading
    /// ("No data is available on the specified dates") is empty, not an error.
    public func dailyCloses(symbol: String, since: Date, now: Date = Date()) throws(MarketDataError) -> YahooClient.Chart {
        let query = Self.address(symbol) + [("interval", "1day"), ("start_date", ISODate.day(since)),
                                            ("end_date", ISODate.day(now.addingTimeInterval(86_400))), ("outputsize", "5000"), ("adjust", "none")]
        guard let body = try get("/time_series", query: query, symbol: symbol) else {
            return YahooClient.Chart(currency: "", latest: nil, closes: [], dropped: 0, exchangeZone: nil)
        }
        return try read(symbol) { () throws(JSONReadError) in try Self.readTimeSeries(body) }
    }

    private func read(_ symbol: String, _ reader: () throws(JSONReadError) -> YahooClient.Chart) throws(MarketDataError) -> YahooClient.Chart {
        do {
            return try reader()
        } catch {
            throw .unavailable(service: Self.name, detail: redacted("a reply bitpal could not read for '\(TextEscaping.escaped(symbol))' (\(error.message))"))
        }
    }

    private func redacted(_ text: String) -> String { PriceError.redact(text, [key].compactMap { $0 }) }

    /// The reply's body; `nil` for a 400 "No data is available on the specified dates".
    private func get(_ path: String, query: [(String, String)], symbol: String) throws(MarketDataError) -> Data? {
        guard let key else { throw .missingKey(service: Self.name, variable: Self.keyVariable) }
        let request = MarketDataRequest(service: Self.name, baseURL: baseURL, urlVariable: "BITPAL_TWELVEDATA_URL",
                                        headers: ["accept": "application/json"], maxBodyBytes: Self.maxBodyBytes, transport: transport,
                                        budget: budget, secrets: [key])
        let response = try request.send(path, query: query + [("apikey", key)])
        let body = response.body
        guard body.first == UInt8(ascii: "{") else {
            if response.status == 429 { throw .rateLimited(service: Self.name, waiting: 1) }
            throw request.notJSON(response)
        }
        // The error envelope, whatever the HTTP status; a reply without one is data only with 200.
        let envelope = Self.readError(body)
        guard let code = envelope?.code ?? (response.status == 200 ? nil : response.status) else { return body }
        let message = envelope?.message.map { String(TextEscaping.escaped(redacted($0)).prefix(200)) } ?? ""
        switch code {
        case 400 where message.contains("No data is available"): return nil
        case 400, 404: throw .unknownSymbol(service: Self.name, symbol: symbol)
        case 401: throw .missingKey(service: Self.name, variable: Self.keyVariable, rejected: true)
        case 403: throw .notOnPlan(service: Self.name, symbol: symbol)
        case 429: throw .rateLimited(service: Self.name, waiting: 1)
        default: throw .unavailable(service: Self.name, detail: "it failed (\(code)" + (message.isEmpty ? ")" : ": \(message))"))
        }
    }

    /// `code` and `message` of a reply whose `status` is `"error"`; `nil` for any other reply.
    static func readError(_ body: Data) -> (code: Int?, message: String?)? {
        var r = JSONReader(buffer: ByteBuffer(copying: Array(body)))
        var status: String?, code: String?, message: String?
        do {
            try r.beginObject()
            while let k = try r.nextKey() {
                switch k {
                case "status": status = try r.readStringOrNull()
                case "code": code = r.consumeNull() ? nil : try r.readNumberText()
                case "message": message = try r.readStringOrNull()
                default: try r.skipValue()
                }
            }
        } catch {
            return nil
        }
        guard status == "error" else { return nil }
        return (code.flatMap { Int($0) }, message)
    }

    /// A price of the service (a string or a number), through the hardened path; `nil` counts as dropped.
    private static func price(_ text: String?, hundredth: Bool, dropped: inout Int) -> Decimal? {
        guard let text else { return nil }
        guard var v = ServiceNumbers.exact(text), v > 0 else { dropped += 1; return nil }
        if hundredth { v /= 100 }
        guard let usable = ServiceNumbers.price(DecimalFormatting.exact(v)) else { dropped += 1; return nil }
        return usable
    }

    /// A string or a number, as text.
    private static func text(_ r: inout JSONReader) throws(JSONReadError) -> String? {
        if r.consumeNull() { return nil }
        return r.peek() == UInt8(ascii: "\"") ? try r.readString() : try r.readNumberText()
    }

    /// The currency after sub-units, and whether prices are hundredths of it (`GBp`).
    private static func currency(_ quoted: String?, _ r: JSONReader) throws(JSONReadError) -> (String, Bool) {
        guard let quoted, !quoted.isEmpty else { throw r.error("no currency") }
        guard YahooClient.isCurrencyCode(quoted) else { throw r.error("the currency is not a currency code") }
        return (YahooClient.subUnits[quoted] ?? quoted.uppercased(), YahooClient.subUnits[quoted] != nil)
    }

    /// Reads a `/quote` reply: `currency`, `close`, and `last_quote_at` or `timestamp` (Unix seconds).
    static func readQuote(_ body: Data) throws(JSONReadError) -> YahooClient.Chart {
        var r = JSONReader(buffer: ByteBuffer(copying: Array(body)))
        var quoted: String?, close: String?, lastQuote: String?, stamp: String?
        try r.beginObject()
        while let k = try r.nextKey() {
            switch k {
            case "currency": quoted = try r.readStringOrNull()
            case "close": close = try text(&r)
            case "last_quote_at": lastQuote = try text(&r)
            case "timestamp": stamp = try text(&r)
            default: try r.skipValue()
            }
        }
        try r.finish()
        let (currency, hundredth) = try Self.currency(quoted, r)
        var dropped = 0
        var chart = YahooClient.Chart(currency: currency, latest: nil, closes: [], dropped: 0, exchangeZone: nil)
        if let p = price(close, hundredth: hundredth, dropped: &dropped), let t = (lastQuote ?? stamp).flatMap({ ServiceNumbers.date($0) }) {
            chart.latest = (p, t)
        }
        chart.dropped = dropped
        return chart
    }

    /// Reads a `/time_series` reply: `meta.currency`, `meta.exchange_timezone`, and `values` of
    /// `datetime` (a day) and `close`, newest first as sent; returned oldest first.
    static func readTimeSeries(_ body: Data) throws(JSONReadError) -> YahooClient.Chart {
        var r = JSONReader(buffer: ByteBuffer(copying: Array(body)))
        var quoted: String?, zoneName: String?
        var values: [(day: String?, close: String?)] = []
        try r.beginObject()
        while let k = try r.nextKey() {
            switch k {
            case "meta":
                try r.beginObject()
                while let mk = try r.nextKey() {
                    switch mk {
                    case "currency": quoted = try r.readStringOrNull()
                    case "exchange_timezone": zoneName = try r.readStringOrNull()
                    default: try r.skipValue()
                    }
                }
            case "values":
                values = try r.readArray { (e: inout JSONReader) throws(JSONReadError) -> (day: String?, close: String?) in
                    var day: String?, close: String?
                    try e.beginObject()
                    while let vk = try e.nextKey() {
                        switch vk {
                        case "datetime": day = try e.readStringOrNull()
                        case "close": close = try text(&e)
                        default: try e.skipValue()
                        }
                    }
                    return (day, close)
                }
            default: try r.skipValue()
            }
        }
        try r.finish()
        let (currency, hundredth) = try Self.currency(quoted, r)
        // The bars are dated in the exchange's zone; without a known one, in UTC (and read back so).
        let zone = zoneName.flatMap(TimeZone.init(identifier:)) ?? TimeZone(identifier: "UTC")
        var dropped = 0
        var chart = YahooClient.Chart(currency: currency, latest: nil, closes: [], dropped: 0, exchangeZone: zone)
        for value in values {
            // `YYYY-MM-DD` for daily bars (a time after it, if any, is the bar's start: its day is the same).
            guard let text = value.day, let day = ISODate.dayNumber(ofDay: String(text.prefix(10))),
                  let p = price(value.close, hundredth: hundredth, dropped: &dropped) else { continue }
            chart.closes.append((RecordDate.day(day, in: zone ?? .current).date, p))
        }
        chart.closes.sort { $0.time < $1.time }
        chart.dropped = dropped
        return chart
    }
}
