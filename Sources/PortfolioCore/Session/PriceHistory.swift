import Foundation

/// What `price import` or `fx import` read and what the price cache made of it.
public struct PriceImportSummary: Sendable {
    /// The format the file was read in.
    public var format: PriceFileFormat
    /// How many quotes the file states (one per asset, currency and time: a later line wins).
    public var count: Int
    /// The assets priced (coin ids, registered codes, or `fx:FROM/TO` pairs), sorted.
    public var assets: [String]
    /// What merging them into the cache did (or, in a dry run, would do).
    public var merge: PriceCache.Merge
    public var dryRun: Bool
    /// The first and last quote's time; `nil` for an empty file.
    public var from: Date?
    public var until: Date?
}

/// What a price file's lines are prices of.
public enum PriceImportKind: Sendable {
    /// Assets (`price import`): registered codes, coin ids or symbols, priced in a currency.
    case prices
    /// Exchange rates (`fx import`): a currency priced in another one.
    case rates
}

extension Prices {
    /// Reads a price file into the price cache as imported quotes, all or nothing.
    ///
    /// Each commodity resolves as an ASSET argument does (a registered code, else a coin id or
    /// symbol), or for `.rates` must be a supported currency. A price without a currency is in the
    /// asset's currency (a registered asset) or `portfolio`'s base; a rate without one is into that
    /// base. A bare day is the first instant of that day in `timeZone` (as a bare `--date`), so a quote
    /// belongs to its calendar day. Re-importing a file changes nothing: a quote of the same asset,
    /// currency and time replaces the cached one.
    ///
    /// The file is read a line at a time into small packed quotes, so millions of lines fit in a
    /// few hundred megabytes; the merge writes the cache a piece at a time.
    ///
    /// - Parameter format: the file's format, or `nil` for the one its content shows.
    /// - Throws: `ImportFailure` with the first lines that cannot be read or resolved (`line N: …`)
    ///   and how many there are, with nothing written; or the cache's `StoreError`.
    public func importPrices(_ bytes: [UInt8], format: PriceFileFormat?, kind: PriceImportKind, book: Book, portfolio: Portfolio,
                             dryRun: Bool, names: MessageNames = .plain) throws -> PriceImportSummary {
        var problems = ImportFailure.Collector()
        /// What a commodity and the currency a line names resolve to: a series of the cache, or why not.
        struct Named: Hashable {
            var commodity: String
            var currency: String?
        }
        var commodities: [String: Result<String, LineMessage>] = [:]
        var series: [Named: Result<Int32, LineMessage>] = [:]
        var dayStarts: [Int64: Date] = [:]
        var packed = PackedQuotes()
        func resolve(_ text: String) -> Result<String, LineMessage> {
            if let known = commodities[text] { return known }
            let result: Result<String, LineMessage>
            switch kind {
            case .prices:
                if let code = Asset.code(text), book.asset(id: code) != nil {
                    result = .success(code)
                } else if let currency = PriceImport.symbols[text] ?? CurrencyCode.parse(text)?.code {
                    result = .failure(LineMessage("\(currency) is a currency: import exchange rates with 'bitpal fx import'"))
                } else {
                    do {
                        result = .success(try resolver.resolveCoin(text).id)
                    } catch let error as PortfolioError {
                        result = .failure(LineMessage(error.description(names: names)))
                    } catch {
                        result = .failure(LineMessage("\(error)"))
                    }
                }
            case .rates:
                if let code = PriceImport.symbols[text] ?? CurrencyCode.parse(text)?.code {
                    result = .success(code)
                } else {
                    result = .failure(LineMessage("'\(TextEscaping.shortened(text))' is not a currency bitpal supports "
                        + "(\(CurrencyCode.supported.joined(separator: ", "))); import prices of assets with 'bitpal price import'"))
                }
            }
            commodities[text] = result
            return result
        }
        /// The series a line's commodity and currency name (decided once for each pair).
        func seriesOf(_ p: PriceLine) -> Result<Int32, LineMessage> {
            let named = Named(commodity: p.commodity, currency: p.currency)
            if let known = series[named] { return known }
            let result = Result { () throws(LineMessage) -> Int32 in
                let id = try resolve(p.commodity).get()
                switch kind {
                case .prices:
                    let currency: String
                    do throws(PortfolioError) {
                        currency = try book.currency(given: p.currency, assetId: id, portfolio: portfolio)
                    } catch {
                        throw LineMessage(error.description(names: names))
                    }
                    return packed.series(coin: id, currency: currency)
                case .rates:
                    let to = p.currency ?? portfolio.baseCurrency
                    if to == id { throw LineMessage("an exchange rate needs two different currencies (both are \(to))") }
                    return packed.series(coin: Self.rateQuoteID(from: id, to: to), currency: to)
                }
            }
            series[named] = result
            return result
        }
        /// The last line's commodity, currency and series, and its day's start: consecutive lines mostly repeat them.
        var lastNamed: (named: Named, series: Int32)?
        var lastDay: (key: Int64, start: Date)?
        let format = try PriceImport.scan(bytes, format: format, price: { p in
            do throws(LineMessage) {
                // In the order the lines were checked before: the commodity, the date, then the currency.
                let repeated = lastNamed.map { $0.named.commodity == p.commodity && $0.named.currency == p.currency } ?? false
                if !repeated { _ = try resolve(p.commodity).get() }
                let when: Date
                if case let .day(y, m, d) = p.date, let known = lastDay, known.key == (y * 100 + m) * 100 + d {
                    when = known.start
                } else if case let .day(y, m, d) = p.date, let known = dayStarts[(y * 100 + m) * 100 + d] {
                    when = known
                    lastDay = ((y * 100 + m) * 100 + d, known)
                } else {
                    do throws(DateRangeError) {
                        when = try p.date.start(in: timeZone, now: now)
                    } catch {
                        throw LineMessage(error.description)
                    }
                    if case let .day(y, m, d) = p.date { dayStarts[(y * 100 + m) * 100 + d] = when }
                }
                if when > now { throw LineMessage("a price dated \(names.date(when)) is in the future") }
                let s: Int32
                if repeated, let last = lastNamed {
                    s = last.series
                } else {
                    s = try seriesOf(p).get()
                    lastNamed = (Named(commodity: p.commodity, currency: p.currency), s)
                }
                if problems.count == 0 { packed.append(series: s, millis: ISODate.millis(when), price: p.price, source: .imported) }
            } catch {
                problems.add("line \(p.line): \(error.text)")
            }
        }, problem: { line, message in problems.add("line \(line): \(message)") })
        if let failure = problems.failure { throw failure }
        // One quote per asset, currency and time: a later line wins.
        packed.sort()
        var from: Int64?, until: Int64?
        var used = Set<Int32>()
        var kept = 0
        packed.entries.withUnsafeMutableBufferPointer { entries in
            for i in entries.indices {
                let e = entries[i]
                if i + 1 < entries.count, entries[i + 1].series == e.series, entries[i + 1].millis == e.millis { continue }
                entries[kept] = e
                kept += 1
                from = min(from ?? e.millis, e.millis)
                until = max(until ?? e.millis, e.millis)
                used.insert(e.series)
            }
        }
        packed.entries.removeLast(packed.count - kept)
        let count = packed.count
        let assets = Array(Set(used.map { packed.coins[Int($0)] })).sorted()
        let merge = try priceCache.merge(&packed, now: now, timeZone: timeZone, write: !dryRun)
        if !dryRun, let broken = merge.setAside { notices.send(.priceCacheMovedAside(broken)) }
        return PriceImportSummary(format: format, count: count, assets: assets, merge: merge, dryRun: dryRun,
                                  from: from.map(ISODate.date(millis:)), until: until.map(ISODate.date(millis:)))
    }

    /// A line's problem, worded.
    struct LineMessage: Error {
        var text: String
        init(_ text: String) { self.text = text }
    }

    /// Daily prices of one coin for the last `days` days (1…365), in each of `currencies`, added to
    /// the price cache; the quotes kept, oldest first (currency by currency).
    ///
    /// One request per currency to the price service's `/coins/{id}/market_chart`. Of each local
    /// calendar day (`timeZone`) only the last point is kept, so hourly or 5-minute points (asked for
    /// fewer than 91 days) thin to one a day, as the cache keeps days before its last week. Points keep
    /// the service's own times: beyond 90 days these are 00:00 UTC, the day's opening price, and the
    /// last point is the current price. Re-fetching replaces quotes of the same time.
    ///
    /// - Parameters:
    ///   - coin: a coin id (`bitcoin`), as stored.
    ///   - purpose: `.explicit` for a command run for the network's sake (30 s), `.automatic` within a report's 3 s.
    /// - Throws: `PriceError` (`.historyDays` outside 1…365, `.historyBeyondPlan` for the plan's limit,
    ///   `.unknownCoin` for a coin the service lacks, and every network failure), or the cache's `StoreError`.
    ///   Currencies fetched before a failure stay in the cache.
    public func fetchHistory(coin: String, currencies: [String], days: Int, purpose: NetworkPurpose) throws -> [Quote] {
        // A pro key's plan reaches further back than 365 days: only the free and demo plans are held to it.
        let pro = (try? service.networkSettings())?.config.isPro ?? false
        guard (1...(pro ? 3650 : PriceError.maxHistoryDays)).contains(days) else { throw PriceError.historyDays(days) }
        var kept: [Quote] = []
        for currency in Array(Set(currencies.map { $0.uppercased() })).sorted() {
            let fetched = try service.withPriceService(purpose) { client throws(PriceError) in
                try client.marketChart(coinId: coin, currency: currency, days: days, now: now)
            }
            for w in fetched.warnings { notices.send(.service(w)) }
            let daily = Self.lastOfEachDay(fetched.quotes, timeZone: timeZone)
            if !daily.isEmpty, let broken = try priceCache.merge(daily, now: now, timeZone: timeZone).setAside {
                notices.send(.priceCacheMovedAside(broken))
            }
            kept += daily
        }
        return kept
    }

    /// The last quote of each local calendar day (of each coin and currency), oldest first.
    public static func lastOfEachDay(_ quotes: [Quote], timeZone: TimeZone) -> [Quote] {
        var days = LocalDays(timeZone)
        var best: [PriceCache.DayKey: Quote] = [:]
        for q in quotes {
            let key = PriceCache.DayKey(coinId: q.coinId, currency: q.currency, day: days.dayNumber(q.time))
            if let b = best[key], b.time > q.time { continue }
            best[key] = q
        }
        return best.values.sorted { ($0.time, $0.coinId, $0.currency) < ($1.time, $1.coinId, $1.currency) }
    }
}
