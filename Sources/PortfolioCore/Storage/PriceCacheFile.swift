import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The price cache read line by line in the layout its writer gives it, without the whole file in
/// memory: one quote per line (`    {"coinId": …},`), and with `"order": "series"` in the header,
/// sorted by coin, currency and time, so that one coin's quotes of a period are found by binary
/// search and read alone.
///
/// Every reader here gives up (`nil`) on anything it does not expect — another layout, an escape, a
/// quote it cannot read exactly, a failed read — and its caller then reads the whole file with the
/// readers that decide (`PriceCache.loadHistory()`, `load()`), so a file reads to the same quotes
/// either way and every broken one fails with their error.
final class PriceCacheFile {
    let fd: Int32
    let size: Int
    /// The start of the file through the bracket that opens `quotes` (the header and `latest`).
    let prefix: ByteBuffer
    /// The header says the quotes are sorted by series (and every name is plain ASCII).
    let ordered: Bool
    /// Where the first quote's line starts (`quotesEnd` when there are none).
    let quotesStart: Int
    /// Where the line of the bracket that closes `quotes` starts.
    let quotesEnd: Int
    /// The line number (from 1) of the first quote's line.
    let firstLine: Int

    /// What opening the file found.
    enum Opening {
        case missing
        case file(PriceCacheFile)
        /// Not a file these readers take: the whole-file readers decide.
        case other
    }

    private init(fd: Int32, size: Int, prefix: ByteBuffer, ordered: Bool, quotesStart: Int, quotesEnd: Int, firstLine: Int) {
        self.fd = fd
        self.size = size
        self.prefix = prefix
        self.ordered = ordered
        self.quotesStart = quotesStart
        self.quotesEnd = quotesEnd
        self.firstLine = firstLine
    }

    deinit { close(fd) }

    static func open(_ path: String) -> Opening {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        if fd < 0 { return errno == ENOENT ? .missing : .other }
        var st = stat()
        guard fstat(fd, &st) == 0, FileSystem.nonRegularKind(st.st_mode) == nil, st.st_size <= PriceCache.readLimit else {
            close(fd)
            return .other
        }
        let size = Int(st.st_size)
        var want = min(size, 1 << 16)
        while true {
            let prefix = ByteBuffer(capacity: want)
            guard readFully(fd, into: prefix.base, count: want, at: 0) else { break }
            prefix.grow(by: want)
            switch header(prefix, size: size) {
            case let .found(ordered, bracket, tail):
                // The quotes: from the line after the opening bracket to the line of the closing one.
                guard let (start, end, line) = bounds(fd: fd, size: size, prefix: prefix, bracket: bracket, tail: tail) else { break }
                return .file(PriceCacheFile(fd: fd, size: size, prefix: prefix, ordered: ordered, quotesStart: start, quotesEnd: end,
                                            firstLine: line))
            case .needMore where want < size:
                want = min(size, want * 4)
                continue
            default: break
            }
            break
        }
        close(fd)
        return .other
    }

    private enum Header {
        /// `bracket`: the offset just after `[`; `tail`: bytes after it that the prefix holds.
        case found(ordered: Bool, bracket: Int, tail: Int)
        case needMore
        case unusual
    }

    /// Reads the header from the prefix up to the bracket that opens `quotes`.
    private static func header(_ prefix: ByteBuffer, size: Int) -> Header {
        var r = JSONReader(buffer: prefix)
        do {
            var version: Int?
            var order: String?
            try r.beginObject()
            while let key = try r.nextKeyBytes() {
                if PriceHistoryReader.equal(key, "version") {
                    version = try r.readInt()
                } else if PriceHistoryReader.equal(key, "order") {
                    order = String(decoding: try r.readRawStringBytes(), as: UTF8.self)
                } else if PriceHistoryReader.equal(key, "quotes") {
                    try r.beginArray()
                    guard let v = version, v <= PriceCache.formatVersion else { return .unusual }
                    // A few bytes past the bracket tell where the first line starts.
                    if prefix.count - r.position < 2 && prefix.count < size { return .needMore }
                    return .found(ordered: order == PriceCache.seriesOrder, bracket: r.position, tail: prefix.count - r.position)
                } else {
                    try r.skipValue()
                }
            }
            return .unusual
        } catch {
            return prefix.count < size ? .needMore : .unusual
        }
    }

    /// Where the quote lines start and end, and the first one's line number; `nil` for another layout.
    private static func bounds(fd: Int32, size: Int, prefix: ByteBuffer, bracket: Int, tail: Int) -> (Int, Int, Int)? {
        // The file ends with the closing bracket on a line of its own, then `}`.
        let back = min(size, 256)
        var end = [UInt8](repeating: 0, count: back)
        guard end.withUnsafeMutableBufferPointer({ p in p.baseAddress.map { readFully(fd, into: $0, count: back, at: size - back) } ?? false })
        else { return nil }
        func space(_ b: UInt8) -> Bool { b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 }
        var i = back - 1
        while i >= 0 && space(end[i]) { i -= 1 }
        guard i >= 0, end[i] == UInt8(ascii: "}") else { return nil }
        i -= 1
        while i >= 0 && space(end[i]) { i -= 1 }
        guard i >= 0, end[i] == UInt8(ascii: "]") else { return nil }
        let closing = size - back + i
        let lines = JSONReader.lineBreaks(in: UnsafeBufferPointer(start: prefix.base, count: bracket)) + 1
        // Empty: `[]`.
        var j = bracket
        while j < bracket + tail && prefix.base[j] == 0x20 { j += 1 }
        if j == closing { return (closing, closing, lines) }
        guard j < bracket + tail, prefix.base[j] == 0x0A else { return nil }
        let start = j + 1
        // The closing bracket's line: spaces before it, after a line break.
        i -= 1
        while i >= 0 && end[i] == 0x20 { i -= 1 }
        guard i >= 0, end[i] == 0x0A else { return nil }
        let stop = size - back + i + 1
        guard stop > start else { return nil }
        return (start, stop, lines + 1)
    }

    /// `pread` of exactly `count` bytes at `offset`.
    static func readFully(_ fd: Int32, into base: UnsafeMutablePointer<UInt8>, count: Int, at offset: Int) -> Bool {
        var done = 0
        while done < count {
            let n = pread(fd, base + done, count - done, off_t(offset + done))
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            done += n
        }
        return true
    }

    // MARK: Lines

    /// A quote line's parts as the writer lays a plain quote out, pointing into the bytes read.
    struct Line {
        var coin: UnsafeBufferPointer<UInt8>
        var currency: UnsafeBufferPointer<UInt8>
        var price: Fixed18
        var millis: Int64
        var source: QuoteSource
        var comma: Bool
    }

    /// The currency of a quote that names none.
    private static var usd: UnsafeBufferPointer<UInt8> {
        let text: StaticString = "USD"
        return UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount)
    }

    /// `    {"coinId": "…", "price": "…", "time": "…", "source": "…"[, "currency": "…"]}` and a comma
    /// or not; `nil` for anything else (a 24-hour change, an escape, a price of more than 18 decimals …).
    static func plainLine(_ line: UnsafeBufferPointer<UInt8>) -> Line? {
        guard let base = line.baseAddress else { return nil }
        let n = line.count
        var i = 0
        while i < n && base[i] == 0x20 { i += 1 }
        func literal(_ s: StaticString) -> Bool {
            let m = s.utf8CodeUnitCount
            guard i + m <= n, memcmp(base + i, s.utf8Start, m) == 0 else { return false }
            i += m
            return true
        }
        /// The bytes up to the closing quote: printable ASCII without a quote or backslash.
        func string() -> UnsafeBufferPointer<UInt8>? {
            let start = i
            while i < n {
                let b = base[i]
                if b == 0x22 {
                    i += 1
                    return UnsafeBufferPointer(start: base + start, count: i - 1 - start)
                }
                if b < 0x20 || b >= 0x7F || b == 0x5C { return nil }
                i += 1
            }
            return nil
        }
        guard literal(#"{"coinId": ""#), let coin = string(),
              literal(#", "price": ""#), let priceText = string(), let price = Fixed18.parse(utf8: priceText), price.units > 0,
              literal(#", "time": ""#), let timeText = string(), let millis = ISODate.parseTimestampMillis(utf8: timeText),
              millis >= ISODate.minMillis, millis <= ISODate.maxMillis,
              literal(#", "source": ""#), let sourceText = string() else { return nil }
        let source: QuoteSource
        if PriceHistoryReader.equal(sourceText, "coingecko") {
            source = .coingecko
        } else if PriceHistoryReader.equal(sourceText, "imported") {
            source = .imported
        } else if PriceHistoryReader.equal(sourceText, "manual") {
            source = .manual
        } else if PriceHistoryReader.equal(sourceText, "ecb") {
            source = .ecb
        } else if PriceHistoryReader.equal(sourceText, "yahoo") {
            source = .yahoo
        } else if PriceHistoryReader.equal(sourceText, "twelvedata") {
            source = .twelvedata
        } else {
            return nil
        }
        var currency = usd
        if literal(#", "currency": ""#) {
            guard let c = string() else { return nil }
            currency = c
        }
        guard literal("}") else { return nil }
        let comma = literal(",")
        guard i == n else { return nil }
        return Line(coin: coin, currency: currency, price: price, millis: millis, source: source, comma: comma)
    }

    /// A quote line in any other layout, read as the fast reader reads a quote (and its id checked
    /// as the canonical reader checks it); `nil` when that reader would leave it to the canonical one.
    static func otherLine(_ line: UnsafeBufferPointer<UInt8>) -> (quote: Quote, comma: Bool)? {
        var r = JSONReader(buffer: ByteBuffer(copying: Array(line)))
        var names = PriceHistoryReader.Names()
        guard let q = try? PriceHistoryReader.quote(&r, names: &names), PriceCache.isRateIDValid(q.coinId) else { return nil }
        r.skipSpace()
        let comma = r.consume(",")
        guard (try? r.finish()) != nil else { return nil }
        return (q, comma)
    }

    /// Reads lines from an offset on, in pieces.
    final class Cursor {
        let fd: Int32
        let end: Int
        private var buffer: UnsafeMutablePointer<UInt8>
        private var capacity: Int
        /// The file offset of `buffer[0]`, how many bytes it holds, and where the next line starts in it.
        private var origin: Int
        private var filled = 0
        private var next = 0
        /// A read failed, or the bytes before `end` do not end with a line break.
        private(set) var failed = false

        init(fd: Int32, from offset: Int, to end: Int, capacity: Int = 1 << 20) {
            self.fd = fd
            self.end = end
            self.capacity = capacity
            buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
            origin = offset
        }

        deinit { buffer.deallocate() }

        /// Moves to `offset` (a line start).
        func seek(to offset: Int) {
            if offset >= origin && offset <= origin + filled {
                next = offset - origin
            } else {
                origin = offset
                filled = 0
                next = 0
            }
        }

        /// The next line (without its line break) and where it starts; `nil` at `end` or on a failure.
        /// The bytes are valid until the next call.
        func line() -> (offset: Int, bytes: UnsafeBufferPointer<UInt8>)? {
            while true {
                guard origin + next < end else { return nil }
                let available = filled - next
                if available > 0, let found = memchr(buffer + next, 0x0A, available) {
                    let stop = buffer.distance(to: found.assumingMemoryBound(to: UInt8.self))
                    let start = next
                    next = stop + 1
                    return (origin + start, UnsafeBufferPointer(start: buffer + start, count: stop - start))
                }
                // Keep the part of a line read so far at the front, then read on.
                if next > 0 {
                    if available > 0 { memmove(buffer, buffer + next, available) }
                    origin += next
                    filled = available
                    next = 0
                }
                if filled == capacity {
                    let bigger = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity * 2)
                    bigger.update(from: buffer, count: filled)
                    buffer.deallocate()
                    buffer = bigger
                    capacity *= 2
                }
                let want = min(capacity - filled, end - (origin + filled))
                guard want > 0 else {
                    failed = true  // bytes before `end` without a line break
                    return nil
                }
                let n = pread(fd, buffer + filled, want, off_t(origin + filled))
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else {
                    failed = true
                    return nil
                }
                filled += n
            }
        }
    }

    // MARK: The whole file

    /// What reading every quote found.
    struct Reading {
        var count = 0
        /// The line of the first quote out of the order the header declares, if any.
        var disorder: Int?
    }

    /// Reads every quote in file order: `series` is told each time the coin or currency changes
    /// (with ids checked as the canonical reader checks them), `add` gets each quote (a plain line,
    /// or a quote in another layout). Checks the order the header declares. `nil` when the
    /// whole-file readers must decide.
    func readAll(series: (_ coin: String, _ currency: String) -> Void, add: (_ line: Line?, _ other: Quote?) -> Void) -> Reading? {
        var reading = Reading()
        let cursor = Cursor(fd: fd, from: quotesStart, to: quotesEnd)
        var lastCoin: [UInt8] = [], lastCurrency: [UInt8] = []
        var lastMillis = Int64.min
        var lastComma = true
        var lineNumber = firstLine - 1
        while let (_, bytes) = cursor.line() {
            lineNumber += 1
            guard lastComma else { return nil }  // only the last quote goes without a comma
            let plain = Self.plainLine(bytes)
            var other: (quote: Quote, comma: Bool)?
            if plain == nil {
                guard let read = Self.otherLine(bytes) else { return nil }
                other = read
            }
            let millis = plain?.millis ?? other.map { ISODate.millis($0.quote.time) } ?? 0
            lastComma = plain?.comma ?? other?.comma ?? false
            let same: Bool
            if let plain {
                same = plain.coin.elementsEqual(lastCoin) && plain.currency.elementsEqual(lastCurrency)
            } else {
                same = other.map { $0.quote.coinId.utf8.elementsEqual(lastCoin) && $0.quote.currency.utf8.elementsEqual(lastCurrency) } ?? false
            }
            if !same {
                let coin = plain.map { Array($0.coin) } ?? Array(other?.quote.coinId.utf8 ?? "".utf8)
                let currency = plain.map { Array($0.currency) } ?? Array(other?.quote.currency.utf8 ?? "".utf8)
                if reading.count > 0 && ordered && reading.disorder == nil {
                    let byCoin = Self.compare(coin, lastCoin)
                    if byCoin < 0 || (byCoin == 0 && Self.compare(currency, lastCurrency) < 0) { reading.disorder = lineNumber }
                }
                lastCoin = coin
                lastCurrency = currency
                let names = (coin: String(decoding: coin, as: UTF8.self), currency: String(decoding: currency, as: UTF8.self))
                guard CurrencyCode.isSupported(names.currency), PriceCache.isRateIDValid(names.coin) else { return nil }
                series(names.coin, names.currency)
            } else if ordered && millis < lastMillis && reading.disorder == nil {
                reading.disorder = lineNumber
            }
            lastMillis = millis
            add(plain, other?.quote)
            reading.count += 1
        }
        guard !cursor.failed, reading.count == 0 || !lastComma else { return nil }
        return reading
    }

    static func compare(_ a: [UInt8], _ b: [UInt8]) -> Int {
        a.withUnsafeBufferPointer { p in b.withUnsafeBufferPointer { q in PackedQuotes.compare(p, q) } }
    }

    // MARK: One coin's quotes

    /// Where a line sorts: coin, currency, time.
    struct Key {
        var coin: [UInt8]
        var currency: [UInt8]
        var millis: Int64

        static func < (a: Key, b: Key) -> Bool {
            let c = PriceCacheFile.compare(a.coin, b.coin)
            if c != 0 { return c < 0 }
            let d = PriceCacheFile.compare(a.currency, b.currency)
            if d != 0 { return d < 0 }
            return a.millis < b.millis
        }
    }

    /// The key of the line starting at `offset`, and where the next line starts.
    private func key(at offset: Int, probe: Cursor) -> (key: Key, next: Int)? {
        probe.seek(to: offset)
        guard let (start, bytes) = probe.line(), start == offset else { return nil }
        let next = start + bytes.count + 1
        if let line = Self.plainLine(bytes) { return (Key(coin: Array(line.coin), currency: Array(line.currency), millis: line.millis), next) }
        guard let (q, _) = Self.otherLine(bytes) else { return nil }
        return (Key(coin: Array(q.coinId.utf8), currency: Array(q.currency.utf8), millis: ISODate.millis(q.time)), next)
    }

    /// The start of the first line starting at or after `offset`.
    private func lineStart(atOrAfter offset: Int) -> Int? {
        if offset <= quotesStart { return quotesStart }
        var window = [UInt8](repeating: 0, count: 512)
        var at = offset - 1
        while at < quotesEnd {
            let n = min(window.count, quotesEnd - at)
            let found: Int? = window.withUnsafeMutableBufferPointer { p in
                guard let base = p.baseAddress, Self.readFully(fd, into: base, count: n, at: at),
                      let hit = memchr(base, 0x0A, n) else { return nil }
                return base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
            }
            if let found { return at + found + 1 }
            at += n
        }
        return quotesEnd
    }

    /// The start of the line before the one starting at `offset` (`offset` > `quotesStart`).
    private func lineStart(before offset: Int) -> Int? {
        var from = offset - 1  // the line break that ends that line
        var window = [UInt8](repeating: 0, count: 512)
        while from > quotesStart {
            let at = max(quotesStart, from - window.count)
            let n = from - at
            let found: Int? = window.withUnsafeMutableBufferPointer { p in
                guard let base = p.baseAddress, Self.readFully(fd, into: base, count: n, at: at) else { return nil }
                var i = n - 1
                while i >= 0 && base[i] != 0x0A { i -= 1 }
                return i >= 0 ? i : nil
            }
            if let found { return at + found + 1 }
            from = at
        }
        return quotesStart
    }

    /// The start of the first line in `lo..<hi` (both line starts) whose key is not below `target`; `hi` if none.
    private func lowerBound(_ target: Key, from lo: Int, to hi: Int, probe: Cursor) -> Int? {
        var lo = lo, hi = hi
        while lo < hi {
            let mid = lo + (hi - lo) / 2
            guard let s = lineStart(atOrAfter: mid) else { return nil }
            if s >= hi {
                // No line starts in mid..<hi: the line at `lo` decides.
                guard let (k, next) = key(at: lo, probe: probe) else { return nil }
                if k < target { lo = next } else { hi = lo }
                continue
            }
            guard let (k, next) = key(at: s, probe: probe) else { return nil }
            if k < target { lo = next } else { hi = s }
        }
        return lo
    }

    /// The quotes `scope` asks for of a sorted file (see `PriceCache.loadHistory(_:)`), with the
    /// newest of every other series from `latest`; `nil` when the whole-file readers must decide.
    func selected(_ scope: PriceHistoryScope, latest: [Quote]) -> [Quote]? {
        guard ordered, let assets = scope.assets else { return nil }
        var out: [Quote] = []
        let probe = Cursor(fd: fd, from: quotesStart, to: quotesEnd, capacity: 1 << 12)
        let reader = Cursor(fd: fd, from: quotesStart, to: quotesEnd, capacity: 1 << 16)
        let since = scope.since.map(ISODate.millis)
        /// Reads one coin's quotes from its first line on; returns where the next coin starts.
        func readCoin(_ coin: [UInt8], from start: Int) -> Int? {
            var pos = start
            while pos < quotesEnd {
                guard let (first, _) = key(at: pos, probe: probe) else { return nil }
                guard first.coin == coin else { return pos }
                var from = pos
                if let since {
                    // The first quote from `since` on, and before it every quote of the newest time before it.
                    guard let at = lowerBound(Key(coin: coin, currency: first.currency, millis: since), from: pos, to: quotesEnd, probe: probe)
                    else { return nil }
                    from = at
                    if at > pos {
                        guard let previous = lineStart(before: at), let (before, _) = key(at: previous, probe: probe),
                              let group = lowerBound(Key(coin: coin, currency: first.currency, millis: before.millis), from: pos, to: at, probe: probe)
                        else { return nil }
                        from = group
                    }
                }
                // This currency's quotes from there, in order.
                reader.seek(to: from)
                let coinText = String(decoding: coin, as: UTF8.self), currencyText = String(decoding: first.currency, as: UTF8.self)
                guard CurrencyCode.isSupported(currencyText), PriceCache.isRateIDValid(coinText) else { return nil }
                var lastMillis = Int64.min
                pos = quotesEnd
                while let (offset, bytes) = reader.line() {
                    let quote: Quote
                    if let line = Self.plainLine(bytes) {
                        guard line.coin.elementsEqual(coin), line.currency.elementsEqual(first.currency) else {
                            pos = offset
                            break
                        }
                        quote = Quote(coinId: coinText, price: line.price.decimal, time: ISODate.date(millis: line.millis), source: line.source,
                                      currency: currencyText)
                    } else {
                        guard let (q, _) = Self.otherLine(bytes) else { return nil }
                        guard q.coinId.utf8.elementsEqual(coin), q.currency.utf8.elementsEqual(first.currency) else {
                            pos = offset
                            break
                        }
                        quote = q
                    }
                    let millis = ISODate.millis(quote.time)
                    guard millis >= lastMillis else { return nil }  // out of order: let the whole file decide
                    lastMillis = millis
                    out.append(quote)
                }
                if reader.failed { return nil }
            }
            return pos
        }
        for coin in assets.map({ Array($0.utf8) }).sorted(by: { Self.compare($0, $1) < 0 }) {
            guard let at = lowerBound(Key(coin: coin, currency: [], millis: .min), from: quotesStart, to: quotesEnd, probe: probe),
                  readCoin(coin, from: at) != nil else { return nil }
        }
        if scope.rates {
            // Every rate's series: the coins from `fx:` on that start with it.
            let prefix = Array("fx:".utf8)
            guard var pos = lowerBound(Key(coin: prefix, currency: [], millis: .min), from: quotesStart, to: quotesEnd, probe: probe) else { return nil }
            while pos < quotesEnd {
                guard let (k, _) = key(at: pos, probe: probe) else { return nil }
                guard k.coin.starts(with: prefix) else { break }
                if assets.contains(String(decoding: k.coin, as: UTF8.self)) {
                    // Read above already: skip past it.
                    guard let next = lowerBound(Key(coin: k.coin + [0], currency: [], millis: .min), from: pos, to: quotesEnd, probe: probe)
                    else { return nil }
                    pos = next
                    continue
                }
                guard let next = readCoin(k.coin, from: pos) else { return nil }
                pos = next
            }
        }
        if probe.failed { return nil }
        for q in latest where !scope.includes(q.coinId) { out.append(q) }
        // In the file's order: by coin and currency (as bytes), each series as read.
        let keyed = out.enumerated().map { (coin: Array($1.coinId.utf8), currency: Array($1.currency.utf8), at: $0) }
        return keyed.sorted { a, b in
            let c = Self.compare(a.coin, b.coin)
            if c != 0 { return c < 0 }
            let d = Self.compare(a.currency, b.currency)
            return d != 0 ? d < 0 : a.at < b.at
        }.map { out[$0.at] }
    }
}
