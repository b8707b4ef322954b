import Foundation

public struct HTTPRequest: Sendable {
    public var url: URL
    public var headers: [String: String]
    /// Seconds the whole request may take, connecting included.
    public var timeout: TimeInterval
    /// The most body bytes (after decompression) to accept; more aborts the transfer.
    public var maxBodyBytes: Int

    public init(url: URL, headers: [String: String], timeout: TimeInterval, maxBodyBytes: Int) {
        self.url = url
        self.headers = headers
        self.timeout = timeout
        self.maxBodyBytes = maxBodyBytes
    }
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

/// Why a request got no (complete) HTTP response.
public enum TransportError: Error, Equatable, Sendable {
    case timedOut
    case cannotConnect(String)
    case failed(String)
    /// The body grew past `maxBodyBytes` (counted after decompression); the transfer was aborted.
    case tooLarge(limit: Int)
    /// No HTTP library could be loaded (libcurl missing).
    case unavailable(String)
}

/// Sends one GET request and waits for its response. Redirects are never followed:
/// a 3xx comes back as the response.
public protocol HTTPTransport: Sendable {
    func send(_ request: HTTPRequest) throws(TransportError) -> HTTPResponse
}
