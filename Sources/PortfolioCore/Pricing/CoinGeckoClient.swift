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
    /// Seconds each attempt may take (`BITPAL_HTTP_TIMEOUT`, default 20).
    public var timeout: TimeInterval
    /// Attempts for 429 and 5xx answers.
    public var maxAttempts = 3
    /// The longest wait between attempts, whatever `Retry-After` says.
    public var maxWait: TimeInterval = 10

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
        if let text = env["BITPAL_HTTP_TIMEOUT"], let lit = DecimalLiteral.parse(utf8: text.utf8), lit.value > 0 {
            timeout = NSDecimalNumber(decimal: lit.value).doubleValue
        } else {
            timeout = 20
        }
    }

    /// The host, for messages.
    public var host: String { URL(string: baseURL)?.host ?? baseURL }
}

/// One coin's price as the service reported it.
public struct FetchedPrices: Sendable {
    public var quotes: [Quote]
    /// Requested ids the service had no price for (omitted, `null` or `{}`).
    public var missing: [String]
}

/// A client for CoinGecko's v3 API: batched prices and the coin list.
public struct CoinGeckoClient: Sendable {
    public var config: PriceServiceConfig
    public var transport: any HTTPTransport
    private let sleep: @Sendable (TimeInterval) -> Void

    /// ids per request; CoinGecko caps list parameters around this size.
    public static let batchSize = 250

    public init(config: PriceServiceConfig, transport: any HTTPTransport, sleep: @escaping @Sendable (TimeInterval) -> Void) {
        self.config = config
        self.transport = transport
        self.sleep = sleep
    }

    /// USD prices, 24h change and market cap of `ids`, in one request per 250 ids.
    ///
    /// Prices are decoded with `JSONDecoder` straight into `Decimal`, which on this
    /// toolchain keeps every digit, exponent form included (`8.45e-06` → 0.00000845).
    public func prices(for ids: [String], now: Date) throws(PriceError) -> FetchedPrices {
        var quotes: [Quote] = []
        var missing: [String] = []
        var start = 0
        let unique = Array(Set(ids)).sorted()
        while start < unique.count {
            let batch = Array(unique[start..<min(start + Self.batchSize, unique.count)])
            start += Self.batchSize
            let body = try get("/simple/price", query: [
                ("ids", batch.joined(separator: ",")), ("vs_currencies", "usd"),
                ("include_market_cap", "true"), ("include_24hr_change", "true"),
                ("include_last_updated_at", "true"), ("precision", "full"),
            ])
            let decoded: [String: [String: Decimal?]]
            do {
                decoded = try JSONDecoder().decode([String: [String: Decimal?]].self, from: body)
            } catch {
                throw .badResponse(Self.decodingDetail(error, body: body))
            }
            for id in batch {
                guard let fields = decoded[id], let price = fields["usd"] ?? nil, price > 0 else {
                    missing.append(id)
                    continue
                }
                let updated = (fields["last_updated_at"] ?? nil).map {
                    Date(timeIntervalSince1970: NSDecimalNumber(decimal: $0).doubleValue)
                }
                quotes.append(Quote(
                    coinId: id, price: price, change24h: fields["usd_24h_change"] ?? nil,
                    marketCap: fields["usd_market_cap"] ?? nil, time: now, sourceUpdatedAt: updated,
                    source: .coingecko))
            }
        }
        return FetchedPrices(quotes: quotes, missing: missing)
    }

    /// Every coin the service knows (`/coins/list`): id, symbol and name.
    public func coinList() throws(PriceError) -> [Coin] {
        struct Entry: Decodable {
            var id: String
            var symbol: String
            var name: String
        }
        let body = try get("/coins/list", query: [])
        do {
            return try JSONDecoder().decode([Entry].self, from: body).map {
                Coin(id: $0.id, symbol: $0.symbol, name: $0.name)
            }
        } catch {
            throw .badResponse(Self.decodingDetail(error, body: body))
        }
    }

    /// GET with retries: at most `maxAttempts` for 429 and 5xx, waiting as `Retry-After`
    /// says (capped at `maxWait`), else 1 s then 2 s.
    func get(_ path: String, query: [(String, String)]) throws(PriceError) -> Data {
        var components = URLComponents(string: config.baseURL + path)
        components?.queryItems = query.isEmpty ? nil : query.map { URLQueryItem(name: $0.0, value: $0.1) }
        guard let url = components?.url else { throw .badResponse("bad base URL '\(config.baseURL)'") }
        var headers = ["accept": "application/json", "user-agent": "bitpal"]
        if let h = config.keyHeader, let v = config.keyValue { headers[h] = v }
        let request = HTTPRequest(url: url, headers: headers, timeout: config.timeout)
        var attempt = 0
        while true {
            attempt += 1
            let response: HTTPResponse
            do {
                response = try transport.send(request)
            } catch {
                switch error {
                case .timedOut: throw .timedOut(host: config.host, seconds: Int(config.timeout.rounded(.up)))
                case let .cannotConnect(d): throw .unreachable(host: config.host, detail: d)
                case let .failed(d): throw .unreachable(host: config.host, detail: d)
                }
            }
            let status = response.status
            if status == 200 { return response.body }
            if status == 429 || (500...599).contains(status) {
                if attempt >= config.maxAttempts {
                    throw status == 429 ? .rateLimited(attempts: attempt) : .serverError(status: status, attempts: attempt)
                }
                sleep(waitBeforeRetry(attempt: attempt, response: response))
                continue
            }
            throw classify(response)
        }
    }

    func waitBeforeRetry(attempt: Int, response: HTTPResponse) -> TimeInterval {
        if let text = response.headers["retry-after"]?.trimmingCharacters(in: .whitespaces),
           let seconds = Int(text), seconds >= 0 {
            return min(TimeInterval(seconds), config.maxWait)
        }
        return min(TimeInterval(attempt), config.maxWait)
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
            return .refused(status: response.status, message: Self.errorMessage(in: response.body))
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

    static func errorMessage(in body: Data) -> String? {
        guard let dict = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] else { return nil }
        if let s = dict["error"] as? String { return String(s.prefix(200)) }
        if let status = dict["status"] as? [String: Any], let s = status["error_message"] as? String {
            return String(s.prefix(200))
        }
        return nil
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
