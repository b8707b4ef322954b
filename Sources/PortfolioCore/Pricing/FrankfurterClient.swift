import Foundation

/// How to reach the exchange-rate service (Frankfurter v1: the ECB's reference rates, no key).
/// `BITPAL_FX_URL` overrides the base URL.
public struct FXServiceConfig: Sendable {
    public static let publicURL = "https://api.frankfurter.dev"

    public var baseURL: String
    /// Attempts for 429 and 5xx answers.
    public var maxAttempts = 3
    /// The longest wait between attempts, whatever `Retry-After` says.
    public var maxWait: TimeInterval = 10
    /// The most body bytes (decompressed) of a range: every ECB currency since 1999 is about 3 MB.
    public var rangeLimit = 16 << 20
    /// The most body bytes of `/latest` (about 1 KB) and of errors.
    public var otherLimit = 1 << 20

    public init(environment env: [String: String]) {
        var base = env["BITPAL_FX_URL"].flatMap { $0.isEmpty ? nil : $0 } ?? Self.publicURL
        while base.hasSuffix("/") { base.removeLast() }
        baseURL = base
    }

    /// The host, for messages.
    public var host: String { URL(string: baseURL)?.host ?? baseURL }
}

/// The ECB's reference rates of one working day: units of each currency per one euro.
public struct ECBDay: Equatable, Sendable {
    /// Days since 1970-01-01 (the ECB's date, a calendar day).
    public var day: Int64
    /// By upper-case code; EUR is not listed (it is 1).
    public var perEuro: [String: Fixed18]
}

/// What the exchange-rate service sent for one request.
public struct FetchedECBRates: Sendable {
    /// Oldest first.
    public var days: [ECBDay]
    /// Values bitpal ignored, and why (one line each).
    public var warnings: [String] = []
}

/// A client for Frankfurter v1 (`GET /v1/{start}..{end}?base=EUR`, `/v1/latest?base=EUR`), under the
/// run's budget and the price service's rules: retries, reply caps, no redirects, keys redacted.
public struct FrankfurterClient: Sendable {
    public var config: FXServiceConfig
    /// Keys to redact from every message derived from a reply or transport error.
    public var secrets: [String]
    let request: ServiceRequest

    /// Days before `start` a range may begin with: the service starts it at the last working day at
    /// or before `start`, and the ECB has no gap longer than this.
    public static let lookbackDays: Int64 = 14

    public init(config: FXServiceConfig, transport: any HTTPTransport, budget: NetworkBudget, secrets: [String] = [],
                sleep: @escaping @Sendable (TimeInterval) -> Void) {
        self.config = config
        self.secrets = secrets.filter { !$0.isEmpty }
        request = ServiceRequest(baseURL: config.baseURL, host: config.host,
                                 headers: ["accept": "application/json", "user-agent": "bitpal"], maxAttempts: config.maxAttempts,
                                 maxWait: config.maxWait, transport: transport, budget: budget, sleep: sleep)
    }

    /// The rates of every working day from `start` through `end` (days since 1970), and of the last
    /// working day before `start` when the service begins there. Days before that, or after `end`,
    /// are dropped with a warning.
    ///
    /// - Throws: `PriceError.noRates` for a 404 (no rates in that span), `.badResponse` for a reply
    ///   that is not the expected JSON, and the errors of every request.
    public func range(from start: Int64, through end: Int64) throws(PriceError) -> FetchedECBRates {
        let path = "/v1/\(ISODate.dayText(start))..\(ISODate.dayText(end))"
        let body = try get(path, maxBodyBytes: config.rangeLimit, asked: "\(ISODate.dayText(start)) … \(ISODate.dayText(end))")
        return try read(body, earliest: start - Self.lookbackDays, latest: end)
    }

    /// The newest working day's rates (`today` bounds the day the service may name).
    public func latest(today: Int64) throws(PriceError) -> FetchedECBRates {
        let body = try get("/v1/latest", maxBodyBytes: config.otherLimit, asked: "the latest day")
        return try read(body, earliest: today - Self.lookbackDays, latest: today)
    }

    /// How messages name it.
    public static let serviceName = "the ECB's rate service (Frankfurter)"

    private func get(_ path: String, maxBodyBytes: Int, asked: String) throws(PriceError) -> Data {
        do throws(PriceError) {
            return try getWorded(path, maxBodyBytes: maxBodyBytes, asked: asked)
        } catch {
            throw error == .noRates(asked) ? error : .of(service: Self.serviceName, error)
        }
    }

    private func getWorded(_ path: String, maxBodyBytes: Int, asked: String) throws(PriceError) -> Data {
        do {
            return try request.get(path, query: [("base", "EUR")], maxBodyBytes: maxBodyBytes) { response in
                let message = Self.message(in: response.body)
                return response.status == 404 ? .noRates(asked) : .refused(status: response.status, message: message)
            }
        } catch {
            // Worded for this service: no key would help, and its URL is BITPAL_FX_URL.
            switch error {
            case let .rateLimited(attempts):
                throw PriceError.refused(status: 429, message: "too many requests (\(attempts) attempt\(attempts == 1 ? "" : "s")); try again later")
                    .redacting(secrets)
            case let .redirected(status, location):
                throw PriceError.refused(status: status, message: "a redirect" + (location.map { " to \($0)" } ?? "")
                    + "; bitpal follows no redirects, so check BITPAL_FX_URL").redacting(secrets)
            default: throw error.redacting(secrets)
            }
        }
    }

    private func read(_ body: Data, earliest: Int64, latest: Int64) throws(PriceError) -> FetchedECBRates {
        do {
            return try Self.readRates(body, earliest: earliest, latest: latest)
        } catch {
            throw PriceError.of(service: Self.serviceName, .badResponse(ServiceRequest.readingDetail(error, body: body))).redacting(secrets)
        }
    }

    /// `{"base":"EUR","rates":{"2024-05-31":{"USD":1.0856,…},…}}` (a range) or
    /// `{"base":"EUR","date":"2024-05-31","rates":{"USD":1.0856,…}}` (one day), read with the strict
    /// reader. A base other than EUR, or no `rates`, is an error; an unusable day or rate is dropped
    /// with a warning (numbers through `ServiceNumbers.price`, kept exactly).
    static func readRates(_ body: Data, earliest: Int64, latest: Int64) throws(JSONReadError) -> FetchedECBRates {
        var r = JSONReader(bytes: Array(body))
        var date: String?
        var base: String?
        var single: [String: Fixed18]?
        var byDay: [(String, [String: Fixed18])] = []
        var dropped = 0
        /// One currency's rate, or `nil` (counted as dropped when it is a code with an unusable value).
        func rate(_ code: String, _ text: String?) -> Fixed18? {
            guard code.utf8.count == 3, code.utf8.allSatisfy({ $0 >= 65 && $0 <= 90 }) else { return nil }
            guard let text, let value = ServiceNumbers.price(text), let rate = Fixed18(value), rate.units > 0 else {
                dropped += 1
                return nil
            }
            return rate
        }
        try r.beginObject()
        while let key = try r.nextKey() {
            switch key {
            case "base": base = try r.readStringOrNull()
            case "date": date = try r.readStringOrNull()
            case "rates":
                // A range's days hold objects; one day's rates hold numbers.
                try r.beginObject()
                var numbers: [String: Fixed18] = [:]
                while let inner = try r.nextKey() {
                    let mark = r.mark
                    if let text = try? r.readNumberText() {
                        numbers[inner] = rate(inner, text)
                        continue
                    }
                    r.rewind(to: mark)
                    guard try r.beginObjectOrSkip() else { numbers[inner] = rate(inner, nil); continue }
                    var day: [String: Fixed18] = [:]
                    while let code = try r.nextKey() { day[code] = rate(code, try r.numberTextOrSkip()) }
                    byDay.append((inner, day))
                }
                single = numbers
            default: try r.skipValue()
            }
        }
        try r.finish()
        guard let single else { throw JSONReadError(message: "no \"rates\" object", line: 1, column: 1) }
        guard base == nil || base == "EUR" else {
            throw JSONReadError(message: "rates in \(TextEscaping.escaped(String((base ?? "").prefix(10)))), not per euro", line: 1, column: 1)
        }
        if let date, !single.isEmpty { byDay.append((date, single)) }
        var result = FetchedECBRates(days: [])
        var badDays = 0
        for (text, rates) in byDay {
            guard let (y, m, d) = ISODate.parseDay(utf8: text.utf8) else { badDays += 1; continue }
            let day = ISODate.days(fromCivil: y, m, d)
            guard day >= earliest, day <= latest else { badDays += 1; continue }
            result.days.append(ECBDay(day: day, perEuro: rates))
        }
        result.days.sort { $0.day < $1.day }
        if badDays > 0 {
            result.warnings.append("ignored \(badDays) day\(badDays == 1 ? "" : "s") of rates from the exchange-rate service (an unusable or unasked-for date)")
        }
        if dropped > 0 {
            result.warnings.append("ignored \(dropped) rate\(dropped == 1 ? "" : "s") from the exchange-rate service (not a usable number)")
        }
        return result
    }

    /// `{"message":"…"}`, shortened.
    static func message(in body: Data) -> String? {
        guard let dict = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any], let text = dict["message"] as? String else { return nil }
        return String(text.prefix(200))
    }
}
