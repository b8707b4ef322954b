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
        #expect(h.cash == [CashLine(portfolio: nil, currency: "USD", balance: Exact36(fixed("4212.54")), value: Exact36(fixed("4212.54")))])
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

/// Worked example I of `cash-currencies.md`: a EUR portfolio buying and selling in dollars.
@Suite struct CurrencyExampleTests {
    let now = day("2024-07-01T12:00:00Z")

    @Test func exampleICurrencies() throws {
        let apple = Asset(id: "AAPL", name: "Apple Inc.", type: .stock, currency: "USD", createdDate: day("2024-01-01"))
        var book = Book(portfolios: [Portfolio(name: "eu", baseCurrency: "EUR")], assets: [apple], defaultPortfolio: "eu")
        func r(_ type: TransactionType, _ asset: String, _ amount: String, price: String, fee: String, currency: String, fx: String?,
               on date: String) -> Transaction {
            Transaction(portfolio: "eu", type: type, assetId: asset, amount: fixed(amount), price: fixed(price), fee: fixed(fee),
                        currency: currency, fxRate: fx.map(fixed), date: day(date))
        }
        func add(_ t: Transaction) throws -> Ledger {
            book = try book.adding([t], now: now)
            let checked = book.checked(now: now)
            #expect(checked.problems.isEmpty, "\(checked.problems)")
            return checked.ledger
        }
        let btc = key("bitcoin", in: "eu")
        // 1. buy 1 BTC @ 40000 USD, fee 20 USD, fxRate 0.91 → basis 36418.20 EUR
        var ledger = try add(r(.buy, "bitcoin", "1", price: "40000", fee: "20", currency: "USD", fx: "0.91", on: "2024-01-10"))
        #expect(DecimalFormatting.money(try #require(ledger.positions[btc]).costBasis) == "36418.20")
        // 2. buy 0.5 BTC @ 62000 EUR → qty 1.5, basis 67418.20, avg 44945.46666667
        ledger = try add(r(.buy, "bitcoin", "0.5", price: "62000", fee: "0", currency: "EUR", fx: nil, on: "2024-03-10"))
        var p = try #require(ledger.positions[btc])
        #expect(p.quantity == dec("1.5"))
        #expect(DecimalFormatting.money(p.costBasis) == "67418.20")
        #expect(DecimalFormatting.price(try #require(p.averageCost)) == "44945.46666667")
        // 3. sell 0.5 BTC @ 70000 USD, fee 10 USD, fxRate 0.93 → proceeds 32540.70 EUR, basisSold 22472.73, realized 10067.97
        ledger = try add(r(.sell, "bitcoin", "0.5", price: "70000", fee: "10", currency: "USD", fx: "0.93", on: "2024-06-10"))
        p = try #require(ledger.positions[btc])
        #expect(DecimalFormatting.money(try Exact36(fixed("67418.2")) - p.costBasis) == "22472.73")
        #expect(DecimalFormatting.money(ledger.realizedPnL) == "10067.97")
        #expect(DecimalFormatting.money(try ledger.realizedPnL + (Exact36(fixed("67418.2")) - p.costBasis)) == "32540.70")
        // With BTC at 90000 EUR: value 90000.00, totalCost 44945.47, unrealized 45054.53.
        // AAPL bought 10 @ 180 with fxRate 0.92 → basis 1656.00 EUR; at 200 USD and USD→EUR 0.95 its
        // value is 1900.00 EUR, unrealized 244.00.
        ledger = try add(r(.buy, "AAPL", "10", price: "180", fee: "0", currency: "USD", fx: "0.92", on: "2024-06-20"))
        #expect(DecimalFormatting.money(try #require(ledger.positions[key("AAPL", in: "eu")]).costBasis) == "1656.00")
        let prices = PriceBook(manual: [Quote(coinId: "bitcoin", price: 90000, time: day("2024-07-01"), source: .manual, currency: "EUR"),
                                        Quote(coinId: "AAPL", price: 200, time: day("2024-07-01"), source: .manual, currency: "USD")])
        let rates = FXTable([FXRate(from: "USD", to: "EUR", rate: fixed("0.95"), date: day("2024-07-01"))])
        let reports = Reports(ledger: ledger, prices: prices, now: now, portfolios: ["eu"], baseCurrency: "EUR", rates: rates) { id in
            id == "AAPL" ? AssetLabel(asset: apple) : AssetLabel.unknown(id)
        }
        let h = reports.holdings()
        let b = try #require(h.holdings.first { $0.asset.id == "bitcoin" })
        #expect(b.currentValue.map(DecimalFormatting.money) == "90000.00")
        #expect(DecimalFormatting.money(b.totalCost) == "44945.47")
        #expect(b.profitLoss.map(DecimalFormatting.money) == "45054.53")
        let a = try #require(h.holdings.first { $0.asset.id == "AAPL" })
        #expect(a.currentValue.map(DecimalFormatting.money) == "1900.00")
        #expect(a.profitLoss.map(DecimalFormatting.money) == "244.00")
        // Without a USD→EUR rate, AAPL is unpriced and the pair is named.
        let blind = Reports(ledger: ledger, prices: prices, now: now, portfolios: ["eu"], baseCurrency: "EUR") { AssetLabel.unknown($0) }
        #expect(blind.holdings().missingRates == ["USD→EUR"])
        #expect(blind.holdings().unpricedCount == 1)
    }

    @Test func aForeignRecordWithoutARateIsRefusedAndTheTableSuppliesOne() throws {
        let eu = Portfolio(name: "eu", baseCurrency: "EUR")
        var book = Book(portfolios: [eu], defaultPortfolio: "eu")
        #expect(throws: PortfolioError.fxRateMissing(from: "USD", to: "EUR", date: day("2024-01-10"))) {
            _ = try book.fxRate(for: "USD", in: eu, on: day("2024-01-10"))
        }
        book.fxRates = [FXRate(from: "EUR", to: "USD", rate: fixed("1.1"), date: day("2024-01-01"))]
        #expect(try book.fxRate(for: "USD", in: eu, on: day("2024-01-10")) == fixed("0.909090909090909091"))
        #expect(try book.fxRate(for: "EUR", in: eu, on: day("2024-01-10")) == nil)
        // A stored foreign record without its rate breaks a rule when read.
        book.transactions = [Transaction(portfolio: "eu", type: .buy, assetId: "bitcoin", amount: fixed("1"), price: fixed("1"),
                                         currency: "USD", date: day("2024-01-10"))]
        #expect(book.checked(now: now).problems.map(\.rule) == [.fxRateMissing])
    }
}
