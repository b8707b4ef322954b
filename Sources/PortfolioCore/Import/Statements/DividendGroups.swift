import Foundation

/// The rows of a statement's dividends, joined: each dividend's payments and reversals, its
/// withholding tax, tax refunds and fee rows, by a key the preset picks (IBKR's `ActionID`, else the
/// asset, day and currency; DEGIRO's value date). One rule for what does not join:
///
/// - A group with a payment (a positive dividend row) is a dividend: its payments and reversals
///   summed, its tax and fees summed as the fee; the date, notes and id are its first payment's.
/// - A group without one (a reversal, a tax correction or refund on a later day), and a group whose
///   payments net negative (a reversal with a smaller re-booking on a later day), is netted into the
///   latest dividend of the same asset and currency on or before its day, unless its key is the
///   file's own id for one dividend (`exact`): that dividend is not in the file then.
/// - A dividend reversed whole is counted, and so is tax left over from it; a dividend whose tax is
///   more than what is left of it after reversals is counted, not imported.
/// - What cannot be placed is counted, never turned into cash: a refund is not a deposit.
struct DividendGroups {
    struct Group {
        var asset: String
        var name: String
        var currency: String
        /// The first payment's date (until one comes, the first row's), as the record writes it: it sorts.
        var date: String
        /// Payments less reversals.
        var amount: Decimal = 0
        /// Tax and fees withheld less what was refunded.
        var tax: Decimal = 0
        var line: Int
        var paymentLine: Int?
        var notes: String
        var id: String
        /// Joined by the file's own id for the dividend: never netted into another one.
        var exact: Bool
    }

    private(set) var groups: [Group] = []
    private var index: [String: Int] = [:]

    /// Joins a row into the group of `key`: `payment` a dividend row's amount (a reversal negative),
    /// `tax` what a tax or fee row withheld (a refund negative).
    mutating func add(key: String, exact: Bool = false, asset: String, name: String, currency: String, date: String,
                      payment: Decimal = 0, tax: Decimal = 0, line: Int, notes: String, id: String) {
        let i: Int
        if let found = index[key] {
            i = found
        } else {
            i = groups.count
            index[key] = i
            groups.append(Group(asset: asset, name: name, currency: currency, date: date, line: line, notes: notes, id: id, exact: exact))
        }
        groups[i].amount += payment
        groups[i].tax += tax
        // The first payment (by date, files run either way) names the dividend.
        if payment > 0, groups[i].paymentLine == nil || date < groups[i].date {
            groups[i].paymentLine = line
            groups[i].date = date
            groups[i].notes = notes
            groups[i].id = id
            if !name.isEmpty { groups[i].name = name }
        }
    }

    /// The dividends to keep, in date order, corrections netted into them, and the reasons of what
    /// is counted instead.
    func netted() -> (dividends: [Group], counted: [String]) {
        var kept: [Group] = []
        var counted: [String] = []
        // The latest kept dividend of each asset and currency (by `asset|currency`).
        var latest: [String: Int] = [:]
        for g in groups.enumerated().sorted(by: { ($0.element.date, $0.offset) < ($1.element.date, $1.offset) }).map(\.element) {
            let key = g.asset + "|" + g.currency
            let prior = g.exact ? nil : latest[key]
            /// Whether `g` nets into the prior dividend without making it negative.
            func fits(_ i: Int) -> Bool { kept[i].amount + g.amount >= 0 && kept[i].tax + g.tax >= 0 }
            if g.paymentLine != nil {
                // A dividend, unless its payments net negative: a reversal of an earlier dividend with
                // a smaller re-booking (not joined by the file's id), its deficit that dividend's.
                if g.amount < 0, let i = prior, fits(i) {
                    kept[i].amount += g.amount
                    kept[i].tax += g.tax
                } else {
                    latest[key] = kept.count
                    kept.append(g)
                }
                continue
            }
            if g.amount == 0 && g.tax == 0 { counted.append("dividend correction (reversed whole)"); continue }
            guard let i = prior, fits(i) else {
                counted.append(g.amount < 0 ? "dividend reversal (its dividend is not in the file)"
                    : g.tax < 0 ? "dividend tax refund (its dividend is not in the file)" : "dividend tax (its dividend is not in the file)")
                continue
            }
            kept[i].amount += g.amount
            kept[i].tax += g.tax
        }
        var dividends: [Group] = []
        for g in kept {
            if g.amount == 0 {
                counted.append("dividend (reversed whole)")
                // Tax left over from a dividend reversed whole is counted, never lost.
                if g.tax > 0 { counted.append("dividend tax (its dividend reversed whole)") }
                if g.tax < 0 { counted.append("dividend tax refund (its dividend reversed whole)") }
                continue
            }
            if g.amount < 0 { counted.append("dividend (more reversed than paid)"); continue }
            if g.tax < 0 { counted.append("dividend (more tax refunded than withheld)"); continue }
            // Tax above what is left after a reversal is no dividend bitpal keeps (`taxAboveGross`).
            if g.tax > g.amount { counted.append("dividend (its tax more than what is left of it after reversals)"); continue }
            dividends.append(g)
        }
        return (dividends, counted)
    }
}

extension ExchangeImport.Mapper {
    /// Keeps the joined dividends, each asset registered by `register` (`nil`: counted as `unregistered`).
    mutating func keepDividends(_ groups: DividendGroups, unregistered: String, register: (inout Self, DividendGroups.Group) -> String?) {
        let (dividends, counted) = groups.netted()
        for reason in counted { skip(reason) }
        for g in dividends {
            guard let asset = register(&self, g) else { skip(unregistered); continue }
            dividend(line: g.paymentLine ?? g.line, asset: asset, amount: g.amount, tax: g.tax, currency: g.currency, date: g.date, notes: g.notes, id: g.id)
        }
    }
}
