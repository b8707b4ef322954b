import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A small CoinGecko stand-in on 127.0.0.1 for the tests: real-shaped bodies, switchable failures,
/// and a record of every request (path, query and headers).
final class FakeCoinGecko: @unchecked Sendable {
    struct Reply {
        var status: Int
        var body: String
        var headers: [String: String] = [:]
        /// Send the headers and this many body bytes, then close (a truncated reply).
        var truncateAfter: Int?
        /// Never answer.
        var hang = false
    }

    struct Request {
        var path: String
        var query: [String: String]
        var headers: [String: String]
    }

    /// The compact body from spec/coingecko.md §3.2 (raw float style), for the coins asked.
    static let simplePrices: [String: String] = [
        "bitcoin": #""bitcoin":{"usd":67187.3358936566,"usd_market_cap":1317802988326.25,"usd_24h_change":3.63727894677354,"last_updated_at":1711356300}"#,
        "ethereum": #""ethereum":{"usd":3454.6423857037,"usd_24h_change":2.18842213063862,"last_updated_at":1711356291}"#,
        "tether": #""tether":{"usd":1.000303,"usd_24h_change":0.02514627112399,"last_updated_at":1711356289}"#,
        "shiba-inu": #""shiba-inu":{"usd":8.45e-06,"usd_24h_change":5.71924567290417,"last_updated_at":1711356296}"#,
        "dogecoin": #""dogecoin":{"usd":null,"usd_24h_change":null,"last_updated_at":1711356296}"#,
        "cardano": #""cardano":{}"#,
    ]

    static func pricesBody(for ids: [String]) -> String {
        "{" + ids.compactMap { simplePrices[$0] }.joined(separator: ",") + "}"
    }

    private let lock = NSLock()
    private var listener: Int32 = -1
    private(set) var port: UInt16 = 0
    private var queue: [Reply] = []
    private var requestsSeen: [Request] = []
    private var open: [Int32] = []
    /// Used when no reply is queued: prices for the ids asked, or the coin list.
    var fallback: (Request) -> Reply = { request in
        if request.path.hasSuffix("/simple/price") {
            let ids = (request.query["ids"] ?? "").split(separator: ",").map(String.init)
            return Reply(status: 200, body: FakeCoinGecko.pricesBody(for: ids), headers: ["content-type": "application/json"])
        }
        if request.path.hasSuffix("/coins/list") {
            return Reply(status: 200, body: #"[{"id":"bitcoin","symbol":"btc","name":"Bitcoin"},{"id":"zebra-token","symbol":"zbr","name":"Zebra Token"}]"#)
        }
        return Reply(status: 404, body: #"{"error":"coin not found"}"#)
    }

    var baseURL: String { "http://127.0.0.1:\(port)/api/v3" }

    var requests: [Request] {
        lock.lock()
        defer { lock.unlock() }
        return requestsSeen
    }

    init() throws {
        listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw POSIXError(.EIO) }
        var yes: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = 0
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, 64) == 0 else { throw POSIXError(.EADDRINUSE) }
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &len) }
        }
        port = UInt16(bigEndian: addr.sin_port)
        let fd = listener
        Thread.detachNewThread { [weak self] in
            while true {
                let client = accept(fd, nil, nil)
                if client < 0 { return }
                guard let self else { close(client); return }
                Thread.detachNewThread { self.serve(client) }
            }
        }
    }

    /// Queues replies served in order before the fallback applies.
    func enqueue(_ replies: Reply...) {
        lock.lock()
        queue.append(contentsOf: replies)
        lock.unlock()
    }

    func stop() {
        lock.lock()
        let fds = open
        open = []
        lock.unlock()
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        for fd in fds { shutdown(fd, Int32(SHUT_RDWR)); close(fd) }
    }

    deinit { stop() }

    private func serve(_ client: Int32) {
        lock.lock()
        open.append(client)
        lock.unlock()
        var data = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !data.containsHeaderEnd {
            let n = read(client, &buffer, buffer.count)
            if n <= 0 { close(client); return }
            data.append(contentsOf: buffer[0..<n])
        }
        let text = String(decoding: data, as: UTF8.self)
        let lines = text.components(separatedBy: "\r\n")
        let target = lines.first?.split(separator: " ").dropFirst().first.map(String.init) ?? "/"
        let comps = URLComponents(string: "http://x" + target)
        var query: [String: String] = [:]
        for item in comps?.queryItems ?? [] { query[item.name] = item.value ?? "" }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let request = Request(path: comps?.path ?? target, query: query, headers: headers)
        lock.lock()
        requestsSeen.append(request)
        let reply = queue.isEmpty ? fallback(request) : queue.removeFirst()
        lock.unlock()
        if reply.hang { return }  // left open until stop()
        let body = Array(reply.body.utf8)
        var head = "HTTP/1.1 \(reply.status) \(reply.status == 200 ? "OK" : "Error")\r\n"
        head += "Content-Length: \(body.count)\r\nConnection: close\r\n"
        if reply.headers["content-type"] == nil { head += "Content-Type: application/json\r\n" }
        for (k, v) in reply.headers { head += "\(k): \(v)\r\n" }
        head += "\r\n"
        var out = Array(head.utf8) + (reply.truncateAfter.map { Array(body.prefix($0)) } ?? body)
        _ = out.withUnsafeMutableBytes { write(client, $0.baseAddress, $0.count) }
        shutdown(client, Int32(SHUT_RDWR))
        close(client)
        lock.lock()
        open.removeAll { $0 == client }
        lock.unlock()
        out.removeAll()
    }
}

private extension Array where Element == UInt8 {
    var containsHeaderEnd: Bool {
        guard count >= 4 else { return false }
        for i in 0...(count - 4) where self[i] == 13 && self[i + 1] == 10 && self[i + 2] == 13 && self[i + 3] == 10 { return true }
        return false
    }
}
