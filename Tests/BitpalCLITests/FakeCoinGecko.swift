import Foundation
import PortfolioCore
import XCTest
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
        /// Raw body bytes instead of `body` (e.g. gzip, with a `content-encoding` header).
        var bytes: [UInt8]? = nil
        /// Send the body one byte at a time, this many seconds apart (a server that dribbles).
        var trickle: TimeInterval? = nil
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

    /// The moment `/coins/{id}/market_chart` calls "now" (the sandboxes' default clock), in milliseconds.
    static let chartNow: Int64 = 1_717_243_200_000  // 2024-06-01T12:00:00Z

    /// `/coins/{id}/market_chart?vs_currency=X&days=N` as spec/coingecko.md §3.6 describes it: daily
    /// points at 00:00 UTC for N days and a last point at "now"; market caps and volumes with fewer
    /// points than prices (arrays of different lengths); 404 for an unknown coin, 400 for an unknown
    /// currency, 401 with the nested 10012 body beyond 365 days or for `max`.
    static func marketChart(_ request: Request, now: Int64) -> Reply {
        let parts = request.path.split(separator: "/")
        guard parts.count >= 3, let id = parts.dropLast().last.map(String.init), ["bitcoin", "ethereum"].contains(id) else {
            return Reply(status: 404, body: #"{"error":"coin not found"}"#)
        }
        let vs = request.query["vs_currency"] ?? ""
        guard ["usd", "eur", "gbp", "jpy"].contains(vs) else { return Reply(status: 400, body: #"{"error":"invalid vs_currency"}"#) }
        guard let days = Int(request.query["days"] ?? ""), days <= 365 else {
            return Reply(status: 401, body: #"{"error":{"status":{"timestamp":"2024-06-01T12:00:00.000+00:00","error_code":10012,"#
                + #""error_message":"Your request exceeds the allowed time range. Public API users are limited to querying historical data within the past 365 days."}}}"#)
        }
        let midnight = now - now % 86_400_000
        let base = id == "bitcoin" ? 60000 : 3000
        let factor = vs == "usd" ? "" : ".5"
        var prices: [String] = [], caps: [String] = [], volumes: [String] = []
        for d in stride(from: days, through: 0, by: -1) {
            let stamp = midnight - Int64(d) * 86_400_000
            prices.append("[\(stamp),\(base - d)\(factor)]")
            if d % 2 == 0 { caps.append("[\(stamp),\(base * 1000 - d).0]") }
            if d % 3 == 0 { volumes.append("[\(stamp),12345.678]") }
        }
        prices.append("[\(now),\(base + 1).25]")
        let body = #"{"prices":["# + prices.joined(separator: ",") + #"],"market_caps":["# + caps.joined(separator: ",")
            + #"],"total_volumes":["# + volumes.joined(separator: ",") + "]}"
        return Reply(status: 200, body: body, headers: ["content-type": "application/json"])
    }

    /// The ECB's working days of the first half of 2024 (no weekends, 1 January, Good Friday, Easter
    /// Monday or 1 May), per euro: USD 1.08DD, GBP 0.85DD, JPY 170.DD for day of month DD; no HKD.
    static let ecbDays: [(day: String, rates: String)] = {
        var out: [(String, String)] = []
        let holidays: Set<String> = ["2024-01-01", "2024-03-29", "2024-04-01", "2024-05-01"]
        for n in ISODate.days(fromCivil: 2024, 1, 1)...ISODate.days(fromCivil: 2024, 5, 31) {
            let text = ISODate.dayText(n), dd = String(text.suffix(2))
            // 1970-01-01 was a Thursday: days 2 and 3 after it (mod 7) are Saturdays and Sundays.
            guard (n % 7 + 7) % 7 != 2, (n % 7 + 7) % 7 != 3, !holidays.contains(text) else { continue }
            out.append((text, #"{"GBP":0.85\#(dd),"JPY":170.\#(dd),"USD":1.08\#(dd)}"#))
        }
        return out
    }()

    /// Frankfurter v1 as research §5 describes it: `/fx/v1/{a}..{b}` from the last working day at or
    /// before `a` (weekends and holidays absent), `/fx/v1/latest`; `404 {"message":"not found"}` when
    /// there is nothing; only `base=EUR`.
    static func frankfurter(_ request: Request) -> Reply {
        let json = ["content-type": "application/json", "cache-control": "public, max-age=86400", "etag": "\"abc\""]
        guard request.query["base"] == "EUR" else { return Reply(status: 422, body: #"{"message":"bitpal asks per euro"}"#) }
        let tail = request.path.dropFirst("/fx/v1/".count)
        if tail == "latest", let last = ecbDays.last {
            return Reply(status: 200, body: #"{"amount":1.0,"base":"EUR","date":"\#(last.day)","rates":\#(last.rates)}"#, headers: json)
        }
        let ends = tail.components(separatedBy: "..")
        guard ends.count == 2 else { return Reply(status: 404, body: #"{"message":"not found"}"#) }
        let start = ecbDays.last { $0.day <= ends[0] }?.day ?? ends[0]
        let days = ecbDays.filter { $0.day >= start && $0.day <= ends[1] }
        guard let first = days.first, let last = days.last else { return Reply(status: 404, body: #"{"message":"not found"}"#) }
        let rates = days.map { #""\#($0.day)":\#($0.rates)"# }.joined(separator: ",")
        return Reply(status: 200, body: #"{"amount":1.0,"base":"EUR","start_date":"\#(first.day)","end_date":"\#(last.day)","rates":{\#(rates)}}"#,
                     headers: json)
    }

    private let lock = NSLock()
    private var listener: Int32 = -1
    private(set) var port: UInt16 = 0
    private var queue: [Reply] = []
    private var requestsSeen: [Request] = []
    private var open: [Int32] = []
    private var stopped = false
    /// Used when no reply is queued: prices for the ids asked, or the coin list.
    var fallback: (Request) -> Reply = { request in
        if request.path.hasPrefix("/fx/") { return FakeCoinGecko.frankfurter(request) }
        if request.path.hasSuffix("/simple/price") {
            let ids = (request.query["ids"] ?? "").split(separator: ",").map(String.init)
            return Reply(status: 200, body: FakeCoinGecko.pricesBody(for: ids), headers: ["content-type": "application/json"])
        }
        if request.path.hasSuffix("/market_chart") {
            return FakeCoinGecko.marketChart(request, now: FakeCoinGecko.chartNow)
        }
        if request.path.hasSuffix("/coins/list") {
            return Reply(status: 200, body: #"[{"id":"bitcoin","symbol":"btc","name":"Bitcoin"},{"id":"zebra-token","symbol":"zbr","name":"Zebra Token"}]"#)
        }
        return Reply(status: 404, body: #"{"error":"coin not found"}"#)
    }

    var baseURL: String { "http://127.0.0.1:\(port)/api/v3" }
    /// Frankfurter's stand-in (`BITPAL_FX_URL`) on the same port.
    var fxURL: String { "http://127.0.0.1:\(port)/fx" }

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
        // Each thread closes only the descriptors it owns, so a number is never reused under it
        // (stop() only shuts sockets down, which wakes the thread blocked on them).
        Thread.detachNewThread { [weak self] in
            while true {
                let client = accept(fd, nil, nil)
                if client < 0 { close(fd); return }
                guard let self, self.register(client) else { close(client); close(fd); return }
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
        let wasStopped = stopped
        stopped = true
        let fds = open
        lock.unlock()
        if wasStopped { return }
        shutdown(listener, Int32(SHUT_RDWR))
        for fd in fds { shutdown(fd, Int32(SHUT_RDWR)) }
    }

    /// Records an accepted connection; false once stopped.
    private func register(_ client: Int32) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        if stopped { return false }
        open.append(client)
        return true
    }

    private func finish(_ client: Int32) {
        shutdown(client, Int32(SHUT_RDWR))
        lock.lock()
        open.removeAll { $0 == client }
        lock.unlock()
        close(client)
    }

    deinit { stop() }

    private func serve(_ client: Int32) {
        defer { finish(client) }
        var data = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !data.containsHeaderEnd {
            let n = read(client, &buffer, buffer.count)
            if n <= 0 { return }
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
        if reply.hang {  // until the client gives up or stop()
            while read(client, &buffer, buffer.count) > 0 {}
            return
        }
        let body = reply.bytes ?? Array(reply.body.utf8)
        var head = "HTTP/1.1 \(reply.status) \(reply.status == 200 ? "OK" : "Error")\r\n"
        head += "Content-Length: \(body.count)\r\nConnection: close\r\n"
        if reply.headers["content-type"] == nil { head += "Content-Type: application/json\r\n" }
        for (k, v) in reply.headers { head += "\(k): \(v)\r\n" }
        head += "\r\n"
        let payload = reply.truncateAfter.map { Array(body.prefix($0)) } ?? body
        if let gap = reply.trickle {
            var ok = FakeCoinGecko.send(Array(head.utf8), to: client)
            for byte in payload where ok {
                usleep(useconds_t(gap * 1_000_000))
                ok = FakeCoinGecko.send([byte], to: client)
            }
        } else {
            _ = FakeCoinGecko.send(Array(head.utf8) + payload, to: client)
        }
    }

    /// Writes all of `bytes`; false once the client has gone (no SIGPIPE: MSG_NOSIGNAL).
    private static func send(_ bytes: [UInt8], to fd: Int32) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if n <= 0 {
                if n < 0 && errno == EINTR { continue }
                return false
            }
            offset += n
        }
        return true
    }
}

private extension Array where Element == UInt8 {
    var containsHeaderEnd: Bool {
        guard count >= 4 else { return false }
        for i in 0...(count - 4) where self[i] == 13 && self[i + 1] == 10 && self[i + 2] == 13 && self[i + 3] == 10 { return true }
        return false
    }
}

/// Small gzip streams for tests, written by hand (Foundation has no zlib on Linux).
enum Gzip {
    /// `data` in one stored (uncompressed) deflate block, with a correct CRC-32.
    static func stored(_ data: [UInt8]) -> [UInt8] {
        precondition(data.count < 65_536)
        var out = header
        out.append(0x01)  // BFINAL=1, BTYPE=00 (stored); the rest of the byte is padding
        let len = UInt16(data.count)
        out += [UInt8(len & 0xff), UInt8(len >> 8), UInt8(~len & 0xff), UInt8(~len >> 8)]
        out += data
        return out + trailer(crc: crc32(data), size: data.count)
    }

    /// A "bomb": `1 + 258 * runs` zero bytes, compressed about 160 to 1 (a literal zero, then
    /// matches of length 258 at distance 1, fixed Huffman codes). The CRC is left 0: a client
    /// with a cap stops long before the trailer.
    static func zeros(runs: Int) -> [UInt8] {
        var bits = BitWriter()
        bits.write(1, count: 1)            // BFINAL
        bits.write(1, count: 2)            // BTYPE=01, fixed Huffman
        bits.writeCode(0x30, length: 8)    // literal 0
        for _ in 0..<runs {
            bits.writeCode(0xC5, length: 8)  // length code 285 = 258
            bits.writeCode(0, length: 5)     // distance code 0 = 1
        }
        bits.writeCode(0, length: 7)       // end of block (256)
        return header + bits.finish() + trailer(crc: 0, size: 1 + 258 * runs)
    }

    private static let header: [UInt8] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]

    private static func trailer(crc: UInt32, size: Int) -> [UInt8] {
        let n = UInt32(truncatingIfNeeded: size)
        return [0, 8, 16, 24].map { UInt8(truncatingIfNeeded: crc >> $0) } + [0, 8, 16, 24].map { UInt8(truncatingIfNeeded: n >> $0) }
    }

    static func crc32(_ data: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xffff_ffff
        for byte in data {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xedb8_8320 : crc >> 1 }
        }
        return ~crc
    }

    private struct BitWriter {
        var bytes: [UInt8] = []
        var current: UInt32 = 0
        var used = 0
        /// Plain values go in least significant bit first.
        mutating func write(_ value: UInt32, count: Int) {
            for i in 0..<count { push((value >> UInt32(i)) & 1) }
        }
        /// Huffman codes go in most significant bit first.
        mutating func writeCode(_ code: UInt32, length: Int) {
            for i in stride(from: length - 1, through: 0, by: -1) { push((code >> UInt32(i)) & 1) }
        }
        mutating func push(_ bit: UInt32) {
            current |= bit << UInt32(used)
            used += 1
            if used == 8 { bytes.append(UInt8(current)); current = 0; used = 0 }
        }
        mutating func finish() -> [UInt8] {
            if used > 0 { bytes.append(UInt8(current)) }
            return bytes
        }
    }
}

/// A test case with a fake price service started for each test and a sandbox pointed at it.
class FakeServiceTestCase: XCTestCase {
    var server: FakeCoinGecko!

    override func setUpWithError() throws {
        server = try FakeCoinGecko()
    }

    override func tearDown() {
        server.stop()
        server = nil
    }

    /// Runs `price refresh` and checks that it says `refreshed`, and that the price list holds each of
    /// `prices`, from `source`, with one shown at `time`.
    /// `price refresh` says `refreshed` and leaves `prices` from `source`, each timed when fetched (the
    /// sandbox's 12:00) with the service's own time (`serviceTime`, ISO 8601) beside it.
    func assertRefreshes(_ s: Sandbox, saying refreshed: String, prices: [String], source: String, serviceTime: String,
                         file: StaticString = #filePath, line: UInt = #line) {
        let r = s.ok(["price", "refresh"], file: file, line: line)
        XCTAssertTrue(r.out.contains(refreshed), r.out, file: file, line: line)
        let list = s.ok(["price", "list", "--json"], file: file, line: line).out
        for price in prices { XCTAssertTrue(list.contains(#""price": "\#(price)""#), list, file: file, line: line) }
        XCTAssertTrue(list.contains(#""source": "\#(source)""#), list, file: file, line: line)
        XCTAssertTrue(list.contains(#""sourceUpdatedAt": "\#(serviceTime)""#), list, file: file, line: line)
        XCTAssertTrue(s.ok(["price", "list"], file: file, line: line).out.contains("2024-06-01 12:00"), file: file, line: line)
    }

    /// A sandbox that may use the network, talking to this test's fake service.
    func online(_ extra: [String: String] = [:]) -> Sandbox {
        let s = Sandbox(offline: false)
        s.variables["BITPAL_API_URL"] = server.baseURL
        s.variables["BITPAL_FX_URL"] = server.fxURL
        for (k, v) in extra { s.variables[k] = v }
        return s
    }
}
