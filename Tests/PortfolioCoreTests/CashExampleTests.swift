import Foundation
import Testing
@testable import PortfolioCore

/// Worked example H of `cash-currencies.md`, to the cent, and the rules of cash.
@Suite struct CashExampleTests {
    let now = day("2024-06-01T12:00:00Z")
    static let apple = Asset(id: "AAPL", name: "Apple Inc.", type: .stock, currency: "USD", createdDate: day("2023-12-01"))

    func brokerage(_ records: [Transaction] = []) -> Book {
        Book(transactions: records, portfolios: [Portfolio(name: "brokerage", trackCash: true)], assets: [Self.apple],
             defaultPortfolio: "brokerage")
    }

    func r(_ type: TransactionType, _ asset: String, _ amount: String, price: String? = nil, fee: String? = nil,
           on date: String) -> Transaction {
        record(type, asset, amount, price: price, fee: fee, on: date, portfolio: "brokerage")
    }

    func cash(_ ledger: Ledger) -> String {
        DecimalFormatting.money(ledger.cash[CashKey(portfolio: "brokerage", currency: "USD")] ?? .zero)
    }

    @Test func exampleHCash() throws {
        var book = brokerage()
        func add(_ t: Transaction) throws -> Ledger {
            book = try book.adding([t], now: now)
            let checked = book.checked(now: now)
            #expect(checked.problems.isEmpty, "\(checked.problems)")
            return checked.ledger
        }
        // 1. deposit 10000 (initial) → cash 10000
        #expect(cash(try add(r(.deposit, "", "10000", on: "2024-01-01"))) == "10000.00")
        // 2. buy 10 AAPL @ 180, fee 1 → cash 8199
        #expect(cash(try add(r(.buy, "AAPL", "10", price: "180", fee: "1", on: "2024-01-02"))) == "8199.00")
        // 3. dividend AAPL 2.40, fee 0.36 → cash 8201.04
        #expect(cash(try add(r(.dividend, "AAPL", "2.40", fee: "0.36", on: "2024-02-15"))) == "8201.04")
        // 4. withdraw 1000 → 7201.04
        #expect(cash(try add(r(.withdrawal, "", "1000", on: "2024-03-01"))) == "7201.04")
        // 5. interest 12.50 → 7213.54
        #expect(cash(try add(r(.interest, "", "12.50", fee: "0", on: "2024-03-02"))) == "7213.54")
        // 6. buy 50 AAPL @ 170 → refused (needs 8,500.00, 7,213.54 available)
        let tooMuch = r(.buy, "AAPL", "50", price: "170", fee: "0", on: "2024-04-01")
        #expect(throws: PortfolioError.insufficientCash(CashShortfall(
            type: .buy, portfolio: "brokerage", currency: "USD", date: day("2024-04-01"), id: tooMuch.id,
            needed: Exact36(fixed("8500")), available: Exact36(fixed("7213.54"))))) {
            _ = try book.adding([tooMuch], now: now)
        }
        #expect(PortfolioError.insufficientCash(CashShortfall(
            type: .buy, portfolio: "brokerage", currency: "USD", date: day("2024-04-01"), id: tooMuch.id,
            needed: Exact36(fixed("8500")), available: Exact36(fixed("7213.54")))).description
            == "Not enough USD cash in 'brokerage': the buy on 2024-04-01T00:00:00Z needs 8,500.00, 7,213.54 is available.")
        //    buy 40 AAPL @ 170 → cash 413.54; qty 50, basis 8601, avg 172.02
        var ledger = try add(r(.buy, "AAPL", "40", price: "170", fee: "0", on: "2024-04-01"))
        #expect(cash(ledger) == "413.54")
        var p = try #require(ledger.positions[key("AAPL", in: "brokerage")])
        #expect(p.quantity == 50)
        #expect(DecimalFormatting.money(p.costBasis) == "8601.00")
        #expect(DecimalFormatting.price(try #require(p.averageCost)) == "172.02")
        // 7. sell 20 AAPL @ 190, fee 1 → basisSold 3440.40, realized 358.60, cash 4212.54
        ledger = try add(r(.sell, "AAPL", "20", price: "190", fee: "1", on: "2024-05-01"))
        p = try #require(ledger.positions[key("AAPL", in: "brokerage")])
        #expect(DecimalFormatting.money(try Exact36(fixed("8601")) - p.costBasis) == "3440.40")
        #expect(DecimalFormatting.money(ledger.realizedPnL) == "358.60")
        #expect(cash(ledger) == "4212.54")

        // With AAPL at 200: holdings value 6000.00, totalCost 5160.60, unrealized 839.40; cashBalance
        // 4212.54; totalValue 10212.54; netDeposits 9000.00; income 14.54; totalPnL 1212.54.
        let prices = PriceBook(manual: [Quote(coinId: "AAPL", price: 200, time: day("2024-05-02"), source: .manual)])
        let reports = Reports(ledger: ledger, prices: prices, now: now, portfolios: ["brokerage"]) { _ in AssetLabel(asset: Self.apple) }
        let h = reports.holdings()
        #expect(DecimalFormatting.money(h.holdingsValue) == "6000.00")
        #expect(DecimalFormatting.money(h.totalCost) == "5160.60")
        #expect(DecimalFormatting.money(h.unrealizedPnL) == "839.40")
        #expect(h.cash == [CashLine(portfolio: nil, currency: "USD", balance: Exact36(fixed("4212.54")))])
        let s = reports.summary()
        #expect(s.cashBalance.map(DecimalFormatting.money) == "4212.54")
        #expect(DecimalFormatting.money(s.totalValue) == "10212.54")
        #expect(s.netDeposits.map(DecimalFormatting.money) == "9000.00")
        #expect(DecimalFormatting.money(s.income) == "14.54")
        #expect(DecimalFormatting.money(s.totalPnL) == "1212.54")
        #expect(try s.totalValue - #require(s.netDeposits) == s.totalPnL)
        #expect(s.fxEffect == .zero)
        #expect(s.totalPnLPercentage.map(DecimalFormatting.percent) == "13.47")
    }

    @Test func aDepositOnABuysDayPaysForIt() throws {
        // Recorded after the buy, but at the same instant: deposits replay first.
        let book = brokerage([r(.buy, "AAPL", "1", price: "100", fee: "0", on: "2024-01-02"),
                              r(.deposit, "", "100", on: "2024-01-02")])
        let checked = book.checked(now: now)
        #expect(checked.problems.isEmpty)
        #expect(cash(checked.ledger) == "0.00")
    }

    @Test func aBackDatedWithdrawalThatOverdrawsALaterBuyIsRefused() throws {
        let book = brokerage([r(.deposit, "", "1000", on: "2024-01-01"), r(.buy, "AAPL", "5", price: "180", fee: "0", on: "2024-03-01")])
        #expect(book.checked(now: now).problems.isEmpty)
        let early = r(.withdrawal, "", "500", on: "2024-02-01")
        #expect(throws: PortfolioError.insufficientCash(CashShortfall(
            type: .buy, portfolio: "brokerage", currency: "USD", date: day("2024-03-01"), id: book.transactions[1].id,
            needed: Exact36(fixed("900")), available: Exact36(fixed("500"))))) {
            _ = try book.adding([early], now: now)
        }
        // Deleting the deposit is refused too: the buy would overdraw.
        #expect(throws: PortfolioError.self) { _ = try book.deleting([book.transactions[0].id], now: now) }
    }

    @Test func cashInAPortfolioThatDoesNotTrackItIsRefused() {
        let book = Book(portfolios: [Portfolio(name: "main")])
        #expect(throws: PortfolioError.cashNotTracked("main")) {
            _ = try book.adding([record(.deposit, "", "10", on: "2024-01-01")], now: now)
        }
        // A buy in a portfolio without cash spends nothing.
        let ledger = Book(transactions: [record(.buy, "bitcoin", "1", price: "100", on: "2024-01-01")]).checked(now: now).ledger
        #expect(ledger.cash.isEmpty && ledger.cashMovements.isEmpty)
    }

    @Test func turningCashOnChecksTheWholeHistory() throws {
        var book = brokerage([r(.buy, "AAPL", "1", price: "100", fee: "0", on: "2024-01-02")])
        book.portfolios[0].trackCash = false
        #expect(book.checked(now: now).problems.isEmpty)
        var on = book
        on.portfolios[0].trackCash = true
        #expect(throws: PortfolioError.insufficientCash(CashShortfall(
            type: .buy, portfolio: "brokerage", currency: "USD", date: day("2024-01-02"), id: book.transactions[0].id,
            needed: Exact36(fixed("100")), available: .zero))) {
            try on.admit(from: book, now: now)
        }
        // With an opening deposit in the same write, it is accepted.
        on.add([r(.deposit, "", "100", on: "2024-01-01")])
        try on.admit(from: book, now: now)
    }

    @Test func aSwapSpendsOnlyItsFeeAndTransfersNoCash() throws {
        var records = [r(.deposit, "", "1000", on: "2024-01-01"), r(.buy, "AAPL", "2", price: "100", fee: "0", on: "2024-01-02")]
        records += swapLegs("AAPL", "1", "bitcoin", "0.01", value: "120", fee: "2", on: "2024-01-03", portfolio: "brokerage")
        records.append(r(.transferIn, "ethereum", "1", price: "2000", fee: "0", on: "2024-01-04"))
        let checked = brokerage(records).checked(now: now)
        #expect(checked.problems.isEmpty)
        #expect(cash(checked.ledger) == "798.00")
        #expect(checked.ledger.cashMovements.map(\.type) == [.deposit, .buy, .sell])
        // The transfer-in counts as money put in, at its basis.
        #expect(DecimalFormatting.money(checked.ledger.totals(of: "brokerage").netDeposits) == "3000.00")
    }
}
