import Foundation
import PortfolioCore
import Testing

/// The worked examples E, F and G of `assets.md`, to the cent, through the write gate
/// (`Book.adding`), the replay (`Book.checked`) and the reports, and each kind's refusals.
@Suite struct KindsExampleTests {
    let now = day("2024-12-31")

    /// Adds `records` through the write gate and returns the ledger of the result (which must break no rule).
    func add(_ records: [Transaction], to book: inout Book, sourceLocation: SourceLocation = #_sourceLocation) throws -> Ledger {
        book = try book.adding(records, now: now)
        let checked = book.checked(now: now)
        #expect(checked.problems.isEmpty, "\(checked.problems)", sourceLocation: sourceLocation)
        return checked.ledger
    }

    func add(_ record: Transaction, to book: inout Book, sourceLocation: SourceLocation = #_sourceLocation) throws -> Ledger {
        try add([record], to: &book, sourceLocation: sourceLocation)
    }

    func reports(_ ledger: Ledger, _ book: Book, prices: [Quote] = []) -> Reports {
        Reports(ledger: ledger, prices: PriceBook(manual: prices), now: now) { id in
            book.asset(id: id).map(AssetLabel.init(asset:)) ?? AssetLabel.unknown(id)
        }
    }

    // MARK: E. Transfers and a reward

    @Test func exampleETransfersAndAReward() throws {
        var book = Book()
        let eth = key("ethereum")

        // 1. buy 2 ETH @ 1000, fee 10 → qty 2, basis 2010, avg 1005
        var ledger = try add(record(.buy, "ethereum", "2", price: "1000", fee: "10", on: "2024-01-01"), to: &book)
        var p = try #require(ledger.positions[eth])
        #expect(DecimalFormatting.exact(p.quantity) == "2")
        #expect(DecimalFormatting.money(p.costBasis) == "2010.00")
        #expect(DecimalFormatting.price(try #require(p.averageCost)) == "1005")
        let basisBeforeTransfer = p.costBasis

        // 2. transfer-out 0.5 ETH, fee 0.01 ETH → 502.50 of basis leaves, 10.05 realized loss;
        //    qty 1.49, basis 1497.45, avg 1005
        ledger = try add(record(.transferOut, "ethereum", "0.5", fee: "0.01", on: "2024-02-01"), to: &book)
        p = try #require(ledger.positions[eth])
        #expect(DecimalFormatting.exact(p.quantity) == "1.49")
        #expect(DecimalFormatting.money(p.costBasis) == "1497.45")
        #expect(DecimalFormatting.price(try #require(p.averageCost)) == "1005")
        #expect(DecimalFormatting.money(ledger.realizedPnL) == "-10.05")
        #expect(DecimalFormatting.money(ledger.closedCost) == "10.05")
        let left = try basisBeforeTransfer - p.costBasis - ledger.closedCost
        #expect(DecimalFormatting.money(left) == "502.50")
        #expect(ledger.closed.isEmpty)

        // 3. reward 0.01 ETH @ 3000 → income 30.00; qty 1.5, basis 1527.45, avg 1018.3
        ledger = try add(record(.reward, "ethereum", "0.01", price: "3000", on: "2024-03-01"), to: &book)
        p = try #require(ledger.positions[eth])
        #expect(DecimalFormatting.exact(p.quantity) == "1.5")
        #expect(DecimalFormatting.money(p.costBasis) == "1527.45")
        #expect(DecimalFormatting.price(try #require(p.averageCost)) == "1018.3")
        #expect(DecimalFormatting.money(try ledger.totals(for: nil).income) == "30.00")
        #expect(DecimalFormatting.money(ledger.realizedPnL) == "-10.05")

        // 4. transfer-in 1 ETH, cost 1500 → qty 2.5, basis 3027.45, avg 1210.98
        ledger = try add(record(.transferIn, "ethereum", "1", price: "1500", on: "2024-04-01"), to: &book)
        p = try #require(ledger.positions[eth])
        #expect(DecimalFormatting.exact(p.quantity) == "2.5")
        #expect(DecimalFormatting.money(p.costBasis) == "3027.45")
        #expect(DecimalFormatting.price(try #require(p.averageCost)) == "1210.98")
        let realizedBeforeSale = ledger.realizedPnL
        let basisBeforeSale = p.costBasis

        // 5. sell 2.5 ETH @ 3000, fee 15 → proceeds 7485, realized 4457.55, cycle closed
        ledger = try add(record(.sell, "ethereum", "2.5", price: "3000", fee: "15", on: "2024-05-01"), to: &book)
        p = try #require(ledger.positions[eth])
        #expect(p.quantity == 0 && p.costBasis == .zero && !p.isOpen)
        let gain = try ledger.realizedPnL - realizedBeforeSale
        #expect(DecimalFormatting.money(gain) == "4457.55")
        #expect(DecimalFormatting.money(try gain + basisBeforeSale) == "7485.00")

        // Summary: realizedPnL 4447.50, income 30.00, totalPnL 4477.50, totalClosedCost 3037.50.
        let r = reports(ledger, book)
        let s = r.summary()
        #expect(DecimalFormatting.money(s.realizedPnL) == "4447.50")
        #expect(DecimalFormatting.money(s.income) == "30.00")
        #expect(DecimalFormatting.money(s.taxWithheld) == "0.00")
        #expect(DecimalFormatting.money(s.totalPnL) == "4477.50")
        #expect(DecimalFormatting.money(s.totalClosedCost) == "3037.50")
        #expect(DecimalFormatting.money(s.totalOpenCost) == "0.00")
        #expect(DecimalFormatting.money(s.unrealizedPnL) == "0.00")
        // Not printed by the spec, but follows from it: 4477.50 ÷ 3037.50 × 100.
        #expect(DecimalFormatting.percent(try #require(s.totalPnLPercentage)) == "147.41")
        #expect(s.holdingsCount == 0)

        // Closed cycle: totalQuantity 3.01, avgCostPrice 1176.07973422, avgSellPrice 3000,
        // totalCost 3037.50, realizedPnL 4447.50, realizedPnLPercentage 146.42.
        let closed = r.closed()
        #expect(closed.count == 1)
        let c = try #require(closed.first?.position)
        #expect(c.portfolio == "main" && c.assetId == "ethereum")
        #expect(c.totalQuantity.map(DecimalFormatting.exact) == "3.01")
        #expect(c.avgCostPrice.map(DecimalFormatting.price) == "1176.07973422")
        #expect(DecimalFormatting.price(try #require(c.avgSellPrice)) == "3000")
        #expect(DecimalFormatting.money(c.totalCost) == "3037.50")
        #expect(DecimalFormatting.money(c.realizedPnL) == "4447.50")
        #expect(DecimalFormatting.percent(try #require(c.realizedPnLPercentage)) == "146.42")
        #expect(c.openedDate == day("2024-01-01") && c.closedDate == day("2024-05-01"))

        // The income report: one reward row, its gross its value, no tax.
        let income = r.income()
        #expect(income.rows.count == 1)
        let row = try #require(income.rows.first)
        #expect(row.type == .reward && row.assetId == "ethereum" && row.date == day("2024-03-01"))
        #expect(DecimalFormatting.money(row.gross) == "30.00")
        #expect(DecimalFormatting.money(row.taxWithheld) == "0.00")
        #expect(DecimalFormatting.money(row.net) == "30.00")
        #expect(DecimalFormatting.money(income.totals.net) == "30.00")
    }

    // MARK: F. A stock: dividend, split, adjustment

    @Test func exampleFAStockWithDividendSplitAndAdjustment() throws {
        let apple = Asset(id: "AAPL", name: "Apple Inc.", type: .stock, currency: "USD", market: "NASDAQ", createdDate: day("2024-01-01"))
        var book = Book(assets: [apple])
        let aapl = key("AAPL")

        // 1. buy 10 AAPL @ 180, fee 1 → basis 1801
        var ledger = try add(record(.buy, "AAPL", "10", price: "180", fee: "1", on: "2024-01-02"), to: &book)
        var p = try #require(ledger.positions[aapl])
        #expect(DecimalFormatting.exact(p.quantity) == "10")
        #expect(DecimalFormatting.money(p.costBasis) == "1801.00")

        // 2. dividend AAPL 2.40, fee 0.36 → income 2.04, taxWithheld 0.36
        ledger = try add(record(.dividend, "AAPL", "2.40", fee: "0.36", on: "2024-02-15"), to: &book)
        p = try #require(ledger.positions[aapl])
        #expect(DecimalFormatting.exact(p.quantity) == "10")
        #expect(DecimalFormatting.money(p.costBasis) == "1801.00")
        var totals = try ledger.totals(for: nil)
        #expect(DecimalFormatting.money(totals.income) == "2.04")
        #expect(DecimalFormatting.money(totals.taxWithheld) == "0.36")

        // 3. split AAPL 4 → qty 40, basis 1801, avg 45.025
        ledger = try add(record(.split, "AAPL", "4", on: "2024-06-10"), to: &book)
        p = try #require(ledger.positions[aapl])
        #expect(p.quantity == 40)
        #expect(DecimalFormatting.money(p.costBasis) == "1801.00")
        #expect(DecimalFormatting.price(try #require(p.averageCost)) == "45.025")
        let basisBeforeSale = p.costBasis

        // 4. sell 10 AAPL @ 200, fee 1 → basisSold 450.25, realized 1548.75
        ledger = try add(record(.sell, "AAPL", "10", price: "200", fee: "1", on: "2024-07-01"), to: &book)
        p = try #require(ledger.positions[aapl])
        #expect(DecimalFormatting.money(try basisBeforeSale - p.costBasis) == "450.25")
        #expect(DecimalFormatting.money(ledger.realizedPnL) == "1548.75")
        let realizedBeforeAdjustment = ledger.realizedPnL

        // 5. adjustment AAPL -0.5 → realized −22.5125
        ledger = try add(record(.adjustment, "AAPL", "-0.5", on: "2024-08-01"), to: &book)
        #expect(try (ledger.realizedPnL - realizedBeforeAdjustment).text == "-22.5125")
        #expect(ledger.closed.isEmpty)

        // With AAPL at 210: holding qty 29.5, avgCost 45.025, totalCost 1328.24, value 6195.00, profitLoss 4866.76.
        book.manualPrices = [Quote(coinId: "AAPL", price: 210, time: day("2024-08-02"), source: .manual)]
        let r = reports(ledger, book, prices: book.manualPrices)
        let holdings = r.holdings()
        #expect(holdings.holdings.count == 1)
        let h = try #require(holdings.holdings.first)
        #expect(h.asset == AssetLabel(id: "AAPL", symbol: "AAPL", name: "Apple Inc.", type: .stock))
        #expect(DecimalFormatting.exact(h.totalAmount) == "29.5")
        #expect(DecimalFormatting.price(h.avgCost) == "45.025")
        #expect(DecimalFormatting.money(h.totalCost) == "1328.24")
        #expect(DecimalFormatting.money(try #require(h.currentValue)) == "6195.00")
        #expect(DecimalFormatting.money(try #require(h.profitLoss)) == "4866.76")
        #expect(!h.stale)

        // Summary: realizedPnL 1526.24, income 2.04, totalPnL 6395.04, totalPnLPercentage 355.08.
        let s = r.summary()
        #expect(DecimalFormatting.money(s.realizedPnL) == "1526.24")
        #expect(DecimalFormatting.money(s.income) == "2.04")
        #expect(DecimalFormatting.money(s.taxWithheld) == "0.36")
        #expect(DecimalFormatting.money(s.totalPnL) == "6395.04")
        #expect(DecimalFormatting.percent(try #require(s.totalPnLPercentage)) == "355.08")
        #expect(DecimalFormatting.money(s.totalValue) == "6195.00")
        #expect(DecimalFormatting.money(s.totalOpenCost) == "1328.24")
        #expect(DecimalFormatting.money(s.unrealizedPnL) == "4866.76")
        // 450.25 sold + 22.5125 lost.
        #expect(DecimalFormatting.money(s.totalClosedCost) == "472.76")

        // The income report: the dividend, gross, tax and net.
        let income = r.income()
        #expect(income.rows.count == 1)
        let row = try #require(income.rows.first)
        #expect(row.type == .dividend && row.assetId == "AAPL")
        #expect(DecimalFormatting.money(row.gross) == "2.40")
        #expect(DecimalFormatting.money(row.taxWithheld) == "0.36")
        #expect(DecimalFormatting.money(row.net) == "2.04")
        totals = try ledger.totals(for: ["main"])
        #expect(DecimalFormatting.money(totals.realized) == "1526.24")
    }

    // MARK: G. A swap

    @Test func exampleGASwap() throws {
        var book = Book()
        _ = try add([record(.buy, "bitcoin", "1", price: "40000", on: "2024-01-01"),
                     record(.buy, "ethereum", "10", price: "2000", on: "2024-02-01")], to: &book)
        let legs = swapLegs("bitcoin", "0.5", "ethereum", "8", value: "30000", fee: "30", on: "2024-03-01")
        #expect(legs[0].priceValue == fixed("60000") && legs[1].priceValue == fixed("3750"))
        let ledger = try add(legs, to: &book)

        // The BTC leg realizes 9970.00; ETH qty 18, basis 50000, avg 2777.77777778.
        #expect(DecimalFormatting.money(ledger.realizedPnL) == "9970.00")
        let btc = try #require(ledger.positions[key("bitcoin")])
        #expect(DecimalFormatting.exact(btc.quantity) == "0.5")
        #expect(DecimalFormatting.money(btc.costBasis) == "20000.00")
        let eth = try #require(ledger.positions[key("ethereum")])
        #expect(DecimalFormatting.exact(eth.quantity) == "18")
        #expect(DecimalFormatting.money(eth.costBasis) == "50000.00")
        #expect(DecimalFormatting.price(try #require(eth.averageCost)) == "2777.77777778")
        #expect(ledger.closed.isEmpty)

        // Deleting either leg deletes both.
        for index in [2, 3] {
            let both = book.legs(of: index)
            #expect(both == [2, 3])
            let after = try book.deleting(Set(both.map { book.transactions[$0].id }), now: now)
            #expect(after.transactions.map(\.id) == Array(book.transactions.prefix(2)).map(\.id))
            #expect(after.transactions.allSatisfy { $0.linkedId == nil })
            let replayed = after.checked(now: now)
            #expect(replayed.problems.isEmpty)
            #expect(replayed.ledger.positions[key("bitcoin")]?.quantity == 1)
            #expect(replayed.ledger.positions[key("ethereum")]?.quantity == 10)
            #expect(replayed.ledger.realizedPnL == .zero)
        }
        // A record without a link is only itself.
        #expect(book.legs(of: 0) == [0])
    }

    // MARK: Refusals of each kind, through the write gate

    struct Refusal: CustomTestStringConvertible, Sendable {
        let name: String
        /// The book before, the records added, and the error expected.
        let make: @Sendable () -> (before: [Transaction], added: [Transaction], expected: PortfolioError)
        var testDescription: String { name }
    }

    static let refusals: [Refusal] = [
        Refusal(name: "transfer-out of more than held, plus its fee") {
            let before = [record(.buy, "ethereum", "2", price: "1000", fee: "10", on: "2024-01-01"),
                          record(.transferOut, "ethereum", "0.5", fee: "0.01", on: "2024-02-01")]
            let out = record(.transferOut, "ethereum", "2", fee: "0.01", on: "2024-03-01")
            return (before, [out], .insufficientQuantity(shortfall(.transferOut, "ethereum", held: dec("1.49"), requested: 2,
                                                                   fee: dec("0.01"), date: out.date, id: out.id)))
        },
        Refusal(name: "transfer-out whose fee alone tips it over") {
            let before = [record(.buy, "ethereum", "1.49", price: "1000", on: "2024-01-01")]
            let out = record(.transferOut, "ethereum", "1.49", fee: "0.01", on: "2024-03-01")
            return (before, [out], .insufficientQuantity(shortfall(.transferOut, "ethereum", held: dec("1.49"), requested: dec("1.49"),
                                                                   fee: dec("0.01"), date: out.date, id: out.id)))
        },
        Refusal(name: "negative adjustment below zero") {
            let before = [record(.buy, "bitcoin", "1", price: "100", on: "2024-01-01")]
            let adj = record(.adjustment, "bitcoin", "-2", on: "2024-02-01")
            return (before, [adj], .insufficientQuantity(shortfall(.adjustment, "bitcoin", held: 1, requested: 2, date: adj.date, id: adj.id)))
        },
        Refusal(name: "negative adjustment of an asset never held") {
            let adj = record(.adjustment, "solana", "-0.5", on: "2024-02-01")
            return ([], [adj], .insufficientQuantity(shortfall(.adjustment, "solana", held: 0, requested: dec("0.5"), date: adj.date, id: adj.id)))
        },
        Refusal(name: "swap whose disposal leg oversells") {
            let before = [record(.buy, "bitcoin", "0.5", price: "40000", on: "2024-01-01")]
            let legs = swapLegs("bitcoin", "1", "ethereum", "8", value: "30000", on: "2024-03-01")
            return (before, legs, .insufficientQuantity(shortfall(.sell, "bitcoin", held: dec("0.5"), requested: 1, date: legs[0].date,
                                                                  id: legs[0].id, linked: true)))
        },
        Refusal(name: "move of more than the source holds") {
            let before = [record(.buy, "bitcoin", "0.5", price: "40000", on: "2024-01-01")]
            let legs = moveLegs("bitcoin", "0.6", from: "main", to: "cold", on: "2024-03-01")
            return (before, legs, .insufficientQuantity(shortfall(.transferOut, "bitcoin", held: dec("0.5"), requested: dec("0.6"),
                                                                  date: legs[0].date, id: legs[0].id, linked: true)))
        },
        Refusal(name: "dividend tax withheld above gross") {
            ([], [record(.dividend, "AAPL", "1", fee: "1.01", on: "2024-02-01")], .taxAboveGross)
        },
        Refusal(name: "interest tax withheld above gross") {
            ([], [record(.interest, "bitcoin", "0.000000000000000001", fee: "0.000000000000000002", on: "2024-02-01")], .taxAboveGross)
        },
        Refusal(name: "buy without price or total") {
            ([], [record(.buy, "bitcoin", "1", on: "2024-02-01")], .priceMissing(.buy))
        },
        Refusal(name: "sell without price or total") {
            ([record(.buy, "bitcoin", "1", price: "1", on: "2024-01-01")], [record(.sell, "bitcoin", "1", on: "2024-02-01")], .priceMissing(.sell))
        },
        Refusal(name: "transfer-in without cost and without a move") {
            ([], [record(.transferIn, "bitcoin", "1", on: "2024-02-01")], .priceMissing(.transferIn))
        },
        Refusal(name: "reward without its value") {
            ([], [record(.reward, "ethereum", "1", on: "2024-02-01")], .priceMissing(.reward))
        },
        Refusal(name: "buy with a zero total") {
            ([], [record(.buy, "bitcoin", "1", total: "0", on: "2024-02-01")], .priceNotPositive)
        },
        Refusal(name: "sell at a zero price") {
            ([record(.buy, "bitcoin", "1", price: "1", on: "2024-01-01")], [record(.sell, "bitcoin", "1", price: "0", on: "2024-02-01")],
             .priceNotPositive)
        },
        Refusal(name: "split NEW:OLD with OLD zero") {
            ([record(.buy, "bitcoin", "1", price: "1", on: "2024-01-01")], [record(.split, "bitcoin", "1", price: "0", on: "2024-02-01")],
             .priceNotPositive)
        },
        Refusal(name: "a move's transfer-in with no transfer-out") {
            let link = UUID()
            let into = record(.transferIn, "bitcoin", "1", on: "2024-02-01", portfolio: "cold", linkedId: link)
            return ([], [into], .unlinkedTransferIn(id: into.id))
        },
        Refusal(name: "back-dated transfer-out that breaks a later sell") {
            let sell = record(.sell, "bitcoin", "1", price: "200", on: "2024-02-01")
            let before = [record(.buy, "bitcoin", "1", price: "100", on: "2024-01-10"), sell]
            return (before, [record(.transferOut, "bitcoin", "0.4", fee: "0.1", on: "2024-01-20")],
                    .breaksLater(shortfall(.sell, "bitcoin", held: dec("0.5"), requested: 1, date: sell.date, id: sell.id)))
        },
        Refusal(name: "back-dated negative adjustment that breaks a later transfer-out with a fee") {
            let out = record(.transferOut, "ethereum", "1", fee: "0.5", on: "2024-03-01")
            let before = [record(.buy, "ethereum", "2", price: "100", on: "2024-01-10"), out]
            return (before, [record(.adjustment, "ethereum", "-1", on: "2024-02-01")],
                    .breaksLater(shortfall(.transferOut, "ethereum", held: 1, requested: 1, fee: dec("0.5"), date: out.date, id: out.id)))
        },
        Refusal(name: "back-dated swap that breaks a later move") {
            let move = moveLegs("bitcoin", "1", from: "main", to: "cold", on: "2024-03-01")
            let before = [record(.buy, "bitcoin", "1", price: "100", on: "2024-01-10")] + move
            return (before, swapLegs("bitcoin", "0.25", "ethereum", "4", value: "10000", on: "2024-02-01"),
                    .breaksLater(shortfall(.transferOut, "bitcoin", held: dec("0.75"), requested: 1, date: move[0].date, id: move[0].id,
                                           linked: true)))
        },
    ] + TransactionType.allCases.map { type in
        Refusal(name: "zero amount: \(type.rawValue)") {
            let price: String? = switch KindRule.of(type).price {
            case .none, .splitDivisor: nil
            case .positive, .nonNegative: "1"
            }
            return ([record(.buy, "bitcoin", "1", price: "1", on: "2024-01-01")],
                    [record(type, KindRule.of(type).asset == .none ? "" : "bitcoin", "0", price: price, on: "2024-02-01")],
                    .amountNotPositive)
        }
    }

    static let twoPortfolios = [Portfolio(name: "main"), Portfolio(name: "cold")]

    @Test(arguments: refusals)
    func refusal(_ c: Refusal) throws {
        let (before, added, expected) = c.make()
        let book = Book(transactions: before, portfolios: Self.twoPortfolios,
                        assets: [Asset(id: "AAPL", name: "Apple Inc.", type: .stock, createdDate: day("2024-01-01"))])
        #expect(book.checked(now: now).problems.isEmpty)
        #expect(throws: expected) { _ = try book.adding(added, now: now) }
    }

    @Test func messagesNameTheKind() {
        let held = dec("1.49")
        let out = PortfolioError.insufficientQuantity(shortfall(.transferOut, "ethereum", held: held, requested: 2, fee: dec("0.01"),
                                                                date: day("2024-03-01"), id: UUID()))
        #expect(out.description(names: .plain) == "You only own 1.49 ethereum. Cannot transfer out 2 (plus a fee of 0.01).")
        let swap = PortfolioError.insufficientQuantity(shortfall(.sell, "bitcoin", held: dec("0.5"), requested: 1,
                                                                 date: day("2024-03-01"), id: UUID(), linked: true))
        #expect(swap.description(names: .plain) == "You only own 0.5 bitcoin. Cannot swap 1.")
        let move = PortfolioError.insufficientQuantity(shortfall(.transferOut, "bitcoin", held: dec("0.5"), requested: dec("0.6"),
                                                                 date: day("2024-03-01"), id: UUID(), linked: true))
        #expect(move.description(names: .plain) == "You only own 0.5 bitcoin. Cannot move 0.6.")
    }

    @Test func transferOutRefusalReadsAsTheSpecSays() throws {
        var book = Book()
        _ = try add([record(.buy, "ethereum", "2", price: "1000", fee: "10", on: "2024-01-01"),
                     record(.transferOut, "ethereum", "0.5", fee: "0.01", on: "2024-02-01")], to: &book)
        do {
            _ = try book.adding([record(.transferOut, "ethereum", "2", fee: "0.01", on: "2024-03-01")], now: now)
            Issue.record("an oversized transfer-out was admitted")
        } catch let error as PortfolioError {
            #expect(error.description(names: .plain) == "You only own 1.49 ethereum. Cannot transfer out 2 (plus a fee of 0.01).")
        }
    }

    // MARK: Moves between portfolios

    @Test func moveOfAWholePositionMovesItsBasisExactlyAndClosesTheSourceCycle() throws {
        var book = Book(portfolios: Self.twoPortfolios)
        _ = try add(record(.buy, "ethereum", "2", price: "1000", fee: "10", on: "2024-01-01"), to: &book)
        let ledger = try add(moveLegs("ethereum", "2", from: "main", to: "cold", on: "2024-02-01"), to: &book)

        let source = try #require(ledger.positions[key("ethereum")])
        #expect(source.quantity == 0 && source.costBasis == .zero)
        let target = try #require(ledger.positions[key("ethereum", in: "cold")])
        #expect(target.quantity == 2)
        #expect(target.costBasis == Exact36(fixed("2010")))
        #expect(DecimalFormatting.price(try #require(target.averageCost)) == "1005")
        for name in ["main", "cold"] {
            let t = try ledger.totals(for: [name])
            #expect(t.realized == .zero && t.realizedBasis == .zero && t.income == .zero, "\(name)")
        }
        // The whole move closes the source's cycle: realized 0, percentage nil.
        #expect(ledger.closed.count == 1)
        let c = try #require(ledger.closed.first)
        #expect(c.portfolio == "main" && c.assetId == "ethereum")
        #expect(c.realizedPnL == .zero)
        #expect(c.realizedPnLPercentage == nil)
        #expect(c.totalCost == .zero)
        #expect(c.avgSellPrice == nil)
        #expect(c.totalQuantity.map(DecimalFormatting.exact) == "2")
        #expect(c.avgCostPrice.map(DecimalFormatting.price) == "1005")
        #expect(c.closedDate == day("2024-02-01"))

        // Reports: the target holds it; the summary sees no gain and no closed cost.
        let r = reports(ledger, book)
        let s = r.summary()
        #expect(s.realizedPnL == .zero && s.totalClosedCost == .zero)
        #expect(DecimalFormatting.money(s.totalOpenCost) == "2010.00")
        let byPortfolio = r.holdings(byPortfolio: true).holdings
        #expect(byPortfolio.map(\.portfolio) == ["cold"])
    }

    @Test func partialMoveSplitsTheBasisExactly() throws {
        var book = Book(portfolios: Self.twoPortfolios)
        // A non-terminating average: 200 over 3 units.
        _ = try add([record(.buy, "bitcoin", "1", price: "100", on: "2024-01-01"),
                     record(.buy, "bitcoin", "2", price: "50", on: "2024-01-02")], to: &book)
        let ledger = try add(moveLegs("bitcoin", "1", from: "main", to: "cold", on: "2024-02-01"), to: &book)
        let source = try #require(ledger.positions[key("bitcoin")])
        let target = try #require(ledger.positions[key("bitcoin", in: "cold")])
        #expect(source.quantity == 2 && target.quantity == 1)
        #expect(try source.costBasis + target.costBasis == Exact36(fixed("200")))
        #expect(DecimalFormatting.price(try #require(target.averageCost)) == "66.66666667")
        #expect(DecimalFormatting.price(try #require(source.averageCost)) == "66.66666667")
        #expect(ledger.realizedPnL == .zero && ledger.closedCost == .zero)
        #expect(ledger.closed.isEmpty)
        // Merged holdings add back to the whole.
        let merged = reports(ledger, book).holdings().holdings
        #expect(merged.count == 1)
        #expect(merged.first?.totalAmount == 3)
        #expect(merged.first?.totalCost == Exact36(fixed("200")))
        // Deleting the transfer-in deletes the move.
        let index = try #require(book.transactions.firstIndex { $0.type == .transferIn })
        let legs = book.legs(of: index)
        #expect(legs.count == 2)
        let after = try book.deleting(Set(legs.map { book.transactions[$0].id }), now: now)
        #expect(after.transactions.count == 2)
    }

    // MARK: Splits and payouts on what is not held

    @Test func reverseSplitNewOverOld() throws {
        var book = Book(assets: [Asset(id: "AAPL", name: "Apple Inc.", type: .stock, createdDate: day("2024-01-01"))])
        _ = try add(record(.buy, "AAPL", "300", price: "10", fee: "1", on: "2024-01-01"), to: &book)
        let ledger = try add(record(.split, "AAPL", "1", price: "3", on: "2024-02-01"), to: &book)
        let p = try #require(ledger.positions[key("AAPL")])
        #expect(p.quantity == 100)
        #expect(p.lots.quantity == fixed("100"))
        #expect(p.costBasis == Exact36(fixed("3001")))
        #expect(DecimalFormatting.price(try #require(p.averageCost)) == "30.01")
        #expect(ledger.realizedPnL == .zero)
    }

    @Test func splitOfAnAssetNotHeldChangesNothing() throws {
        var book = Book()
        _ = try add([record(.buy, "bitcoin", "1", price: "100", on: "2024-01-01"),
                     record(.buy, "solana", "5", price: "20", on: "2024-01-01"),
                     record(.sell, "solana", "5", price: "30", on: "2024-01-15")], to: &book)
        let before = book.checked(now: now).ledger
        // Never held, and held once but not now.
        let ledger = try add([record(.split, "dogecoin", "4", on: "2024-02-01"), record(.split, "solana", "1", price: "3", on: "2024-02-01")],
                             to: &book)
        #expect(ledger.positions[key("dogecoin")].map { $0.quantity == 0 && $0.costBasis == .zero } ?? true)
        #expect(ledger.openPositions.map(\.key) == [key("bitcoin")])
        #expect(ledger.positions[key("bitcoin")]?.quantity == 1)
        #expect(ledger.realizedPnL == before.realizedPnL && ledger.closedCost == before.closedCost)
        #expect(ledger.closed == before.closed)
        // The next cycle of solana starts from nothing, unscaled.
        let next = try add(record(.buy, "solana", "2", price: "10", on: "2024-03-01"), to: &book)
        #expect(next.positions[key("solana")]?.quantity == 2)
        #expect(next.positions[key("solana")]?.costBasis == Exact36(fixed("20")))
    }

    @Test func dividendAndInterestOnAnAssetNotHeldAreAllowed() throws {
        var book = Book(assets: [Asset(id: "AAPL", name: "Apple Inc.", type: .stock, createdDate: day("2024-01-01"))])
        let ledger = try add([record(.dividend, "AAPL", "5", fee: "0.75", on: "2024-02-01"),
                              record(.interest, "bitcoin", "1.5", on: "2024-02-02")], to: &book)
        #expect(ledger.openPositions.isEmpty)
        let t = try ledger.totals(for: nil)
        #expect(DecimalFormatting.money(t.income) == "5.75")
        #expect(DecimalFormatting.money(t.taxWithheld) == "0.75")
        #expect(ledger.income.map(\.type) == [.dividend, .interest])
        let s = reports(ledger, book).summary()
        #expect(DecimalFormatting.money(s.totalPnL) == "5.75")
        #expect(s.totalPnLPercentage == nil)
    }

    @Test func buyByTotalAloneIsAccepted() throws {
        var book = Book()
        let ledger = try add(record(.buy, "bitcoin", "3", total: "541.20", fee: "0.8", on: "2024-01-01"), to: &book)
        #expect(ledger.positions[key("bitcoin")]?.costBasis == Exact36(fixed("542")))
    }
}

/// The closed-positions statistics of a cycle (units acquired and sold, their money) are no
/// reason to refuse a record: a sum too large to keep becomes "too large to show".
@Suite struct CycleStatisticsTests {
    @Test func splitsThatOutgrowTheStatisticsAreStillAccepted() throws {
        // About 10^20 units bought and all but 10^-18 sold: the cycle has acquired about 10^20.
        var history = [
            record(.buy, "ACME", "99999999999999999999", price: "1", on: "2024-01-01"),
            record(.sell, "ACME", "99999999999999999998.999999999999999999", price: "1", on: "2024-01-02"),
        ]
        // Three 2:1 splits: the holding is 8 × 10^-18, the cycle's acquired units would be about
        // 8 × 10^20, more than is kept exactly.
        for d in 3...5 { history.append(record(.split, "ACME", "2", price: "1", on: "2024-01-0\(d)")) }
        var ledger = try Ledger.replay(history)
        let open = try #require(ledger.positions[key("ACME")])
        #expect(open.lots.quantity == fixed("0.000000000000000008"))
        #expect(open.cycleAcquired == nil)
        #expect(open.cycleSold == nil)

        history.append(record(.sell, "ACME", "0.000000000000000008", price: "1", on: "2024-01-06"))
        ledger = try Ledger.replay(history)
        let closed = try #require(ledger.closed.first)
        #expect(closed.totalQuantity == nil)
        #expect(closed.avgCostPrice == nil)
        #expect(closed.avgSellPrice == nil)
        // The books themselves stay exact.
        #expect(closed.totalCost == Exact36(fixed("99999999999999999999")))
    }
}
