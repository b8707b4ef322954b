import Foundation

/// What `price import` or `fx import` read and what the price cache made of it.
public struct PriceImportSummary: Sendable {
    /// Every quote the file states (one per asset, currency and time: a later line wins), oldest first.
    public var quotes: [Quote]
    /// The assets priced (coin ids, registered codes, or `fx:FROM/TO` pairs), sorted.
    public var assets: [String]
    /// What merging them into the cache did (or, in a dry run, would do).
    public var merge: PriceCache.Merge
    public var dryRun: Bool

    /// The first and last quote's time; `nil` for an empty file.
    public var from: Date? { quotes.first?.time }
    public var until: Date? { quotes.last?.time }
}

/// What a price file's lines are prices of.
public enum PriceImportKind: Sendable {
    /// Assets (`price import`): registered codes, coin ids or symbols, priced in a currency.
    case prices
    /// Exchange rates (`fx import`): a currency priced in another one.
    case rates
}

extension Session {
    /// Reads a price file into the price cache as imported quotes, all or nothing.
    ///
    /// Each commodity resolves as an ASSET argument does (a registered code, else a coin id or
    /// symbol), or for `.rates` must be a supported currency. A price without a currency is in the
    /// asset's currency (a registered asset) or `portfolio`'s base; a rate without one is into that
    /// base. A bare day is the first instant of that day in `timeZone` (as a bare `--date`), so a quote
    /// belongs to its calendar day. Re-importing a file changes nothing: a quote of the same asset,
    /// currency and time replaces the cached one.
    ///
    /// - Throws: `ImportFailure` listing every line that cannot be read or resolved (`line N: …`),
    ///   with nothing written; or the cache's `StoreError`.
    public func importPrices(_ file: PriceFile, kind: PriceImportKind, book: Book, portfolio: Portfolio, dryRun: Bool,
                             names: MessageNames = .plain) throws -> PriceImportSummary {
        var problems = file.problems
        var resolved: [String: Result<String, LineMessage>] = [:]
        func resolve(_ text: String) -> Result<String, LineMessage> {
            if let known = resolved[text] { return known }
            let result: Result<String, LineMessage>
            switch kind {
            case .prices:
                if let code = Asset.code(text), book.asset(id: code) != nil {
                    result = .success(code)
                } else if let currency = PriceImport.symbols[text] ?? CurrencyCode.parse(text) {
                    result = .failure(LineMessage("\(currency) is a currency: import exchange rates with 'bitpal fx import'"))
                } else {
                    do {
                        result = .success(try resolveCoin(text).id)
                    } catch let error as PortfolioError {
                        result = .failure(LineMessage(error.description(names: names)))
                    } catch {
                        result = .failure(LineMessage("\(error)"))
                    }
                }
            case .rates:
                if let code = PriceImport.symbols[text] ?? CurrencyCode.parse(text) {
                    result = .success(code)
                } else {
                    result = .failure(LineMessage("'\(TextEscaping.shortened(text))' is not a currency bitpal supports "
                        + "(\(CurrencyCode.supported.joined(separator: ", "))); import prices of assets with 'bitpal price import'"))
                }
            }
            resolved[text] = result
            return result
        }
        var quotes: [Quote] = []
        for p in file.prices {
            do {
                let id = try resolve(p.commodity).get()
                let when: Date
                do {
                    when = try p.date.start(in: timeZone, now: now)
                } catch {
                    throw LineMessage(error.description)
                }
                if when > now { throw LineMessage("a price dated \(names.date(when)) is in the future") }
                switch kind {
                case .prices:
                    let currency: String
                    do {
                        currency = try book.currency(given: p.currency, assetId: id, portfolio: portfolio)
                    } catch {
                        throw LineMessage(error.description(names: names))
                    }
                    quotes.append(Quote(coinId: id, price: p.price.decimal, time: when, source: .imported, currency: currency))
                case .rates:
                    let to = p.currency ?? portfolio.baseCurrency
                    if to == id { throw LineMessage("an exchange rate needs two different currencies (both are \(to))") }
                    quotes.append(Quote(coinId: Self.rateQuoteID(from: id, to: to), price: p.price.decimal, time: when, source: .imported,
                                        currency: to))
                }
            } catch let error as LineMessage {
                problems.append((p.line, error.text))
            }
        }
        if !problems.isEmpty {
            let ordered = problems.enumerated().sorted { ($0.element.line, $0.offset) < ($1.element.line, $1.offset) }
            throw ImportFailure(problems: ordered.map { "line \($0.element.line): \($0.element.message)" })
        }
        // One quote per asset, currency and time: a later line wins.
        var last: [PriceCache.QuoteKey: Int] = [:]
        for (i, q) in quotes.enumerated() { last[PriceCache.QuoteKey(q)] = i }
        let unique = quotes.enumerated().filter { last[PriceCache.QuoteKey($0.element)] == $0.offset }.map(\.element)
            .sorted { $0.time < $1.time }
        let merge = try priceCache.merge(unique, now: now, timeZone: timeZone, write: !dryRun)
        if !dryRun, let broken = merge.setAside { notify(.priceCacheMovedAside(broken)) }
        return PriceImportSummary(quotes: unique, assets: Array(Set(unique.map(\.coinId))).sorted(), merge: merge, dryRun: dryRun)
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
        guard (1...PriceError.maxHistoryDays).contains(days) else { throw PriceError.historyDays(days) }
        var kept: [Quote] = []
        for currency in Array(Set(currencies.map { $0.uppercased() })).sorted() {
            let fetched = try withPriceService(purpose) { client throws(PriceError) in
                try client.marketChart(coinId: coin, currency: currency, days: days, now: now)
            }
            for w in fetched.warnings { notify(.service(w)) }
            let daily = Self.lastOfEachDay(fetched.quotes, timeZone: timeZone)
            if !daily.isEmpty, let broken = try priceCache.merge(daily, now: now, timeZone: timeZone).setAside {
                notify(.priceCacheMovedAside(broken))
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
