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
}

extension PriceError: CustomStringConvertible {
    public var description: String {
        switch self {
        case let .unreachable(host, detail):
            "cannot reach the price service at \(host): \(detail)"
        case let .timedOut(host, seconds):
            "the price service at \(host) did not answer within \(seconds) s (set BITPAL_HTTP_TIMEOUT to wait longer)"
        case let .rateLimited(attempts):
            "the price service is rate-limiting requests (HTTP 429, \(attempts) attempts); try again in a minute, or set COINGECKO_API_KEY to a free demo key for a higher limit"
        case let .serverError(status, attempts):
            "the price service failed (HTTP \(status), \(attempts) attempts); try again later"
        case .keyRequired:
            "the price service wants an API key (HTTP 401): set COINGECKO_API_KEY to a free demo key, or COINGECKO_PRO_API_KEY to a pro key"
        case .keyRejected:
            "the price service rejected the API key (HTTP 401): check COINGECKO_API_KEY or COINGECKO_PRO_API_KEY"
        case .proKeyOnPublicHost:
            "this is a pro key: use COINGECKO_PRO_API_KEY instead of COINGECKO_API_KEY"
        case .demoKeyOnProHost:
            "this is a demo key: use COINGECKO_API_KEY instead of COINGECKO_PRO_API_KEY"
        case let .refused(status, message):
            "the price service refused the request (HTTP \(status))" + (message.map { ": \(TextEscaping.escaped($0))" } ?? "")
        case let .badResponse(detail):
            "the price service sent a reply bitpal could not read: \(detail)"
        case .offline:
            "offline: not contacting the price service"
        }
    }
}
