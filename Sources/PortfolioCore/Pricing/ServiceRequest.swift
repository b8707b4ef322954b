import Foundation

/// One service's GET requests under a run's budget: the retry rule every service client shares.
struct ServiceRequest: Sendable {
    var baseURL: String
    /// The host, for messages.
    var host: String
    var headers: [String: String]
    /// Attempts for 429 and 5xx answers.
    var maxAttempts: Int
    /// The longest wait between attempts, whatever `Retry-After` says.
    var maxWait: TimeInterval
    var transport: any HTTPTransport
    var budget: NetworkBudget
    var sleep: @Sendable (TimeInterval) -> Void

    /// A retry is not started with less than this left of the budget.
    static let minimumAttemptTime: TimeInterval = 0.25

    /// GET within the budget, with retries: at most `maxAttempts` for 429 and 5xx, waiting as
    /// `Retry-After` says (capped at `maxWait`), else 1 s then 2 s, but never starting a wait
    /// the budget cannot cover. A 3xx is `.redirected` (none is followed); any other status but
    /// 200 is what `refused` makes of it. Errors are not redacted here (the client does it).
    func get(_ path: String, query: [(String, String)], maxBodyBytes: Int,
             refused: (HTTPResponse) -> PriceError) throws(PriceError) -> Data {
        var components = URLComponents(string: baseURL + path)
        components?.queryItems = query.isEmpty ? nil : query.map { URLQueryItem(name: $0.0, value: $0.1) }
        guard let url = components?.url, let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              url.host != nil else {
            throw .unreachable(host: host, detail: "'\(TextEscaping.escaped(baseURL))' is not an http or https URL")
        }
        let timedOut = PriceError.timedOut(host: host, seconds: budget.seconds)
        var attempt = 0
        while true {
            attempt += 1
            let remaining = budget.remaining
            if remaining <= 0 { throw timedOut }
            let request = HTTPRequest(url: url, headers: headers, timeout: remaining, maxBodyBytes: maxBodyBytes)
            let response: HTTPResponse
            do {
                response = try transport.send(request)
            } catch {
                switch error {
                case .timedOut: throw timedOut
                case let .cannotConnect(d): throw .unreachable(host: host, detail: d)
                case let .failed(d): throw .unreachable(host: host, detail: d)
                case let .tooLarge(limit): throw .tooLarge(limit: limit)
                case let .unavailable(d): throw .networkUnavailable(d)
                }
            }
            let status = response.status
            if status == 200 { return response.body }
            if (300...399).contains(status) {
                throw .redirected(status: status, location: response.headers["location"].map { Self.locationHost($0, base: url) })
            }
            if status == 429 || (500...599).contains(status) {
                let failure: PriceError = status == 429 ? .rateLimited(attempts: attempt) : .serverError(status: status, attempts: attempt)
                if attempt >= maxAttempts { throw failure }
                let wait = waitBeforeRetry(attempt: attempt, response: response)
                // Do not start a wait the budget cannot cover (with a little time left to ask again).
                if wait + Self.minimumAttemptTime >= budget.remaining { throw failure }
                sleep(wait)
                continue
            }
            throw refused(response)
        }
    }

    /// Where a redirect points, for the message: the host and port, never the path or query.
    static func locationHost(_ location: String, base: URL) -> String {
        guard let target = URL(string: location, relativeTo: base)?.absoluteURL, let host = target.host else {
            return "an unreadable location"
        }
        let port = target.port.map { ":\($0)" } ?? ""
        return String((host + port).prefix(100))
    }

    func waitBeforeRetry(attempt: Int, response: HTTPResponse) -> TimeInterval {
        if let text = response.headers["retry-after"]?.trimmingCharacters(in: .whitespaces),
           !text.isEmpty, text.utf8.count <= 6, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let seconds = Int(text) {
            return min(TimeInterval(seconds), maxWait)
        }
        if response.headers["retry-after"] != nil { return maxWait }  // a date or junk: wait the longest
        return min(TimeInterval(attempt), maxWait)
    }

    /// Why a reply could not be read, for `PriceError.badResponse`.
    static func readingDetail(_ error: JSONReadError, body: Data) -> String {
        if body.isEmpty { return "an empty body" }
        return "not the JSON bitpal expected (\(body.count) bytes; \(error.message) at line \(error.line), column \(error.column))"
    }
}
