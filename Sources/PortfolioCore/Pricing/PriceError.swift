/// Why the price service gave no usable answer (exit 3). A key never appears in these.
public enum PriceError: Error, Equatable, Sendable {
    case unreachable(host: String, detail: String)
    case timedOut(host: String, seconds: Int)
    case rateLimited(attempts: Int)
    case serverError(status: Int, attempts: Int)
    case keyRequired
    case keyRejected
    /// A pro key on the public host.
    case proKeyOnPublicHost
    /// A demo key on the pro host.
    case demoKeyOnProHost
    case refused(status: Int, message: String?)
    case badResponse(String)
    case offline
    /// A 3xx: bitpal follows no redirect (a key must reach only the configured host).
    case redirected(status: Int, location: String?)
    /// The reply grew past the cap for its endpoint (bytes, after decompression).
    case tooLarge(limit: Int)
    /// No HTTP library could be loaded.
    case networkUnavailable(String)
    /// History further back than the plan allows (HTTP 401, `error_code` 10012 on `market_chart`).
    case historyBeyondPlan(days: Int)
    /// A number of days of history outside 1…365, refused before asking.
    case historyDays(Int)
    /// The service does not know this coin id (HTTP 404 on `/coins/{id}/…`): not a network failure.
    case unknownCoin(String)
    /// The exchange-rate service has no rates for what was asked (HTTP 404): not a network failure.
    case noRates(String)
    /// A failure of another service than CoinGecko, worded with its name (`the ECB's rate service`).
    indirect case of(service: String, PriceError)

    /// The failure itself, whichever service it was of.
    public var underlying: PriceError {
        if case let .of(_, inner) = self { return inner.underlying }
        return self
    }

    /// The same error with every occurrence of each secret (any case, or percent-encoded)
    /// replaced by `[redacted]`: servers echo keys back in their messages.
    public func redacting(_ secrets: [String]) -> PriceError {
        func clean(_ text: String) -> String { PriceError.redact(text, secrets) }
        switch self {
        case let .unreachable(host, detail): return .unreachable(host: clean(host), detail: clean(detail))
        case let .timedOut(host, seconds): return .timedOut(host: clean(host), seconds: seconds)
        case let .refused(status, message): return .refused(status: status, message: message.map(clean))
        case let .badResponse(detail): return .badResponse(clean(detail))
        case let .redirected(status, location): return .redirected(status: status, location: location.map(clean))
        case let .networkUnavailable(detail): return .networkUnavailable(clean(detail))
        case let .unknownCoin(id): return .unknownCoin(clean(id))
        case let .noRates(what): return .noRates(clean(what))
        case let .of(service, inner): return .of(service: service, inner.redacting(secrets))
        case .rateLimited, .serverError, .keyRequired, .keyRejected, .proKeyOnPublicHost, .demoKeyOnProHost, .offline,
             .tooLarge, .historyBeyondPlan, .historyDays:
            return self
        }
    }

    /// `text` with each secret replaced by `[redacted]`, whatever its case, and also in percent-encoded form.
    public static func redact(_ text: String, _ secrets: [String]) -> String {
        var out = text
        for secret in secrets where !secret.isEmpty {
            var forms = [secret]
            if let encoded = secret.addingPercentEncoding(withAllowedCharacters: .alphanumerics), encoded != secret {
                forms.append(encoded)
            }
            for form in forms {
                while let range = out.range(of: form, options: [.caseInsensitive, .literal]) {
                    out.replaceSubrange(range, with: "[redacted]")
                }
            }
            out = redactFragments(out, of: secret)
        }
        return out
    }

    /// Replaces every word of `text` that shares 8 or more consecutive characters with `secret`
    /// (any case): a server that echoes a key trimmed, re-cased or run into other text still
    /// does not get it printed.
    static func redactFragments(_ text: String, of secret: String) -> String {
        let key = Array(secret.lowercased().unicodeScalars)
        let width = min(8, key.count)
        guard width >= 4 else { return text }
        var windows = Set<String>()
        for start in 0...(key.count - width) { windows.insert(String(String.UnicodeScalarView(key[start..<(start + width)]))) }
        func isWordScalar(_ u: Unicode.Scalar) -> Bool { u.properties.isAlphabetic || u.properties.numericType != nil || u == "-" || u == "_" }
        var out = String.UnicodeScalarView()
        var word: [Unicode.Scalar] = []
        func flush() {
            let lower = word.map { String($0).lowercased().unicodeScalars.first ?? $0 }
            var leaks = false
            if lower.count >= width {
                for start in 0...(lower.count - width) where windows.contains(String(String.UnicodeScalarView(lower[start..<(start + width)]))) {
                    leaks = true
                    break
                }
            }
            if leaks { out.append(contentsOf: "[redacted]".unicodeScalars) } else { out.append(contentsOf: word) }
            word.removeAll()
        }
        for u in text.unicodeScalars {
            if isWordScalar(u) { word.append(u) } else { flush(); out.append(u) }
        }
        flush()
        return String(out)
    }
}

extension PriceError: CustomStringConvertible {
    public var description: String { description(service: "the price service") }

    /// The message with the service named `service` (`the price service` is CoinGecko; the ECB's
    /// exchange-rate service words its failures with its own name).
    public func description(service: String) -> String {
        switch self {
        case let .of(name, inner):
            inner.description(service: name)
        case let .unreachable(host, detail):
            "cannot reach \(service) at \(host): \(detail)"
        case let .timedOut(host, seconds):
            "\(service) at \(host) did not answer within \(seconds) s (set BITPAL_HTTP_TIMEOUT to wait longer)"
        case let .rateLimited(attempts):
            "\(service) is rate-limiting requests (HTTP 429, \(attempts) attempt\(attempts == 1 ? "" : "s")); try again in a minute, or set COINGECKO_API_KEY to a free demo key for a higher limit"
        case let .serverError(status, attempts):
            "\(service) failed (HTTP \(status), \(attempts) attempt\(attempts == 1 ? "" : "s")); try again later"
        case .keyRequired:
            "the price service wants an API key (HTTP 401): set COINGECKO_API_KEY to a free demo key, or COINGECKO_PRO_API_KEY to a pro key"
        case .keyRejected:
            "the price service rejected the API key (HTTP 401): check COINGECKO_API_KEY or COINGECKO_PRO_API_KEY"
        case .proKeyOnPublicHost:
            "this is a pro key: use COINGECKO_PRO_API_KEY instead of COINGECKO_API_KEY"
        case .demoKeyOnProHost:
            "this is a demo key: use COINGECKO_API_KEY instead of COINGECKO_PRO_API_KEY"
        case let .refused(status, message):
            "\(service) refused the request (HTTP \(status))" + (message.map { ": \(TextEscaping.escaped($0))" } ?? "")
        case let .badResponse(detail):
            "\(service) sent a reply bitpal could not read: \(detail)"
        case .offline:
            "offline: not contacting \(service)"
        case let .redirected(status, location):
            "\(service) answered with a redirect (HTTP \(status)" + (location.map { " to \(TextEscaping.escaped($0))" } ?? "")
                + "); bitpal follows no redirects, so check BITPAL_API_URL"
        case let .tooLarge(limit):
            "\(service) sent a reply larger than \(PriceError.size(limit)); stopped reading it"
        case let .networkUnavailable(detail):
            "cannot use the network: \(detail)"
        case let .historyBeyondPlan(days):
            "the price service refused \(days) day\(days == 1 ? "" : "s") of history (HTTP 401): its free and demo plans reach back "
                + "at most \(PriceError.maxHistoryDays) days (ask for fewer with --days, or use a paid plan's COINGECKO_PRO_API_KEY)"
        case let .historyDays(days):
            "\(days == Int.max ? "more than \(PriceError.maxHistoryDays) days" : "\(days) day\(days == 1 ? "" : "s")") of history: ask for 1 to \(PriceError.maxHistoryDays) "
                + "(the free and demo plans of the price service reach back \(PriceError.maxHistoryDays) days)"
        case let .unknownCoin(id):
            "the price service does not know the coin '\(TextEscaping.escaped(id))' (HTTP 404); find its id with 'bitpal coins search'"
        case let .noRates(what):
            "the exchange-rate service has no ECB rates for \(TextEscaping.escaped(what)) (HTTP 404; they start on 1999-01-04)"
        }
    }
}

extension PriceError {
    /// The most days of history the free and demo plans give (`/coins/{id}/market_chart`).
    public static let maxHistoryDays = 365

    /// `1 MiB`, `32 MiB`, `512 KiB`, or bytes.
    static func size(_ bytes: Int) -> String {
        if bytes >= 1 << 20 && bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
        if bytes >= 1 << 10 && bytes % (1 << 10) == 0 { return "\(bytes >> 10) KiB" }
        return "\(bytes) bytes"
    }
}
