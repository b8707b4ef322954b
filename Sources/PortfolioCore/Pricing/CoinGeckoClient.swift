import Foundation

/// How to reach the price service, read from the environment.
///
/// `BITPAL_API_URL` overrides the base URL. A demo key (`COINGECKO_API_KEY`) is sent
/// as `x-cg-demo-api-key`; a pro key (`COINGECKO_PRO_API_KEY`) as `x-cg-pro-api-key`
/// to the pro host. Keys go in headers only, never in a URL, message or file.
public struct PriceServiceConfig: Sendable {
    public static let publicURL = "https://api.coingecko.com/api/v3"
    public static let proURL = "https://pro-api.coingecko.com/api/v3"

    public var baseURL: String
    public var keyHeader: String?
    public var keyValue: String?
    /// Attempts for 429 and 5xx answers.
    public var maxAttempts = 3
    /// The longest wait between attempts, whatever `Retry-After` says.
    public var maxWait: TimeInterval = 10
    /// The most body bytes (decompressed) accepted from each endpoint.
    public var limits = BodyLimits()

    /// Caps on reply sizes, per endpoint. A transfer past its cap is aborted at once.
    public struct BodyLimits: Sendable {
        /// `/simple/price` for 250 coins is about 30 KB.
        public var prices = 4 << 20
        /// `/coins/list` is about 2 MB for 15k coins (2026).
        public var coinList = 32 << 20
        /// Anything else (`/ping`, errors).
        public var other = 1 << 20
        public init() {}
    }

    public init(environment env: [String: String]) {
        let pro = env["COINGECKO_PRO_API_KEY"].flatMap { $0.isEmpty ? nil : $0 }
        let demo = env["COINGECKO_API_KEY"].flatMap { $0.isEmpty ? nil : $0 }
        if let pro {
            keyHeader = "x-cg-pro-api-key"
            keyValue = pro
        } else if let demo {
            keyHeader = "x-cg-demo-api-key"
            keyValue = demo
        }
        var base = env["BITPAL_API_URL"].flatMap { $0.isEmpty ? nil : $0 } ?? (pro != nil ? Self.proURL : Self.publicURL)
        while base.hasSuffix("/") { base.removeLast() }
        baseURL = base
    }

    /// The host, for messages.
    public var host: String { URL(string: baseURL)?.host ?? baseURL }

    /// A pro key's plan: its history reaches further back than the free and demo plans' 365 days.
    public var isPro: Bool { keyHeader == "x-cg-pro-api-key" }

    /// Every configured key (demo and pro), to redact from anything a server or transport says.
    public static func secrets(in env: [String: String]) -> [String] {
        ["COINGECKO_PRO_API_KEY", "COINGECKO_API_KEY"].compactMap { env[$0] }.filter { !$0.isEmpty }
    }

    /// `BITPAL_HTTP_TIMEOUT` read strictly: a whole number of seconds from 1 to 600 (digits only).
    /// `nil` for anything else.
    public static func parseTimeout(_ text: String) -> Int? {
        guard !text.isEmpty, text.utf8.count <= 3, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }),
              let n = Int(text), (1...600).contains(n) else { return nil }
        return n
    }
}

/// The time a command may spend on the network, retries and waits included.
public struct NetworkBudget: Sendable {
    /// The budget in whole seconds, for messages.
    public var seconds: Int
    /// When it runs out, on `clock`.
    public var deadline: TimeInterval
    /// A monotonic clock in seconds.
    public var clock: @Sendable () -> TimeInterval

    /// `seconds` from now on `clock`.
    public init(seconds: Int, clock: @escaping @Sendable () -> TimeInterval) {
        self.seconds = seconds
        self.clock = clock
        deadline = clock() + TimeInterval(seconds)
    }

    /// Seconds left (negative once past).
    public var remaining: TimeInterval { deadline - clock() }

    /// The monotonic clock of the process (`CLOCK_MONOTONIC`): not moved by changes to the wall clock.
    public static func monotonicNow() -> TimeInterval {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return TimeInterval(ts.tv_sec) + TimeInterval(ts.tv_nsec) / 1e9
    }
}

/// The prices the service sent for one request.
public struct FetchedPrices: Sendable {
    public var quotes: [Quote]
    /// Requested ids with no usable price (omitted, `null`, `{}`, or a value bitpal refused).
    public var missing: [String]
    /// Values the service sent that bitpal ignored, and why (one line each).
    public var warnings: [String] = []

    public init(quotes: [Quote], missing: [String], warnings: [String] = []) {
        self.quotes = quotes
        self.missing = missing
        self.warnings = warnings
    }
}

/// A client for CoinGecko's v3 API: batched prices and the coin list.
public struct CoinGeckoClient: Sendable {
    public var config: PriceServiceConfig
    public var transport: any HTTPTransport
    /// Bounds every request, retry and wait of this client together.
    public var budget: NetworkBudget
    /// Keys to redact from every message derived from a server reply or transport error.
    public var secrets: [String]
    private let sleep: @Sendable (TimeInterval) -> Void

    /// ids per request; CoinGecko caps list parameters around this size.
    public static let batchSize = 250

    public init(config: PriceServiceConfig, transport: any HTTPTransport,
                budget: NetworkBudget = NetworkBudget(seconds: 30, clock: NetworkBudget.monotonicNow), secrets: [String] = [],
                sleep: @escaping @Sendable (TimeInterval) -> Void) {
        self.config = config
        self.transport = transport
        self.budget = budget
        self.secrets = (secrets + [config.keyValue].compactMap { $0 }).filter { !$0.isEmpty }
        self.sleep = sleep
    }

    /// Prices, 24h change and market cap of `ids` in each of `currencies` (USD unless told), in one
    /// request per 250 ids; a quote per coin and currency.
    ///
    /// Numbers are read from the reply's text exactly (`8.45e-06` → 0.00000845) and checked
    /// (`ServiceNumbers`): an unusable price drops that coin, an unusable change, market cap or
    /// time becomes unknown; each with a warning.
    public func prices(for ids: [String], currencies: [String] = ["USD"], now: Date) throws(PriceError) -> FetchedPrices {
        let vs = Array(Set(currencies.map { $0.lowercased() })).sorted()
        var result = FetchedPrices(quotes: [], missing: [])
        var start = 0
        let unique = Array(Set(ids)).sorted()
        while start < unique.count {
            let batch = Array(unique[start..<min(start + Self.batchSize, unique.count)])
            start += Self.batchSize
            let body = try get("/simple/price", query: [
                ("ids", batch.joined(separator: ",")), ("vs_currencies", vs.joined(separator: ",")),
                ("include_market_cap", "true"), ("include_24hr_change", "true"),
                ("include_last_updated_at", "true"), ("precision", "full"),
            ], maxBodyBytes: config.limits.prices)
            let fields: [String: [String: RawField]]
            do {
                fields = try Self.readSimplePrice(body, currencies: vs)
            } catch {
                throw PriceError.badResponse(ServiceRequest.readingDetail(error, body: body)).redacting(secrets)
            }
            for id in batch {
                guard let coin = fields[id] else {
                    result.missing.append(id)
                    continue
                }
                func value<T>(_ key: String, _ what: String, _ check: (String) -> T?) -> T? {
                    switch coin[key] {
                    case nil, .null?: return nil
                    case let .number(text)?:
                        if let v = check(text) { return v }
                        result.warnings.append("ignored the \(what) of '\(TextEscaping.escaped(id))' from the price service (\(Self.shown(text)))")
                        return nil
                    case .other?:
                        result.warnings.append("ignored the \(what) of '\(TextEscaping.escaped(id))' from the price service (not a number)")
                        return nil
                    }
                }
                let updated = value("last_updated_at", "update time", ServiceNumbers.date)
                var priced = false
                for c in vs {
                    guard let price = value(c, "price", ServiceNumbers.price) else { continue }
                    priced = true
                    result.quotes.append(Quote(
                        coinId: id, price: price, change24h: value(c + "_24h_change", "24h change", ServiceNumbers.change),
                        marketCap: value(c + "_market_cap", "market cap", ServiceNumbers.marketCap), time: now,
                        sourceUpdatedAt: updated, source: .coingecko, currency: c.uppercased()))
                }
                if !priced { result.missing.append(id) }
            }
        }
        result.warnings = result.warnings.map { PriceError.redact($0, secrets) }
        return result
    }

    /// `/coins/{id}/market_chart`: the prices of one coin in one currency over the last `days` days,
    /// oldest first, one quote per point the service sent (daily at 00:00 UTC beyond 90 days, hourly
    /// from 2 to 90, 5-minutely for 1; the last point is "now"). No `interval` is sent: the free and
    /// demo plans refuse it.
    ///
    /// The reply's three arrays may differ in length, so they are matched by timestamp, never by
    /// position: a market cap is kept only where a point of the same millisecond has one. A point
    /// with an unusable time (outside the `days` asked for, with a day's slack, or more than an hour after `now`) or
    /// price (`ServiceNumbers.price`) is dropped with one warning for the reply.
    ///
    /// - Throws: `PriceError.historyBeyondPlan` for a 401 about the range (error 10012, or any 401
    ///   that is not about the key), `.unknownCoin` for a 404, `.badResponse` for a reply that is not
    ///   the expected JSON (a truncated one), and the errors of every request.
    public func marketChart(coinId: String, currency: String, days: Int, now: Date) throws(PriceError) -> FetchedPrices {
        guard (1...(config.isPro ? 3650 : PriceError.maxHistoryDays)).contains(days) else { throw .historyDays(days) }
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~"))
        let encoded = coinId.addingPercentEncoding(withAllowedCharacters: allowed) ?? coinId
        let vs = currency.lowercased()
        let body = try get("/coins/\(encoded)/market_chart", query: [("vs_currency", vs), ("days", String(days))],
                           maxBodyBytes: config.limits.prices) { response in
            switch (response.status, Self.errorCode(in: response.body)) {
            case (404, _): return .unknownCoin(coinId)
            case (401, 10002?), (401, 401?): return nil  // about the key: worded as elsewhere
            case (401, _): return .historyBeyondPlan(days: days)
            default: return nil
            }
        }
        let chart: Chart
        do {
            chart = try Self.readChart(body)
        } catch {
            throw PriceError.badResponse(ServiceRequest.readingDetail(error, body: body)).redacting(secrets)
        }
        var caps: [Int64: Decimal] = [:]
        for (stamp, value) in chart.marketCaps {
            guard let date = ServiceNumbers.dateMillis(stamp), case let .number(text) = value, let cap = ServiceNumbers.marketCap(text) else { continue }
            caps[ISODate.millis(date)] = cap
        }
        let latest = now.addingTimeInterval(3600)
        // The window asked for, and a day of slack for the first daily point: a point outside it is not an answer to the question.
        let earliest = now.addingTimeInterval(-TimeInterval((days + 1) * 86_400))
        var byTime: [Int64: Quote] = [:]
        var ignored = 0
        for (stamp, value) in chart.prices {
            guard let date = ServiceNumbers.dateMillis(stamp), date <= latest, date >= earliest,
                  case let .number(text) = value, let price = ServiceNumbers.price(text) else {
                ignored += 1
                continue
            }
            let millis = ISODate.millis(date)
            byTime[millis] = Quote(coinId: coinId, price: price, marketCap: caps[millis], time: date, source: .coingecko,
                                   currency: vs.uppercased())
        }
        ignored += chart.oddPoints
        var result = FetchedPrices(quotes: byTime.keys.sorted().compactMap { byTime[$0] }, missing: [])
        if ignored > 0 {
            let total = chart.prices.count + chart.oddPoints
            result.warnings.append(PriceError.redact(
                "ignored \(ignored) of \(total) price point\(total == 1 ? "" : "s") of '\(TextEscaping.escaped(coinId))' in \(vs.uppercased()) "
                    + "from the price service (an unusable time or price)", secrets))
        }
        return result
    }

    /// The parts of a `market_chart` reply bitpal reads: each point's time and value as sent.
    struct Chart {
        var prices: [(String, RawField)] = []
        var marketCaps: [(String, RawField)] = []
        /// Points that were not `[number, value]`.
        var oddPoints = 0
    }

    /// `{"prices":[[ms,price],…],"market_caps":[…],"total_volumes":[…]}` read with the strict reader.
    static func readChart(_ body: Data) throws(JSONReadError) -> Chart {
        var r = JSONReader(bytes: Array(body))
        var chart = Chart()
        var sawPrices = false
        var odd = 0
        func points(_ r: inout JSONReader) throws(JSONReadError) -> [(String, RawField)] {
            var out: [(String, RawField)] = []
            try r.beginArray()
            while try r.nextElement() {
                let mark = r.mark
                do {
                    try r.beginArray()
                } catch {
                    r.rewind(to: mark)
                    try r.skipValue()
                    odd += 1
                    continue
                }
                var stamp: String?
                var value = RawField.other
                var index = 0
                while try r.nextElement() {
                    if index == 0 {
                        stamp = try r.numberTextOrSkip()
                    } else if index == 1 {
                        value = r.consumeNull() ? .null : (try r.numberTextOrSkip().map(RawField.number) ?? .other)
                    } else {
                        try r.skipValue()
                    }
                    index += 1
                }
                if let stamp, index == 2 { out.append((stamp, value)) } else { odd += 1 }
            }
            return out
        }
        try r.beginObject()
        while let key = try r.nextKey() {
            switch key {
            case "prices":
                sawPrices = true
                odd = 0
                let read = try points(&r)
                chart.prices = read
                chart.oddPoints = odd
            case "market_caps":
                let read = try points(&r)  // an odd market cap only loses that cap
                chart.marketCaps = read
            default: try r.skipValue()
            }
        }
        try r.finish()
        guard sawPrices else { throw JSONReadError(message: "no \"prices\" array", line: 1, column: 1) }
        return chart
    }

    /// `/exchange_rates`: how many units of each currency one bitcoin is worth, by lower-case code.
    /// An entry without a usable positive value is left out (no rate: never assumed 1).
    public func exchangeRates() throws(PriceError) -> [String: Decimal] {
        let body = try get("/exchange_rates", query: [], maxBodyBytes: config.limits.prices)
        do {
            return try Self.readExchangeRates(body)
        } catch {
            throw PriceError.badResponse(ServiceRequest.readingDetail(error, body: body)).redacting(secrets)
        }
    }

    /// `{"rates": {"eur": {"value": 89532.437, …}, …}}` read with the strict reader.
    static func readExchangeRates(_ body: Data) throws(JSONReadError) -> [String: Decimal] {
        var r = JSONReader(bytes: Array(body))
        var out: [String: Decimal] = [:]
        var sawRates = false
        try r.beginObject()
        while let key = try r.nextKey() {
            guard key == "rates" else { try r.skipValue(); continue }
            sawRates = true
            try r.beginObject()
            while let code = try r.nextKey() {
                guard try r.beginObjectOrSkip() else { continue }
                while let field = try r.nextKey() {
                    guard field == "value" else { try r.skipValue(); continue }
                    if let text = try r.numberTextOrSkip(), let v = ServiceNumbers.price(text), v > 0 { out[code.lowercased()] = v }
                }
            }
        }
        try r.finish()
        guard sawRates else { throw JSONReadError(message: "no \"rates\" object", line: 1, column: 1) }
        return out
    }

    /// A field of `/simple/price` as sent: a number's text, `null`, or something else.
    enum RawField: Equatable {
        case number(String)
        case null
        case other
    }

    /// `{"id":{"usd":…,…},…}` read with the strict reader, numbers kept as text.
    /// A coin whose value is not an object is left out (no price).
    static func readSimplePrice(_ body: Data, currencies: [String] = ["usd"]) throws(JSONReadError) -> [String: [String: RawField]] {
        let wanted = Set(currencies.flatMap { [$0, $0 + "_market_cap", $0 + "_24h_change"] } + ["last_updated_at"])
        var r = JSONReader(bytes: Array(body))
        var out: [String: [String: RawField]] = [:]
        try r.beginObject()
        while let id = try r.nextKey() {
            guard try r.beginObjectOrSkip() else { continue }
            var fields: [String: RawField] = [:]
            while let key = try r.nextKey() {
                switch key {
                case _ where wanted.contains(key):
                    if r.consumeNull() {
                        fields[key] = .null
                        continue
                    }
                    fields[key] = try r.numberTextOrSkip().map(RawField.number) ?? .other
                default: try r.skipValue()
                }
            }
            out[id] = fields
        }
        try r.finish()
        return out
    }

    /// A number as the server wrote it, short enough for a message.
    static func shown(_ text: String) -> String {
        let escaped = TextEscaping.escaped(text)
        return escaped.count <= 40 ? escaped : String(escaped.prefix(24)) + "… (\(text.utf8.count) characters)"
    }

    /// Every coin the service knows (`/coins/list`): id, symbol and name.
    public func coinList() throws(PriceError) -> [Coin] {
        struct Entry: Decodable {
            var id: String
            var symbol: String
            var name: String
        }
        let body = try get("/coins/list", query: [], maxBodyBytes: config.limits.coinList)
        do {
            let coins = try JSONDecoder().decode([Entry].self, from: body).map {
                Coin(id: $0.id, symbol: $0.symbol, name: $0.name)
            }
            // The list is stored (coins.json) and shown: a coin whose id, symbol or name echoes a key is left out.
            if secrets.allSatisfy(\.isEmpty) { return coins }
            return coins.filter { c in [c.id, c.symbol, c.name].allSatisfy { PriceError.redact($0, secrets) == $0 } }
        } catch {
            throw PriceError.badResponse(Self.decodingDetail(error, body: body)).redacting(secrets)
        }
    }

    /// GET within the budget, with retries: at most `maxAttempts` for 429 and 5xx, waiting as
    /// `Retry-After` says (capped at `maxWait`), else 1 s then 2 s, but never starting a wait
    /// the budget cannot cover. Every error comes back with the keys redacted.
    /// `failure` may word a refusal its own way (`nil`: as `classify` does).
    func get(_ path: String, query: [(String, String)], maxBodyBytes: Int,
             failure: (HTTPResponse) -> PriceError? = { _ in nil }) throws(PriceError) -> Data {
        do {
            return try getUnredacted(path, query: query, maxBodyBytes: maxBodyBytes, failure: failure)
        } catch {
            throw error.redacting(secrets)
        }
    }

    private func getUnredacted(_ path: String, query: [(String, String)], maxBodyBytes: Int,
                               failure: (HTTPResponse) -> PriceError?) throws(PriceError) -> Data {
        var headers = ["accept": "application/json", "user-agent": "bitpal"]
        if let h = config.keyHeader, let v = config.keyValue { headers[h] = v }
        let request = ServiceRequest(baseURL: config.baseURL, host: config.host, headers: headers, maxAttempts: config.maxAttempts,
                                     maxWait: config.maxWait, transport: transport, budget: budget, sleep: sleep)
        return try request.get(path, query: query, maxBodyBytes: maxBodyBytes) { failure($0) ?? classify($0) }
    }

    func classify(_ response: HTTPResponse) -> PriceError {
        let code = Self.errorCode(in: response.body)
        switch (response.status, code) {
        case (400, 10010?): return .proKeyOnPublicHost
        case (400, 10011?): return .demoKeyOnProHost
        case (401, _), (403, 10002?):
            if code == 10002 && config.keyValue == nil { return .keyRequired }
            return config.keyValue == nil ? .keyRequired : .keyRejected
        default:
            return .refused(status: response.status, message: Self.errorMessage(in: response.body, redacting: secrets))
        }
    }

    /// `error_code` wherever the body's shape puts it (top level, under `status`, under `error.status`).
    static func errorCode(in body: Data) -> Int? {
        guard let object = try? JSONSerialization.jsonObject(with: body) else { return nil }
        func find(_ value: Any, depth: Int) -> Int? {
            guard depth < 4, let dict = value as? [String: Any] else { return nil }
            if let n = dict["error_code"] as? Int { return n }
            for v in dict.values { if let n = find(v, depth: depth + 1) { return n } }
            return nil
        }
        return find(object, depth: 0)
    }

    /// The server's message, keys redacted before it is shortened (so no part of a key survives).
    static func errorMessage(in body: Data, redacting secrets: [String]) -> String? {
        guard let dict = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] else { return nil }
        var text: String?
        if let s = dict["error"] as? String { text = s }
        if text == nil, let status = dict["status"] as? [String: Any], let s = status["error_message"] as? String { text = s }
        return text.map { String(PriceError.redact($0, secrets).prefix(200)) }
    }

    static func decodingDetail(_ error: Error, body: Data) -> String {
        if body.isEmpty { return "an empty body" }
        switch error {
        case DecodingError.dataCorrupted: return "not complete JSON (\(body.count) bytes; truncated?)"
        case DecodingError.typeMismatch, DecodingError.keyNotFound, DecodingError.valueNotFound:
            return "an unexpected JSON shape"
        default: return "not JSON (\(body.count) bytes)"
        }
    }
}

extension JSONReader {
    /// Begins an object; a value of another kind is skipped and `false` returned (a server's odd entry).
    mutating func beginObjectOrSkip() throws(JSONReadError) -> Bool {
        let mark = self.mark
        do {
            try beginObject()
            return true
        } catch {
            rewind(to: mark)
            try skipValue()
            return false
        }
    }

    /// A number's text as sent, or `nil` after skipping a value of another kind.
    mutating func numberTextOrSkip() throws(JSONReadError) -> String? {
        let mark = self.mark
        if let text = try? readNumberText() { return text }
        rewind(to: mark)
        try skipValue()
        return nil
    }
}
