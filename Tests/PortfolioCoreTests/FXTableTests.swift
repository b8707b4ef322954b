import Foundation
import Testing
@testable import PortfolioCore

/// The exchange-rate lookup of `cash-currencies.md` and the `fxRates` of the store.
@Suite struct FXTableTests {
    let eurUSD1 = FXRate(from: "EUR", to: "USD", rate: fixed("1.0921"), date: day("2024-01-15"))
    let usdEUR = FXRate(from: "USD", to: "EUR", rate: fixed("0.92"), date: day("2024-01-15"))
    let eurUSD2 = FXRate(from: "EUR", to: "USD", rate: fixed("1.1"), date: day("2024-03-01"))

    @Test func theNewestRateAtOrBeforeTheDateWins() {
        let table = FXTable([eurUSD1, eurUSD2])
        #expect(table.rate(from: "EUR", to: "USD", on: day("2024-01-14")) == nil)
        #expect(table.rate(from: "EUR", to: "USD", on: day("2024-01-15"))?.rate == fixed("1.0921"))
        #expect(table.rate(from: "EUR", to: "USD", on: day("2024-02-29"))?.rate == fixed("1.0921"))
        #expect(table.rate(from: "EUR", to: "USD", on: day("2024-03-01"))?.rate == fixed("1.1"))
        #expect(table.rate(from: "EUR", to: "USD", on: day("2030-01-01"))?.date == day("2024-03-01"))
        #expect(table.rate(from: "EUR", to: "GBP", on: day("2030-01-01")) == nil)
        #expect(table.rate(from: "GBP", to: "GBP", on: day("2000-01-01"))?.rate == fixed("1"))
    }

    @Test func anInverseCountsRoundedHalfUpTo18Decimals() throws {
        let table = FXTable([eurUSD2])
        let found = try #require(table.rate(from: "USD", to: "EUR", on: day("2024-06-01")))
        #expect(found.inverse)
        #expect(found.rate == fixed("0.909090909090909091"))  // 1 ÷ 1.1, half-up at the 18th decimal
    }

    @Test func onTheSameDateTheRateRecordedLaterWins() {
        // Both are true on 2024-01-15: USD→EUR 0.92 was recorded after EUR→USD 1.0921.
        let table = FXTable([eurUSD1, usdEUR])
        #expect(table.rate(from: "USD", to: "EUR", on: day("2024-02-01"))?.rate == fixed("0.92"))
        #expect(table.rate(from: "EUR", to: "USD", on: day("2024-02-01"))?.inverse == true)
        let other = FXTable([usdEUR, eurUSD1])
        #expect(other.rate(from: "EUR", to: "USD", on: day("2024-02-01"))?.rate == fixed("1.0921"))
    }

    @Test func listsAndHistories() {
        let table = FXTable([eurUSD1, usdEUR, eurUSD2])
        #expect(table.newest == [eurUSD2, usdEUR])
        #expect(table.history("USD", "EUR") == [eurUSD1, usdEUR, eurUSD2])
        #expect(table.history("GBP", "EUR").isEmpty)
    }

    @Test func ratesSurviveTheStoreAndABrokenOneIsNamed() throws {
        var book = Book()
        book.fxRates = [eurUSD1, FXRate(from: "USD", to: "JPY", rate: fixed("151.2"), date: day("2024-02-01"), source: .coingecko)]
        let encoded = PortfolioCodec.encode(book)
        #expect(String(decoding: encoded, as: UTF8.self).contains(
            #"{"from": "EUR", "to": "USD", "rate": "1.0921", "date": "2024-01-15T00:00:00Z", "source": "manual"}"#))
        #expect(try PortfolioCodec.decode(encoded, path: "rates") == book)
        // A book without rates writes no key (files without rates stay as they were).
        #expect(!String(decoding: PortfolioCodec.encode(Book()), as: UTF8.self).contains("fxRates"))
        let broken = String(decoding: encoded, as: UTF8.self).replacingOccurrences(of: "\"to\": \"USD\"", with: "\"to\": \"EUR\"")
        #expect(throws: StoreError.self) { try PortfolioCodec.decode(Array(broken.utf8), path: "broken") }
    }
}
