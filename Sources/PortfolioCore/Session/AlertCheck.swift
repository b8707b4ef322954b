import Foundation

extension Session {
    /// `alert check`: refreshes the prices the alerts need under the reports' 60-second rule (unless
    /// offline), then, under the store's lock, steps every alert and writes the states.
    ///
    /// - Throws: the fetch's error when prices could not be fetched; then no alert fires and no state changes.
    public func checkAlerts(names: MessageNames) throws -> AlertCheck {
        let before = try repository.loadBook()
        guard !before.alerts.isEmpty else { return AlertCheck() }
        var prices = prices.priceBook(before)
        if !offline {
            _ = try service.networkSettings()
            var stale: [String: Set<String>] = [:]  // currency → coins
            for a in before.alerts where !Asset.isRegisteredID(a.assetId) {
                let newest = prices.latest(a.assetId, preferring: a.currency)
                let fresh = newest.map { $0.currency == a.currency && now.timeIntervalSince($0.time) <= PriceBook.freshFor } ?? false
                if !fresh { stale[a.currency, default: []].insert(a.assetId) }
            }
            for (currency, coins) in stale.sorted(by: { $0.key < $1.key }) {
                let fetched = try self.prices.fetchPrices(coins.sorted(), currencies: [currency], purpose: .explicit)
                for w in fetched.warnings { notify(.service(w)) }
                prices.add(fetched.quotes)
            }
        }
        // The newest quote in each alert's own currency: the newest of all is enough unless it is in another one.
        var history: PriceBook?
        func quote(_ a: PriceAlert) -> Quote? {
            if let q = prices.latest(a.assetId, preferring: a.currency), q.currency == a.currency { return q }
            // The newest quote in each currency: of every alert's asset, the newest before now (and any later).
            if history == nil { history = self.prices.priceBook(before, scope: PriceHistoryScope(assets: Set(before.alerts.map(\.assetId)), rates: false, since: now)) }
            return history?.history(a.assetId).last { $0.currency == a.currency } ?? prices.latest(a.assetId)
        }
        return try repository.store.update(now: now, names: names) { book in
            var check = AlertCheck()
            for i in book.alerts.indices {
                var a = book.alerts[i]
                let quote = quote(a)
                let holds = a.holds(for: quote)
                let (state, fires) = a.step(holds)
                a.state = state
                a.lastChecked = now
                check.checked += 1
                if holds == nil { check.unknown.append(a) }
                if fires, let quote { check.fired.append(FiredAlert(alert: a, quote: quote)) }
                book.alerts[i] = a
            }
            return (true, check)
        }
    }
}
