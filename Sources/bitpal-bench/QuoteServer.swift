import Foundation
import PortfolioCore
#if canImport(Glibc)
import Glibc
#endif

/// A stand-in for the price services on 127.0.0.1 while the `quotes` workload is timed: CoinGecko's
/// `/simple/price` for any coin, and Yahoo's chart for any symbol (a daily bar a weekday on a
/// deterministic walk, from `period1` to `period2`, else the last 5 days). One thread a connection,
/// so parallel requests are answered in parallel.
final class QuoteServer: @unchecked Sendable {
    private let listener: Int32
    let port: UInt16

    init?() {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 128) == 0 else { close(fd); return nil }
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        listener = fd
        port = UInt16(bigEndian: addr.sin_port)
        Thread.detachNewThread {
            while true {
                let client = accept(fd, nil, nil)
                if client < 0 { return }
                Thread.detachNewThread { QuoteServer.serve(client) }
            }
        }
    }

    var url: String { "http://127.0.0.1:\(port)" }

    private static func serve(_ client: Int32) {
        defer { close(client) }
        var request = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !request.suffix(4).elementsEqual([13, 10, 13, 10]) {
            let n = read(client, &buffer, buffer.count)
            if n <= 0 { return }
            request += buffer[0..<n]
        }
        let line = String(decoding: request.prefix { $0 != 13 }, as: UTF8.self).split(separator: " ")
        guard line.count >= 2, let url = URLComponents(string: String(line[1])) else { return }
        var query: [String: String] = [:]
        for item in url.queryItems ?? [] { query[item.name] = item.value ?? "" }
        let body = url.path.hasSuffix("/simple/price") ? prices(query["ids"] ?? "", query["vs_currencies"] ?? "usd") : chart(query)
        let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: \(body.utf8.count)\r\nconnection: close\r\n\r\n"
        let bytes = Array((head + body).utf8)
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBufferPointer { write(client, $0.baseAddress, $0.count) }
            if n <= 0 { return }
            sent += n
        }
    }

    private static func prices(_ ids: String, _ currencies: String) -> String {
        let each = ids.split(separator: ",").map { id in
            "\"\(id)\":{" + currencies.split(separator: ",").map { "\"\($0)\":1234.5,\"\($0)_24h_change\":1.5" }.joined(separator: ",")
                + ",\"last_updated_at\":1717243200}"
        }
        return "{" + each.joined(separator: ",") + "}"
    }

    private static func chart(_ query: [String: String]) -> String {
        let now = Int(Date().timeIntervalSince1970)
        let from = Int(query["period1"] ?? "") ?? now - 5 * 86_400
        let until = Int(query["period2"] ?? "") ?? now
        var stamps: [String] = [], closes: [String] = []
        var day = from - from % 86_400 + 8 * 3600
        var cents = 10_000 + (from / 86_400) % 5000
        while day < until {
            let weekday = (day / 86_400 + 4) % 7  // 0 = Sunday
            if weekday != 0 && weekday != 6 {
                cents += (day / 86_400) % 7 - 3
                stamps.append(String(day))
                closes.append("\(cents / 100).\(cents % 100 < 10 ? "0" : "")\(cents % 100)")
            }
            day += 86_400
        }
        let last = closes.last ?? "100.0"
        return #"{"chart":{"result":[{"meta":{"currency":"USD","exchangeTimezoneName":"America/New_York","regularMarketPrice":\#(last),"#
            + #""regularMarketTime":\#(stamps.last ?? String(now))},"timestamp":[\#(stamps.joined(separator: ","))],"#
            + #""indicators":{"quote":[{"close":[\#(closes.joined(separator: ","))]}]}}],"error":null}}"#
    }
}
