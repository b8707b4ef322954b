import Foundation

/// How long a lot part was held when it left (cost-basis.md): calendar days in the local time
/// zone from acquisition to disposal; up to 365 is short.
public enum HoldingTerm: String, Sendable, Equatable {
    case short, long
    /// A row whose parts were held for different terms, or a pool (under `average`).
    case mixed

    public static func of(acquired: Date, disposed: Date, in timeZone: TimeZone) -> HoldingTerm {
        ISODate.dayNumber(of: disposed, in: timeZone) - ISODate.dayNumber(of: acquired, in: timeZone) > 365 ? .long : .short
    }
}

/// One lot part of a realized disposal, with its share of the proceeds.
public struct GainPart: Sendable, Equatable {
    /// The acquisition (`nil`: the average pool).
    public var transactionId: UUID?
    public var acquiredDate: Date?
    public var quantity: Fixed18
    public var basis: Exact36
    /// The row's proceeds shared by quantity (the last part takes the rest, so the parts add up).
    public var proceeds: Exact36
    /// `nil` for the pool.
    public var term: HoldingTerm?
    public var gain: Exact36 { (try? proceeds - basis) ?? .zero }
}

/// A disposal that realized a gain or a loss.
public struct GainRow: Sendable {
    public var disposal: Disposal
    public var asset: AssetLabel
    /// The disposal's money in the report's currency.
    public var proceeds: Exact36
    public var basis: Exact36
    public var gain: Exact36
    public var term: HoldingTerm
    public var parts: [GainPart]
    /// What the row is, for people: sell, swap, network fee, loss.
    public var label: String {
        if disposal.isNetworkFee { return "fee" }
        switch disposal.type {
        case .sell: return disposal.linked ? "swap" : "sell"
        case .adjustment: return "loss"
        default: return disposal.type.rawValue
        }
    }
}

/// Realized gains of one year, the short and long terms apart (`nil` when no row of the year
/// came from lots: under `average` there is only the total).
public struct GainTotal: Sendable, Equatable {
    public var year: Int
    public var gain: Exact36
    public var shortTerm: Exact36?
    public var longTerm: Exact36?
}

public struct GainsReport: InOneCurrency, Sendable {
    /// The currency of every figure.
    public var currency: CurrencyCode
    public var rows: [GainRow]
    /// Per year, oldest first.
    public var totals: [GainTotal]
    /// Σ over every row.
    public var total: Exact36
    public var shortTerm: Exact36?
    public var longTerm: Exact36?
}

/// The open lots of one holding, for `holdings --lots`.
public struct HeldLot: Sendable, Equatable {
    public var portfolio: String
    public var lot: Lot
    /// The lot's basis in the report's currency.
    public var basis: Exact36
    /// Whole local calendar days since acquisition (`nil` for the pool).
    public var ageDays: Int?
    public var unitCost: Exact36 { lot.quantity.units > 0 ? ((try? basis.divided(by: lot.quantity)) ?? .zero) : .zero }
}

extension Reports {
    /// Every realized disposal of the chosen portfolios dated within `since...until` (inclusive;
    /// either open), oldest first, with totals per local calendar year. Needs a
    /// ledger replayed with `keepingDisposals`.
    public func gains(since: Date? = nil, until: Date? = nil, timeZone: TimeZone) -> GainsReport {
        var rows: [GainRow] = []
        for d in ledger.disposals where d.realizes && includes(d.portfolio) {
            if let since, d.date < since { continue }
            if let until, d.date > until { continue }
            rows.append(gainRow(d, timeZone: timeZone))
        }
        var totals: [GainTotal] = []
        var all = GainTotal(year: 0, gain: .zero, shortTerm: nil, longTerm: nil)
        for r in rows {
            let year = Int(ISODate.localDay(of: r.disposal.date, in: timeZone).0)
            if totals.last?.year != year {
                if let i = totals.firstIndex(where: { $0.year == year }) {
                    totals.append(totals.remove(at: i))
                } else {
                    totals.append(GainTotal(year: year, gain: .zero, shortTerm: nil, longTerm: nil))
                }
            }
            Reports.add(r, to: &totals[totals.count - 1])
            Reports.add(r, to: &all)
        }
        totals.sort { $0.year < $1.year }
        return GainsReport(currency: currency, rows: rows, totals: totals, total: all.gain, shortTerm: all.shortTerm, longTerm: all.longTerm)
    }

    private static func add(_ r: GainRow, to t: inout GainTotal) {
        t.gain = (try? t.gain + r.gain) ?? t.gain
        for p in r.parts {
            switch p.term {
            case .short?: t.shortTerm = (try? (t.shortTerm ?? .zero) + p.gain) ?? t.shortTerm
            case .long?: t.longTerm = (try? (t.longTerm ?? .zero) + p.gain) ?? t.longTerm
            default: break
            }
        }
        // A year with lot rows names both terms, the one without parts as zero.
        if t.shortTerm != nil || t.longTerm != nil {
            t.shortTerm = t.shortTerm ?? .zero
            t.longTerm = t.longTerm ?? .zero
        }
    }

    /// One disposal as a gains row: its money in the report's currency, its proceeds shared over
    /// its lot parts by quantity, each part's term.
    func gainRow(_ d: Disposal, timeZone: TimeZone) -> GainRow {
        func c(_ v: Exact36) -> Exact36 { fromBase(of: d.portfolio, v) ?? .zero }
        let proceeds = c(d.proceeds), basis = c(d.basis)
        var parts: [GainPart] = []
        var left = proceeds
        for (i, lot) in d.parts.enumerated() {
            let share = i == d.parts.count - 1 ? left
                : ((try? proceeds.multiplied(by: lot.quantity, dividedBy: d.quantity)) ?? .zero)
            left = (try? left - share) ?? left
            parts.append(GainPart(transactionId: lot.source, acquiredDate: lot.acquired, quantity: lot.quantity, basis: c(lot.basis),
                                  proceeds: share, term: lot.acquired.map { HoldingTerm.of(acquired: $0, disposed: d.date, in: timeZone) }))
        }
        let terms = Set(parts.map(\.term))
        let term: HoldingTerm = terms.count == 1 ? (terms.first.flatMap { $0 } ?? .mixed) : .mixed
        return GainRow(disposal: d, asset: asset(d.assetId), proceeds: proceeds, basis: basis, gain: (try? proceeds - basis) ?? .zero,
                       term: term, parts: parts)
    }

    /// The open lots of the chosen portfolios' holdings of `assetId` (every portfolio's, oldest
    /// first; an `average` portfolio's pool first), their bases in the report's currency.
    public func lots(of assetId: String, portfolio: String? = nil, timeZone: TimeZone) -> [HeldLot] {
        var out: [HeldLot] = []
        let today = ISODate.dayNumber(of: now, in: timeZone)
        for p in ledger.positions.values where p.isOpen && p.key.assetId == assetId && includes(p.key.portfolio)
            && (portfolio == nil || p.key.portfolio == portfolio) {
            for lot in p.lots.byAcquisition {
                let age = lot.acquired.map { Int(today - ISODate.dayNumber(of: $0, in: timeZone)) }
                out.append(HeldLot(portfolio: p.key.portfolio, lot: lot, basis: fromBase(of: p.key.portfolio, lot.basis) ?? .zero, ageDays: age))
            }
        }
        out.sort { a, b in
            if a.lot.acquired == nil || b.lot.acquired == nil {
                return a.lot.acquired == nil && b.lot.acquired == nil ? a.portfolio < b.portfolio : a.lot.acquired == nil
            }
            if Lots.earlier(a.lot, b.lot) { return true }
            if Lots.earlier(b.lot, a.lot) { return false }
            return a.portfolio < b.portfolio
        }
        return out
    }
}
