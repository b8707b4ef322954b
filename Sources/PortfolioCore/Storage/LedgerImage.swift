import Foundation

/// The replay's state as a binary image (a snapshot's heart): everything a ledger holds that reports
/// read and that a later record's `apply` continues from. Read back, the ledger is the one written,
/// field for field (the lookups it keeps to find positions fast are rebuilt).
extension Ledger {
    func write(to w: inout ImageWriter) {
        // How it keeps the books.
        let tracking = options.trackingCash.sorted()
        w.count(tracking.count)
        for p in tracking { w.string(p) }
        let methods = options.methods.sorted { $0.key < $1.key }
        w.count(methods.count)
        for (p, m) in methods {
            w.string(p)
            w.string(m.rawValue)
        }
        w.bool(options.keepingCashMovements)
        w.bool(options.keepingDisposals)
        w.bool(options.keepingChanges)
        // What it is set up with and what it has done.
        // Dictionaries and sets in the order of their keys' bits: the same ledger, the same image.
        w.count(exchangeCosts.count)
        for (link, cost) in exchangeCosts.sorted(by: { Self.bits($0.key) < Self.bits($1.key) }) {
            w.uuid(link)
            w.exact(cost)
        }
        w.count(savingLinks.count)
        for link in savingLinks.sorted(by: { Self.bits($0) < Self.bits($1) }) { w.uuid(link) }
        w.varInt(applied)
        w.count(positionList.count)
        for p in positionList { Self.write(p, to: &w) }
        w.count(closed.count)
        for c in closed { Self.write(c, to: &w) }
        w.count(income.count)
        for e in income { Self.write(e, to: &w) }
        w.count(portfolioTotals.count)
        for (p, t) in portfolioTotals {
            w.string(p)
            for v in [t.realized, t.realizedBasis, t.income, t.taxWithheld, t.netDeposits] { w.exact(v) }
        }
        w.count(moving.count)
        for (link, lots) in moving.sorted(by: { Self.bits($0.key) < Self.bits($1.key) }) {
            w.uuid(link)
            w.count(lots.count)
            for lot in lots { Self.write(lot, to: &w) }
        }
        w.count(cashList.count)
        for c in cashList {
            w.string(c.key.portfolio)
            w.string(c.key.currency)
            w.exact(c.balance)
            w.exact(c.atCost)
        }
    }

    static func read(from r: inout ImageReader) throws(ImageError) -> Ledger {
        var options = LedgerOptions()
        options.trackingCash = Set(try r.array(each: 4) { r throws(ImageError) in try r.string() })
        let methodCount = try r.count(each: 8)
        for _ in 0..<methodCount {
            let p = try r.string()
            options.methods[p] = try r.named(CostBasisMethod.self)
        }
        options.keepingCashMovements = try r.bool()
        options.keepingDisposals = try r.bool()
        options.keepingChanges = try r.bool()
        var ledger = Ledger(options)
        let costs = try r.count(each: 19)
        for _ in 0..<costs {
            let link = try r.uuid()
            ledger.exchangeCosts[link] = try r.exact()
        }
        ledger.savingLinks = Set(try r.array(each: 16) { r throws(ImageError) in try r.uuid() })
        ledger.applied = try r.varInt()
        guard ledger.applied >= 0 else { throw ImageError() }
        ledger.positionList = try r.array(each: 8) { r throws(ImageError) in try readPosition(&r) }
        for (i, p) in ledger.positionList.enumerated() {
            guard ledger.positionIndex.updateValue(i, forKey: p.key) == nil else { throw ImageError() }
        }
        ledger.closed = try r.array(each: 8) { r throws(ImageError) in try readClosed(&r) }
        ledger.income = try r.array(each: 24) { r throws(ImageError) in try readIncome(&r) }
        ledger.portfolioTotals = try r.array(each: 4) { r throws(ImageError) in
            let p = try r.string()
            var t = LedgerTotals()
            t.realized = try r.exact()
            t.realizedBasis = try r.exact()
            t.income = try r.exact()
            t.taxWithheld = try r.exact()
            t.netDeposits = try r.exact()
            return (p, t)
        }
        let moves = try r.count(each: 20)
        for _ in 0..<moves {
            let link = try r.uuid()
            ledger.moving[link] = try r.array(each: 8) { r throws(ImageError) in try readLot(&r) }
        }
        ledger.cashList = try r.array(each: 8) { r throws(ImageError) in
            let key = CashKey(portfolio: try r.string(), currency: try r.string())
            let balance = try r.exact()
            return (key, balance, try r.exact())
        }
        // Keys the ledger finds one of: two would be a file no writer wrote.
        guard Set(ledger.cashList.map(\.key)).count == ledger.cashList.count,
              Set(ledger.portfolioTotals.map(\.portfolio)).count == ledger.portfolioTotals.count else { throw ImageError() }
        return ledger
    }

    private static func bits(_ id: UUID) -> UInt128 { withUnsafeBytes(of: id.uuid) { $0.loadUnaligned(as: UInt128.self) } }

    private static func write(_ lot: Lot, to w: inout ImageWriter) {
        w.fixed(lot.quantity)
        w.exact(lot.basis)
        w.optional(lot.acquired) { $0.date($1) }
        w.optional(lot.source) { $0.uuid($1) }
        w.varInt(lot.order)
        // HIFO's key only where HIFO keeps it (zero elsewhere).
        w.optional(lot.unitCost == .zero ? nil : lot.unitCost) { $0.exact($1) }
    }

    private static func readLot(_ r: inout ImageReader) throws(ImageError) -> Lot {
        let quantity = try r.fixed()
        let basis = try r.exact()
        let acquired = try r.optional { r throws(ImageError) in try r.date() }
        let source = try r.optional { r throws(ImageError) in try r.uuid() }
        var lot = Lot(quantity: quantity, basis: basis, acquired: acquired, source: source, order: try r.varInt())
        lot.unitCost = try r.optional { r throws(ImageError) in try r.exact() } ?? .zero
        return lot
    }

    private static func write(_ p: Position, to w: inout ImageWriter) {
        w.string(p.key.portfolio)
        w.string(p.key.assetId)
        let lots = p.lots
        w.string(lots.method.rawValue)
        w.fixed(lots.quantity)
        w.exact(lots.costBasis)
        let open = lots.lots[lots.head...]
        w.count(open.count)
        for lot in open { write(lot, to: &w) }
        w.count(lots.heap.count)
        for ranked in lots.heap {
            write(ranked.lot, to: &w)
            w.varInt(ranked.arrival)
        }
        w.varInt(lots.arrivals)
        w.optional(p.cycleAcquired) { $0.fixed($1) }
        w.optional(p.cycleAcquisitionCost) { $0.exact($1) }
        w.optional(p.cycleSold) { $0.fixed($1) }
        w.optional(p.cycleSoldGross) { $0.exact($1) }
        w.exact(p.cycleRealizedBasis)
        w.exact(p.cycleRealized)
        w.optional(p.openedDate) { $0.date($1) }
        w.optional(p.lastDisposalDate) { $0.date($1) }
        w.optional(p.openedDay) { $0.i64($1) }
        w.optional(p.lastDisposalDay) { $0.i64($1) }
    }

    private static func readPosition(_ r: inout ImageReader) throws(ImageError) -> Position {
        let key = PositionKey(portfolio: try r.string(), assetId: try r.string())
        var p = Position(key: key, method: try r.named(CostBasisMethod.self))
        p.lots.quantity = try r.fixed()
        p.lots.costBasis = try r.exact()
        p.lots.lots = try r.array(each: 8) { r throws(ImageError) in try readLot(&r) }
        p.lots.heap = try r.array(each: 9) { r throws(ImageError) in
            let lot = try readLot(&r)
            return Lots.Ranked(lot: lot, arrival: try r.varInt())
        }
        p.lots.arrivals = try r.varInt()
        p.cycleAcquired = try r.optional { r throws(ImageError) in try r.fixed() }
        p.cycleAcquisitionCost = try r.optional { r throws(ImageError) in try r.exact() }
        p.cycleSold = try r.optional { r throws(ImageError) in try r.fixed() }
        p.cycleSoldGross = try r.optional { r throws(ImageError) in try r.exact() }
        p.cycleRealizedBasis = try r.exact()
        p.cycleRealized = try r.exact()
        p.openedDate = try r.optional { r throws(ImageError) in try r.date() }
        p.lastDisposalDate = try r.optional { r throws(ImageError) in try r.date() }
        p.openedDay = try r.optional { r throws(ImageError) in try r.day() }
        p.lastDisposalDay = try r.optional { r throws(ImageError) in try r.day() }
        return p
    }

    private static func write(_ c: ClosedPosition, to w: inout ImageWriter) {
        w.string(c.portfolio)
        w.string(c.assetId)
        w.optional(c.acquired) { $0.fixed($1) }
        w.exact(c.totalCost)
        w.optional(c.avgCostPrice) { $0.exact($1) }
        w.optional(c.avgSellPrice) { $0.exact($1) }
        w.exact(c.realizedPnL)
        w.date(c.openedDate)
        w.date(c.closedDate)
        w.optional(c.openedDay) { $0.i64($1) }
        w.optional(c.closedDay) { $0.i64($1) }
        w.exact(c.closingPnL)
        w.exact(c.closingCost)
    }

    private static func readClosed(_ r: inout ImageReader) throws(ImageError) -> ClosedPosition {
        let portfolio = try r.string(), assetId = try r.string()
        let acquired = try r.optional { r throws(ImageError) in try r.fixed() }
        let totalCost = try r.exact()
        let avgCost = try r.optional { r throws(ImageError) in try r.exact() }
        let avgSell = try r.optional { r throws(ImageError) in try r.exact() }
        let realized = try r.exact()
        let opened = try r.date(), closedDate = try r.date()
        let openedDay = try r.optional { r throws(ImageError) in try r.day() }
        let closedDay = try r.optional { r throws(ImageError) in try r.day() }
        let closingPnL = try r.exact(), closingCost = try r.exact()
        // Made as the replay made it (the closing figures), then given the figures shown.
        var c = ClosedPosition(portfolio: portfolio, assetId: assetId, acquired: acquired, totalCost: closingCost, avgCostPrice: avgCost,
                               avgSellPrice: avgSell, realizedPnL: closingPnL, openedDate: opened, closedDate: closedDate)
        c.totalCost = totalCost
        c.realizedPnL = realized
        c.openedDay = openedDay
        c.closedDay = closedDay
        return c
    }

    private static func write(_ e: IncomeEvent, to w: inout ImageWriter) {
        w.uuid(e.transactionId)
        w.string(e.portfolio)
        w.string(e.assetId)
        w.u8(UInt8(TransactionType.allCases.firstIndex(of: e.type) ?? 0))
        w.date(e.date)
        w.optional(e.day) { $0.i64($1) }
        w.exact(e.gross)
        w.exact(e.taxWithheld)
        // Net of the tax, as it is but for rounding nothing ever does: then left out.
        w.optional((try? e.gross - e.taxWithheld) == e.net ? nil : e.net) { $0.exact($1) }
    }

    private static func readIncome(_ r: inout ImageReader) throws(ImageError) -> IncomeEvent {
        let id = try r.uuid()
        let portfolio = try r.string(), assetId = try r.string()
        let kinds = TransactionType.allCases
        let kind = Int(try r.u8())
        guard kind < kinds.count else { throw ImageError() }
        let date = try r.date()
        let day = try r.optional { r throws(ImageError) in try r.day() }
        let gross = try r.exact(), tax = try r.exact()
        let given = try r.optional { r throws(ImageError) in try r.exact() }
        guard let net = given ?? (try? gross - tax) else { throw ImageError() }
        return IncomeEvent(transactionId: id, portfolio: portfolio, assetId: assetId, type: kinds[kinds.index(kinds.startIndex, offsetBy: kind)],
                           date: date, day: day, gross: gross, taxWithheld: tax, net: net)
    }
}
