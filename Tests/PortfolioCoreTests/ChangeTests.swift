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
}
