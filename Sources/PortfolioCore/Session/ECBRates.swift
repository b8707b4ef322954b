import Foundation

extension Prices {
    /// What a fetch of the ECB's rates kept, and the currencies it had no rate for.
    public struct ECBFetch: Sendable {
        /// FROM→TO rates of each working day, oldest first.
        public var rates: [FXRate]
        /// Currencies asked for that no day of the reply rated (outside the ECB's list, or not yet or no longer quoted).
        public var missing: [String]
    }

    /// The currencies the book's money is in (USD included) and every portfolio's base.
    public func rateCurrencies(_ book: Book) -> (currencies: Set<String>, bases: Set<String>) {
        (currencies(of: book), Set(book.portfolios.map(\.baseCurrency)))
    }

    /// The ECB's rates of every working day from `start` through `end` (days since 1970), one request
    /// to the exchange-rate service: each of `currencies` into each of `bases`, cross rates computed
    /// here (`crossRates`), kept in the price cache as day-dated rates (a re-fetch replaces them).
    ///
    /// - Throws: `PriceError` (`.noRates` for a span with none, every network failure), or the cache's `StoreError`.
    public func fetchECBHistory(currencies: Set<String>, bases: Set<String>, from start: Int64, through end: Int64,
                                purpose: NetworkPurpose) throws -> ECBFetch {
        let client = try service.fxClient(purpose)
        return try keep(try client.range(from: start, through: end), currencies: currencies, bases: bases)
    }

    /// The ECB's newest working day (`/v1/latest`) for the currencies `book` uses, kept as `fetchECBHistory` keeps days.
    public func refreshECBRates(_ book: Book, purpose: NetworkPurpose) throws -> ECBFetch {
        let client = try service.fxClient(purpose)
        let (currencies, bases) = rateCurrencies(book)
        return try keep(try client.latest(today: ISODate.dayNumber(of: now, in: timeZone)), currencies: currencies, bases: bases)
    }

    private func keep(_ fetched: FetchedECBRates, currencies: Set<String>, bases: Set<String>) throws -> ECBFetch {
        for w in fetched.warnings { notices.send(.service(w)) }
        let made = Self.crossRates(fetched.days, currencies: currencies, bases: bases, timeZone: timeZone)
        let quotes = made.rates.map {
            Quote(coinId: Self.rateQuoteID(from: $0.from, to: $0.to), price: $0.rate.decimal, time: $0.date, source: .ecb, currency: $0.to)
        }
        if !quotes.isEmpty, let broken = try priceCache.merge(quotes, now: now, timeZone: timeZone).setAside {
            notices.send(.priceCacheMovedAside(broken))
        }
        return made
    }

    /// FROM→TO of each day for each of `currencies` into each of `bases` (FROM ≠ TO): rate[TO] ÷ rate[FROM]
    /// from the per-euro rates (EUR is 1), rounded once, half-up at 18 decimals, never the service's rebased
    /// figures. Each rate is dated the first instant of its day in `timeZone`.
    public static func crossRates(_ days: [ECBDay], currencies: Set<String>, bases: Set<String>, timeZone: TimeZone) -> ECBFetch {
        let one = Fixed18(units: Fixed18.scale)
        var rated: Set<String> = ["EUR"]
        var rates: [FXRate] = []
        for day in days {
            rated.formUnion(day.perEuro.keys)
            let date = RecordDate.day(day.day, in: timeZone).date
            func perEuro(_ c: String) -> Fixed18? { c == "EUR" ? one : day.perEuro[c] }
            for base in bases.sorted() {
                guard let to = perEuro(base) else { continue }
                for c in currencies.sorted() where c != base {
                    // to.units × 10^18 ÷ from.units, rounded at the last unit: the Fixed18 units of to ÷ from.
                    guard let from = perEuro(c), let q = try? Exact36(to).multiplied(by: Fixed18(units: 1), dividedBy: from),
                          q.high == 0, q.low > 0 else { continue }
                    rates.append(FXRate(from: c, to: base, rate: Fixed18(units: q.low), date: date, source: .ecb))
                }
            }
        }
        return ECBFetch(rates: rates, missing: currencies.union(bases).subtracting(rated).sorted())
    }

    /// History reports need a rate for every past day: when the book's money is in another currency than
    /// a base and the rate table has no rate of such a pair on or before `first` (the first record's
    /// day), the ECB's are fetched once from that day through today (online, within the short budget;
    /// a failure is a notice). The price book with them, or as it was.
    func fillRateHistoryIfNeeded(_ book: Book, prices quotes: PriceBook, since first: Date, history: PriceHistoryScope?) -> PriceBook {
        guard !offline else { return quotes }
        let (currencies, bases) = rateCurrencies(book)
        let table = fxTable(book, prices: quotes)
        let lacking = bases.contains { base in currencies.union(bases).contains { $0 != base && table.rate(from: $0, to: base, on: first) == nil } }
        guard lacking else { return quotes }
        do {
            _ = try fetchECBHistory(currencies: currencies.union(bases), bases: bases, from: ISODate.dayNumber(of: first, in: timeZone),
                                    through: ISODate.dayNumber(of: now, in: timeZone), purpose: .automatic)
            return priceBook(book, scope: history)
        } catch {
            notices.send(.ratesNotFetched(error))
            return quotes
        }
    }

    /// What `Book.fetchRates` calls on a missing rate while online: the ECB's rates from that day through
    /// today (or up to the span already fetched this run) for the book's currencies and the pair, within
    /// the reports' short budget; `true` when it kept any. A later miss inside the span, or after a
    /// failure (a notice), fetches nothing. `nil` offline.
    public func rateFetcher(for book: Book) -> (@Sendable (String, String, Date) -> Bool)? {
        guard !offline else { return nil }
        let (currencies, bases) = rateCurrencies(book)
        let today = ISODate.dayNumber(of: now, in: timeZone)
        let box = fetchedRates
        nonisolated(unsafe) let prices = self
        return { from, to, date in
            let day = ISODate.dayNumber(of: date, in: prices.timeZone)
            guard day <= today, let end = box.claim(day, today: today) else { return false }
            do {
                let fetched = try prices.fetchECBHistory(currencies: currencies.union([from, to]), bases: bases.union([to]),
                                                         from: day, through: end, purpose: .automatic)
                box.add(fetched.rates)
                return !fetched.rates.isEmpty
            } catch {
                box.fail()
                prices.notices.send(.ratesNotFetched(error))
                return false
            }
        }
    }
}

/// The rates fetched for missing days during one run, and the span they cover (thread-safe).
final class FetchedRates: @unchecked Sendable {
    private let lock = NSLock()
    private var kept: [FXRate] = []
    private var first: Int64?
    private var failed = false

    var rates: [FXRate] {
        lock.lock()
        defer { lock.unlock() }
        return kept
    }

    /// The last day to fetch for a miss on `day` (today, or the day before the span fetched so
    /// far), taking that span as fetched; `nil` when it is fetched already or a fetch failed.
    func claim(_ day: Int64, today: Int64) -> Int64? {
        lock.lock()
        defer { lock.unlock() }
        if failed { return nil }
        let end = first.map { $0 - 1 } ?? today
        guard day <= end else { return nil }
        first = day
        return end
    }

    func add(_ rates: [FXRate]) {
        lock.lock()
        kept += rates
        lock.unlock()
    }

    func fail() {
        lock.lock()
        failed = true
        lock.unlock()
    }
}
