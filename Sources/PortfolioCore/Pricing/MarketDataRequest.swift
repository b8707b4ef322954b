import Foundation

/// One GET of a market data source (Yahoo Finance, Twelve Data), never retried: the URL (its query
/// percent-encoded), the run's one deadline, the reply cap and the transport's failures in words.
/// Each client reads the reply's status its own way.
struct MarketDataRequest: Sendable {
    /// The service's name, for messages.
    var service: String
    var baseURL: String
    /// The variable that sets `baseURL`, named when it is not an http or https URL.
    var urlVariable: String
    var headers: [String: String]
    var maxBodyBytes: Int
    var transport: any HTTPTransport
    var budget: NetworkBudget
    /// Keys to redact from every message.
    var secrets: [String] = []

    /// The reply to `GET baseURL + path?query`, whatever its status.
    func send(_ path: String, query: [(String, String)]) throws(MarketDataError) -> HTTPResponse {
        var components = URLComponents(string: baseURL + path)
        components?.percentEncodedQueryItems = query.map {
            URLQueryItem(name: $0.0, value: $0.1.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0.1)
        }
        guard let url = components?.url, let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", url.host != nil else {
            throw .unavailable(service: service, detail: "'\(TextEscaping.escaped(baseURL))' is not an http or https URL (\(urlVariable))")
        }
        let remaining = budget.remaining
        guard remaining > 0 else { throw .unavailable(service: service, detail: "no time left in this run's budget") }
        do {
            return try transport.send(HTTPRequest(url: url, headers: headers, timeout: remaining, maxBodyBytes: maxBodyBytes))
        } catch {
            let detail: String = switch error {
            case .timedOut: "no answer within \(budget.seconds) s (set BITPAL_HTTP_TIMEOUT to wait longer)"
            case let .cannotConnect(d), let .failed(d), let .unavailable(d): "cannot reach \(url.host ?? "it"): \(d)"
            case let .tooLarge(limit): "a reply larger than \(PriceError.size(limit)); stopped reading it"
            }
            throw .unavailable(service: service, detail: PriceError.redact(detail, secrets))
        }
    }

    /// A reply that is not JSON (a redirect, an HTML page, plain text) in words: refused for now.
    func notJSON(_ response: HTTPResponse) -> MarketDataError {
        if (300...399).contains(response.status) {
            return .unavailable(service: service, detail: "it answered with a redirect (HTTP \(response.status)); bitpal follows none")
        }
        return .unavailable(service: service, detail: "it sent a page that is not JSON (HTTP \(response.status), refused for now)")
    }
}
