import Foundation

extension Session {
    /// The value over time of `portfolios` (`history`, `performance`): one replay of the book that
    /// keeps what each record left, every quote of the price history, and every rate (typed ones,
    /// then the fetched `fx:` quotes of the price cache), in `currency` (default: the portfolios'
    /// common base, else the default portfolio's).
    ///
    /// With `refresh`, current prices (and rates) are refreshed first under the reports' rule: only
    /// when a held coin's newest quote is over 60 s old, never offline, not after a recent failure.
    public func timeline(_ book: Book, portfolios: Set<String>, refresh: Bool, currency: String? = nil, timeZone: TimeZone,
                         names: MessageNames) throws -> ValueTimeline {
        let ledger = checkedLedger(book, names: names) { $0.keepingChanges = true }
        // Only the history the timeline can ask for: its assets' quotes from its first record on
        // (before it nothing is held), with the newest before it, and the rates.
        let mine = ledger.changes.filter { portfolios.contains($0.transaction.portfolio) }
        let scope = PriceHistoryScope(assets: Set(mine.map(\.transaction.assetId).filter { !$0.isEmpty }), rates: true,
                                      since: mine.lazy.map(\.transaction.date).min())
        let (quotes, base) = try reportPrices(book, ledger: ledger, portfolios: portfolios, currency: currency, refresh: refresh, history: scope)
        var chosen: [String: ValueTimeline.PortfolioInfo] = [:]
        for p in book.portfolios where portfolios.contains(p.name) {
            chosen[p.name] = ValueTimeline.PortfolioInfo(baseCurrency: p.baseCurrency, tracksCash: p.trackCash)
        }
        return ValueTimeline(changes: ledger.changes, portfolios: chosen, prices: quotes, fxRates: prices.historyRates(book, prices: quotes),
                             currency: base, timeZone: timeZone, now: now)
    }
}
