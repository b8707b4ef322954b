import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

public struct HTTPRequest: Sendable {
    public var url: URL
    public var headers: [String: String]
    public var timeout: TimeInterval
}

public struct HTTPResponse: Sendable {
    public var status: Int
    /// Header names in lower case.
    public var headers: [String: String]
    public var body: Data

    public init(status: Int, headers: [String: String], body: Data) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// Why a request got no HTTP response at all.
public enum TransportError: Error, Equatable, Sendable {
    case timedOut
    case cannotConnect(String)
    case failed(String)
}

/// Sends one GET request and waits for its response.
public protocol HTTPTransport: Sendable {
    func send(_ request: HTTPRequest) throws(TransportError) -> HTTPResponse
}

/// The real transport: URLSession (FoundationNetworking on Linux), used synchronously.
public struct URLSessionTransport: HTTPTransport {
    public init() {}

    public func send(_ request: HTTPRequest) throws(TransportError) -> HTTPResponse {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = "GET"
        urlRequest.timeoutInterval = request.timeout
        for (k, v) in request.headers { urlRequest.setValue(v, forHTTPHeaderField: k) }
        let config = URLSessionConfiguration.ephemeral
        config.timeoutIntervalForRequest = request.timeout
        config.timeoutIntervalForResource = request.timeout
        config.requestCachePolicy = .reloadIgnoringLocalCacheData
        let session = URLSession(configuration: config)
        defer { session.finishTasksAndInvalidate() }
        let box = ResultBox()
        let done = DispatchSemaphore(value: 0)
        let task = session.dataTask(with: urlRequest) { data, response, error in
            box.set(data: data, response: response, error: error)
            done.signal()
        }
        task.resume()
        // The session's own timeout fires first; this is a backstop for a stuck task.
        if done.wait(timeout: .now() + request.timeout + 5) == .timedOut {
            task.cancel()
            throw .timedOut
        }
        let (data, response, error) = box.get()
        if let error {
            let code = (error as? URLError)?.code
            switch code {
            case .timedOut?: throw .timedOut
            case .cannotConnectToHost?, .cannotFindHost?, .dnsLookupFailed?, .notConnectedToInternet?,
                 .networkConnectionLost?:
                throw .cannotConnect(error.localizedDescription)
            default: throw .failed(error.localizedDescription)
            }
        }
        guard let http = response as? HTTPURLResponse else { throw .failed("no HTTP response") }
        var headers: [String: String] = [:]
        for (k, v) in http.allHeaderFields {
            if let k = k as? String, let v = v as? String { headers[k.lowercased()] = v }
        }
        return HTTPResponse(status: http.statusCode, headers: headers, body: data ?? Data())
    }
}

private final class ResultBox: @unchecked Sendable {
    private let lock = NSLock()
    private var data: Data?
    private var response: URLResponse?
    private var error: Error?

    func set(data: Data?, response: URLResponse?, error: Error?) {
        lock.lock()
        self.data = data
        self.response = response
        self.error = error
        lock.unlock()
    }

    func get() -> (Data?, URLResponse?, Error?) {
        lock.lock()
        defer { lock.unlock() }
        return (data, response, error)
    }
}
