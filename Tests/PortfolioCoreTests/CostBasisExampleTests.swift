import Foundation
import Testing
@testable import PortfolioCore

/// Worked example J of `cost-basis.md` to the cent under every method, and the rules of lots.
@Suite struct CostBasisExampleTests {
    let now = day("2026-06-01T12:00:00Z")
    let utc = TimeZone(identifier: "UTC")!

    func book(_ records: [Transaction], method: CostBasisMethod, others: [Portfolio] = []) -> Book {
        Book(transactions: records, portfolios: [Portfolio(name: "main", costBasisMethod: method)] + others, assets: [],
             defaultPortfolio: "main")
    }

    static let exampleJ = [
        record(.buy, "bitcoin", "1", price: "30000", fee: "0", on: "2024-01-01"),
        record(.buy, "bitcoin", "1", price: "50000", fee: "0", on: "2024-02-01"),
        record(.buy, "bitcoin", "1", price: "40000", fee: "0", on: "2024-03-01"),
        record(.sell, "bitcoin", "1.5", price: "60000", fee: "0", on: "2024-04-01"),
    ]

    func ledger(_ b: Book) -> Ledger {
        var options = b.ledgerOptions
        options.keepingDisposals = true
        let checked = b.checked(now: now, options: options)
        #expect(checked.problems.isEmpty, "\(checked.problems)")
        return checked.ledger
    }

    func reports(_ l: Ledger, btc: String = "70000") -> Reports {
        Reports(ledger: l, prices: PriceBook(manual: [Quote(coinId: "bitcoin", price: dec(btc), time: now, source: .manual)]), now: now, asset: { AssetLabel.unknown($0) })
    }

    func money(_ v: Exact36?) -> String? { v.map { $0.fixed(scale: 2) } }

    @Test(arguments: [
        (CostBasisMethod.average, "60000.00", "30000.00", "60000.00", "45000.00"),
        (.fifo, "55000.00", "35000.00", "65000.00", "40000.00"),
        (.lifo, "65000.00", "25000.00", "55000.00", "50000.00"),
        (.hifo, "70000.00", "20000.00", "50000.00", "55000.00"),
    ])
    func exampleJ(method: CostBasisMethod, saleBasis: String, realized: String, openBasis: String, unrealized: String) throws {
        let l = ledger(book(Self.exampleJ, method: method))
        let sale = try #require(l.disposals.first)
        #expect(money(sale.basis) == saleBasis)
        #expect(money(sale.proceeds) == "90000.00")
        #expect(money(l.totals(of: "main").realized) == realized)
        let h = reports(l).holdings()
        #expect(money(h.totalCost) == openBasis)
        #expect(money(h.unrealizedPnL) == unrealized)
        #expect(money(try l.totals(of: "main").realized + h.unrealizedPnL) == "75000.00")
        let gains = reports(l).gains(timeZone: utc)
        #expect(gains.rows.count == 1)
        if method == .average {
            #expect(gains.rows[0].term == .mixed)
            #expect(gains.totals.first?.shortTerm == nil)
        } else {
            #expect(gains.rows[0].parts.allSatisfy { $0.term == .short }, "every lot part of the sale is short")
            #expect(gains.rows[0].term == .short)
            #expect(money(gains.totals.first?.shortTerm) == realized)
            #expect(money(gains.totals.first?.longTerm) == "0.00")
        }
    }

    @Test func exampleJLotsTaken() throws {
        let ids = Self.exampleJ.map(\.id)
        func taken(_ m: CostBasisMethod) throws -> [(UUID?, String)] {
            try #require(ledger(book(Self.exampleJ, method: m)).disposals.first).parts.map { ($0.source, $0.quantity.text) }
        }
        #expect(try taken(.fifo).map(\.0) == [ids[0], ids[1]])
        #expect(try taken(.fifo).map(\.1) == ["1", "0.5"])
        #expect(try taken(.lifo).map(\.0) == [ids[2], ids[1]])
        #expect(try taken(.lifo).map(\.1) == ["1", "0.5"])
        #expect(try taken(.hifo).map(\.0) == [ids[1], ids[2]])
        #expect(try taken(.hifo).map(\.1) == ["1", "0.5"])
    }

    @Test func exampleJSaleOf2025UnderFIFO() throws {
        let sale = record(.sell, "bitcoin", "1", price: "80000", fee: "0", on: "2025-04-02")
        let l = ledger(book(Self.exampleJ + [sale], method: .fifo))
        let gains = reports(l).gains(timeZone: utc)
        let row = try #require(gains.rows.last)
        #expect(row.disposal.transactionId == sale.id)
        #expect(row.parts.map(\.transactionId) == [Self.exampleJ[1].id, Self.exampleJ[2].id])
        #expect(row.parts.map { money($0.basis) } == ["25000.00", "20000.00"])
        #expect(row.parts.map(\.acquiredDate) == [day("2024-02-01"), day("2024-03-01")])
        #expect(row.parts.map(\.term) == [.long, .long])
        #expect(row.term == .long)
        #expect(money(row.gain) == "35000.00")
        #expect(gains.totals.map(\.year) == [2024, 2025])
        #expect(money(gains.totals[1].longTerm) == "35000.00")
        #expect(money(gains.totals[1].shortTerm) == "0.00")
        #expect(money(gains.total) == "70000.00")
        // A period: only 2025.
        let only2025 = reports(l).gains(since: day("2025-01-01"), until: day("2025-12-31T23:59:59.999Z"), timeZone: utc)
        #expect(only2025.rows.map(\.disposal.transactionId) == [sale.id])
    }

    @Test func holdingPeriodCountsLocalCalendarDays() {
        let a = day("2024-01-01T12:00:00Z")
        #expect(HoldingTerm.of(acquired: a, disposed: day("2024-12-31T00:00:00Z"), in: utc) == .short)  // 365 days
        #expect(HoldingTerm.of(acquired: a, disposed: day("2025-01-01T00:00:00Z"), in: utc) == .long)  // 366 days
        // In Tokyo, 2024-12-31T20:00Z is already 2025-01-01: 366 local days.
        let tokyo = TimeZone(identifier: "Asia/Tokyo")!
        #expect(HoldingTerm.of(acquired: day("2024-01-01T00:00:00Z"), disposed: day("2024-12-31T20:00:00Z"), in: tokyo) == .long)
        #expect(HoldingTerm.of(acquired: day("2024-01-01T00:00:00Z"), disposed: day("2024-12-31T20:00:00Z"), in: utc) == .short)
    }

    /// Same-date buys: FIFO takes the earlier-recorded first, LIFO the later-recorded; HIFO the
    /// higher unit cost, then the older, then the earlier-recorded.
    @Test func tieRules() throws {
        let a = record(.buy, "bitcoin", "1", price: "100", fee: "0", on: "2024-01-01")
        let b = record(.buy, "bitcoin", "1", price: "100", fee: "0", on: "2024-01-01")
        let c = record(.buy, "bitcoin", "1", price: "100", fee: "0", on: "2023-12-01")
        let sell = record(.sell, "bitcoin", "1", price: "100", fee: "0", on: "2024-02-01")
        func first(_ m: CostBasisMethod, _ records: [Transaction]) throws -> UUID? {
            try #require(ledger(book(records, method: m)).disposals.first?.parts.first).source
        }
        #expect(try first(.fifo, [a, b, sell]) == a.id)
        #expect(try first(.lifo, [a, b, sell]) == b.id)
        #expect(try first(.hifo, [a, b, sell]) == a.id)
        // Equal unit costs under HIFO: the older acquisition first, whatever the recording order.
        #expect(try first(.hifo, [a, b, c, sell]) == c.id)
        // A higher unit cost wins over an older date; the fee counts in the unit cost.
        let dear = record(.buy, "bitcoin", "1", price: "100", fee: "1", on: "2024-01-15")
        #expect(try first(.hifo, [a, c, dear, sell]) == dear.id)
    }

    @Test func aSplitScalesEveryOpenLotAndKeepsBases() throws {
        let records = [
            record(.buy, "AAPL", "1", price: "300", fee: "0", on: "2024-01-01"),
            record(.buy, "AAPL", "1", price: "600", fee: "0", on: "2024-02-01"),
            record(.buy, "AAPL", "1", price: "900", fee: "0", on: "2024-03-01"),
            record(.split, "AAPL", "1", price: "3", on: "2024-04-01"),  // 1:3
        ]
        var b = book(records, method: .fifo)
        b.assets = [Asset(id: "AAPL", name: "Apple", type: .stock, createdDate: day("2023-01-01"))]
        for m in CostBasisMethod.allCases {
            b.portfolios[0].costBasisMethod = m
            let p = try #require(ledger(b).positions[key("AAPL")])
            // The pool rounds 3 × 1/3 once: 1; the lots share that rounding and add up to it.
            #expect(p.lots.quantity == fixed("1"))
            #expect(money(p.lots.costBasis) == "1800.00")
            if m != .average {
                let lots = p.lots.byAcquisition
                #expect(lots.map(\.quantity.text) == ["0.333333333333333333", "0.333333333333333334", "0.333333333333333333"])
                #expect(lots.map { money($0.basis) } == ["300.00", "600.00", "900.00"])
                #expect(lots.reduce(Fixed18.zero) { (try? $0.adding($1.quantity)) ?? $0 } == fixed("1"))
            }
        }
        // A sale of everything closes under every method: the lots hold exactly what the pool holds.
        var closing = b
        closing.transactions.append(record(.sell, "AAPL", "1", price: "2000", fee: "0", on: "2024-05-01"))
        for m in CostBasisMethod.allCases {
            closing.portfolios[0].costBasisMethod = m
            let l = ledger(closing)
            #expect(l.positions[key("AAPL")]?.isOpen == false)
            #expect(money(l.totals(of: "main").realized) == "200.00")
        }
    }

    /// A move carries the very lots its transfer-out took, with their original dates and bases; in a
    /// HIFO destination they take their place by unit cost.
    @Test func aMoveCarriesItsLots() throws {
        let buys = [
            record(.buy, "bitcoin", "1", price: "30000", fee: "0", on: "2024-01-01"),
            record(.buy, "bitcoin", "1", price: "50000", fee: "0", on: "2024-02-01"),
        ]
        let move = moveLegs("bitcoin", "1.5", from: "main", to: "trading", on: "2024-06-01")
        let own = record(.buy, "bitcoin", "1", price: "40000", fee: "0", on: "2024-03-01", portfolio: "trading")
        let b = book(buys + [own] + move, method: .fifo, others: [Portfolio(name: "trading", costBasisMethod: .hifo)])
        let l = ledger(b)
        let moved = try #require(l.positions[key("bitcoin", in: "trading")]).lots
        #expect(moved.quantity == fixed("2.5"))
        // HIFO order: 50000 (from main, 2024-02-01), 40000 (own), 30000 (from main, 2024-01-01).
        #expect(moved.open.map(\.source) == [buys[1].id, own.id, buys[0].id])
        #expect(moved.open.map(\.acquired) == [day("2024-02-01"), day("2024-03-01"), day("2024-01-01")])
        #expect(moved.open.map { money($0.basis) } == ["25000.00", "40000.00", "30000.00"])
        let left = try #require(l.positions[key("bitcoin")]).lots
        #expect(left.open.map(\.source) == [buys[1].id])
        #expect(money(left.costBasis) == "25000.00")
        // Nothing realized by the move.
        #expect(l.totals(of: "main").realized == .zero)
        // From an average pool the units arrive as one lot of the move's date, made by the transfer-in.
        var fromPool = b
        fromPool.portfolios[0].costBasisMethod = .average
        fromPool.portfolios[1].costBasisMethod = .fifo
        let arrived = try #require(ledger(fromPool).positions[key("bitcoin", in: "trading")]).lots.byAcquisition
        #expect(arrived.map(\.acquired) == [day("2024-03-01"), day("2024-06-01")])
        #expect(arrived.last?.source == move[1].id)
        #expect(money(arrived.last?.basis) == "60000.00")
    }

    /// Changing the method never makes a valid history invalid, and realized − open basis stays
    /// (realized + unrealized at any price), less the basis a transfer-out took away, which the
    /// method picks too.
    @Test func everyMethodKeepsQuantitiesAndTheSumOfBases() throws {
        let records = Self.exampleJ + [
            record(.transferOut, "bitcoin", "0.25", fee: "0.01", on: "2024-04-02"),
            record(.adjustment, "bitcoin", "-0.05", on: "2024-04-03"),
            record(.reward, "bitcoin", "0.1", price: "61000", on: "2024-04-04"),
        ] + swapLegs("bitcoin", "0.2", "ethereum", "4", value: "12000", fee: "5", on: "2024-04-05")
        var sums: Set<String> = []
        for m in CostBasisMethod.allCases {
            let l = ledger(book(records, method: m))
            let p = try #require(l.positions[key("bitcoin")])
            #expect(p.lots.quantity == fixed("1.09"))
            let t = l.totals(of: "main")
            sums.insert(money(try t.realized - p.costBasis + t.netDeposits) ?? "")
        }
        #expect(sums.count == 1, "\(sums)")
    }

    /// An edit of an earlier record changes which lots a later sale takes.
    @Test func anEditChangesWhichLotsALaterSaleTakes() throws {
        var records = Self.exampleJ
        let l1 = ledger(book(records, method: .fifo))
        #expect(l1.disposals.first?.parts.first?.source == records[0].id)
        records[0].date = day("2024-02-15")  // the 30000 lot is now the second oldest
        let l2 = ledger(book(records, method: .fifo))
        #expect(l2.disposals.first?.parts.map(\.source) == [records[1].id, records[0].id])
        #expect(money(l2.disposals.first?.basis) == "65000.00")
    }

    @Test func explainKeepsOneRecordsEffect() throws {
        let b = book(Self.exampleJ, method: .lifo)
        var options = b.ledgerOptions
        options.explaining = Self.exampleJ[3].id
        let e = try #require(b.checked(now: now, options: options).ledger.explanation)
        #expect(e.method == .lifo)
        #expect(e.before.count == 3)
        #expect(e.after.map(\.source) == [Self.exampleJ[0].id, Self.exampleJ[1].id])
        #expect(e.disposals.first.map { money($0.gain) } == "25000.00")
    }

    @Test func methodNamesAreCaseInsensitive() {
        #expect(CostBasisMethod(name: "FIFO") == .fifo)
        #expect(CostBasisMethod(name: "Hifo") == .hifo)
        #expect(CostBasisMethod(name: "fifo2") == nil)
    }
}
