import Foundation
import PortfolioCore
import Testing

/// `Book.apply`: the one door every change of transactions goes through (add, edit, delete, move,
/// the cash commands, import and saving plans all build their records with `Book.transaction`).
@Suite struct ChangeTests {
    let now = day("2024-06-01T12:00:00Z")

    /// `main` in USD tracking cash, `eu` in EUR tracking cash, a USD stock, and one EUR→USD rate.
    func book() -> Book {
        var b = Book(portfolios: [Portfolio(name: "main", trackCash: true), Portfolio(name: "eu", baseCurrency: "EUR", trackCash: true)],
                     assets: [Asset(id: "AAPL", name: "Apple", type: .stock, createdDate: day("2024-01-01"))])
        b.fxRates = [FXRate(from: "EUR", to: "USD", rate: fixed("1.1"), date: day("2024-01-01"))]
        return b
    }

    func on(_ text: String) -> RecordDate { .instant(day(text)) }

    @Test func aRecordTakesWhatItsKindHasAndTheRateOfItsDate() throws {
        var b = book()
        // A buy by its total: the price is total ÷ amount; a fee of 0 when none is given; USD, the asset's own.
        let buy = try #require(try b.apply(.record(RecordRequest(portfolio: "main", type: .buy, assetId: "AAPL", amount: fixed("3"),
                                                                 total: fixed("541.20"), date: on("2024-02-01"))), now: now).first?.first)
        #expect(buy.priceValue == fixed("180.4") && buy.feeValue == .zero && buy.currency == "USD" && buy.fxRateValue == nil)
        // In EUR, a USD asset's money takes the table's rate (the inverse of EUR→USD 1.1, to 18 decimals).
        let eu = try b.transaction(RecordRequest(portfolio: "eu", type: .dividend, assetId: "AAPL", amount: fixed("5"), date: on("2024-02-01")))
        #expect(eu.currency == "USD" && eu.fxRateValue == fixed("0.909090909090909091"))
        // A rate given wins; a kind without a fee or money takes none.
        let given = try b.transaction(RecordRequest(portfolio: "eu", type: .buy, assetId: "AAPL", amount: fixed("1"), price: fixed("100"),
                                                    fxRate: fixed("0.9"), date: on("2024-02-01")))
        #expect(given.fxRateValue == fixed("0.9"))
        let split = try b.transaction(RecordRequest(portfolio: "main", type: .split, assetId: "AAPL", amount: fixed("4"), price: fixed("1"),
                                                    fee: fixed("1"), currency: "USD", date: on("2024-02-02")))
        #expect(split.feeValue == nil && split.currency == nil)
        // Before the table's first rate there is none: refused, saying which.
        #expect(throws: PortfolioError.fxRateMissing(from: "USD", to: "EUR", date: day("2023-12-01"))) {
            try b.transaction(RecordRequest(portfolio: "eu", type: .buy, assetId: "AAPL", amount: fixed("1"), price: fixed("1"), date: on("2023-12-01")))
        }
        // A registered asset's money is in its own currency only.
        #expect(throws: PortfolioError.self) {
            try b.transaction(RecordRequest(portfolio: "main", type: .buy, assetId: "AAPL", amount: fixed("1"), price: fixed("1"), currency: "EUR",
                                            date: on("2024-02-01")))
        }
        // A day stays a day.
        let dated = try b.transaction(RecordRequest(portfolio: "main", type: .deposit, amount: fixed("10"), date: .day(19_800, in: .gmt)))
        #expect(dated.day == 19_800)
    }

    @Test func linksAreBuiltWholeAndEditedTogether() throws {
        var b = book()
        _ = try b.apply(.record(RecordRequest(portfolio: "eu", type: .deposit, amount: fixed("2000"), date: on("2024-01-02"))), now: now)
        _ = try b.apply(.record(RecordRequest(portfolio: "main", type: .deposit, amount: fixed("500"), date: on("2024-01-02"))), now: now)
        // An exchange out of the base: the received amount after the fee, each leg's rate to the base implied by the exchange.
        let exchange = try #require(try b.apply(.cashExchange(ExchangeRequest(portfolio: "eu", amount: fixed("1000"), from: "EUR", to: "USD",
                                                                              rate: fixed("1.1"), fee: fixed("2"), date: on("2024-01-03"), notes: nil)),
                                                now: now).first)
        #expect(exchange.map(\.amountValue) == [fixed("1000"), fixed("1097.8")])
        #expect(exchange.map(\.fxRateValue) == [nil, fixed("0.909090909090909091")])
        #expect(exchange[0].linkedId == exchange[0].id && exchange[1].linkedId == exchange[0].id)
        #expect(throws: PortfolioError.refused("The fee (5 EUR) must be less than the amount (5 EUR)")) {
            try b.apply(.cashExchange(ExchangeRequest(portfolio: "eu", amount: fixed("5"), from: "EUR", to: "USD", rate: fixed("1"),
                                                      fee: fixed("5"), date: on("2024-01-03"), notes: nil)), now: now)
        }
        // A transfer: changing one leg's amount changes both; a linked leg's kind never changes.
        let transfer = try #require(try b.apply(.cashTransfer(RecordRequest(portfolio: "eu", type: .withdrawal, amount: fixed("100"),
                                                                            date: on("2024-01-04")), to: "main"), now: now).first)
        #expect(transfer.map(\.fxRateValue) == [nil, fixed("1.1")])
        var edit = EditRequest(id: String(UUIDText.lowercased(transfer[1].id).prefix(8)))
        edit.amount = fixed("60")
        let edited = try #require(try b.apply(.edit(edit), now: now).first)
        #expect(edited.map(\.amountValue) == [fixed("60"), fixed("60")])
        var retype = EditRequest(id: UUIDText.lowercased(transfer[0].id))
        retype.type = .deposit
        #expect(throws: PortfolioError.self) { try b.apply(.edit(retype), now: now) }
        // A move between two bases takes the rate between them; between two of one base, no rate is asked for.
        _ = try b.apply(.record(RecordRequest(portfolio: "main", type: .buy, assetId: "AAPL", amount: fixed("2"), price: fixed("100"),
                                              date: on("2024-01-05"))), now: now)
        let move = try #require(try b.apply(.move(MoveRequest(assetId: "AAPL", amount: fixed("1"), from: "main", to: "eu", fxRate: nil,
                                                              date: on("2024-01-06"), notes: nil)), now: now).first)
        #expect(move.map(\.type) == [.transferOut, .transferIn] && move[1].fxRateValue == fixed("0.909090909090909091"))
        b.portfolios.append(Portfolio(name: "other"))
        #expect(throws: PortfolioError.misusedOption("--fx-rate is for a move between two base currencies; 'main' and 'other' are both in USD")) {
            try b.apply(.move(MoveRequest(assetId: "AAPL", amount: fixed("1"), from: "main", to: "other", fxRate: fixed("1"),
                                          date: on("2024-01-06"), notes: nil)), now: now)
        }
        // Deleting one leg takes the other.
        let before = b.transactions.count
        let removed = try b.apply(.delete([UUIDText.lowercased(move[1].id)]), now: now)
        #expect(removed.map(\.count) == [2] && b.transactions.count == before - 2)
        #expect(b.checked(now: now).problems.isEmpty)
    }

    /// An edit into a kind with money takes the currency and its rate by the rules `add` applies: in a
    /// EUR portfolio a USD asset's buy needs a rate (it never silently becomes EUR).
    @Test func anEditAppliesAddsRules() throws {
        var b = book()
        b.fxRates = []
        _ = try b.apply(.record(RecordRequest(portfolio: "eu", type: .adjustment, assetId: "AAPL", amount: fixed("1"), date: on("2024-01-02"))),
                        now: now)
        var edit = EditRequest(id: UUIDText.lowercased(b.transactions[0].id))
        edit.type = .reward
        edit.price = fixed("90")
        #expect(throws: PortfolioError.fxRateMissing(from: "USD", to: "EUR", date: day("2024-01-02"))) { try b.apply(.edit(edit), now: now) }
        #expect(b.transactions[0].type == .adjustment)
        edit.fxRate = fixed("0.95")
        let rewarded = try #require(try b.apply(.edit(edit), now: now).first?.first)
        #expect(rewarded.type == .reward && rewarded.currency == "USD" && rewarded.fxRateValue == fixed("0.95"))
        var fee = EditRequest(id: UUIDText.lowercased(rewarded.id))
        fee.fee = fixed("1")
        #expect(throws: PortfolioError.misusedOption("a reward has no fee")) { try b.apply(.edit(fee), now: now) }
    }

    /// The settings' rules live in `Book.apply` too: each refusal here is one a command used to make in its own closure.
    @Test func settingsChangeByTheirRules() throws {
        var b = book()
        // A new portfolio with an opening deposit, in its base and labelled.
        let opened = try b.apply(.addPortfolio(Portfolio(name: "cash", baseCurrency: "EUR", createdDate: now, trackCash: true),
                                               openingDeposit: (fixed("100"), .day(19_800, in: .gmt))), now: now)
        #expect(opened.portfolio?.name == "cash")
        #expect(b.transactions.last.map { ($0.currency, $0.notes, $0.day) } ?? (nil, nil, nil) == ("EUR", "initial capital", 19_800))
        #expect(throws: PortfolioError.portfolioExists("CASH")) { try b.apply(.addPortfolio(Portfolio(name: "CASH"), openingDeposit: nil), now: now) }
        // Its base changes only while nothing is stored in it; cash is turned off only without cash records.
        var edit = PortfolioEdit()
        edit.currency = "USD"
        #expect(throws: PortfolioError.self) { try b.apply(.editPortfolio("cash", edit), now: now) }
        edit = PortfolioEdit()
        edit.trackCash = false
        #expect(throws: PortfolioError.refused("Portfolio 'cash' has cash records; delete them before turning cash off")) {
            try b.apply(.editPortfolio("cash", edit), now: now)
        }
        // A rename carries its records and plans along.
        b.savingPlans = [SavingPlan(name: "weekly", portfolio: "cash", assetId: "AAPL", amount: fixed("10"), frequency: .week, startDay: 19_800)]
        edit = PortfolioEdit()
        edit.name = "savings"
        _ = try b.apply(.editPortfolio("cash", edit), now: now)
        #expect(b.transactions.last?.portfolio == "savings" && b.savingPlans[0].portfolio == "savings")
        // Nothing is removed while something points at it.
        #expect(throws: PortfolioError.refused("Saving plan 'weekly' buys into 'savings'; remove it first ('bitpal saving remove')")) {
            b.transactions.removeAll { $0.portfolio == "savings" }
            return try b.apply(.removePortfolio("savings"), now: now)
        }
        #expect(throws: PortfolioError.refused("Saving plan 'weekly' buys AAPL; remove it first ('bitpal saving remove')")) {
            try b.apply(.removeAsset("AAPL", withTransactions: true), now: now)
        }
        // A saving plan's fee stays below its amount; a target of cash needs a portfolio that tracks it.
        var saving = SavingPlanEdit()
        saving.fee = fixed("10")
        #expect(throws: PortfolioError.refused("The fee (10) must be below the amount (10)")) { try b.apply(.editSavingPlan("WEEKLY", saving), now: now) }
        b.portfolios.append(Portfolio(name: "plain"))
        #expect(throws: PortfolioError.cashNotTracked("plain")) {
            try b.apply(.setTargets(portfolio: "plain", Targets(by: .asset, weights: [Targets.Weight("cash", fixed("100"))])), now: now)
        }
        #expect(try b.apply(.setTargets(portfolio: "plain", nil), now: now).changed == false)
        // A rate needs two currencies and a past date; a watch skips what is watched.
        #expect(throws: PortfolioError.refused("An exchange rate needs two different currencies (both are EUR)")) {
            try b.apply(.setRate(FXRate(from: "EUR", to: "EUR", rate: fixed("1"), date: now)), now: now)
        }
        #expect(throws: PortfolioError.futureDate) {
            try b.apply(.setRate(FXRate(from: "EUR", to: "USD", rate: fixed("1"), date: now.addingTimeInterval(60))), now: now)
        }
        let watched = try b.apply(.watch(["bitcoin", "bitcoin", "ethereum"], at: now), now: now)
        #expect(watched.added == ["bitcoin", "ethereum"] && watched.skipped == ["bitcoin"] && b.watchlist.count == 2)
        #expect(try b.apply(.watch(["bitcoin"], at: now), now: now).changed == false)
    }
}
