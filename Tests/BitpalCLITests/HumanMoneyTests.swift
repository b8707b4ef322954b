@testable import BitpalCLI
import Foundation
import PortfolioCore
import XCTest

/// Renderers take money with its currency: each figure shows its own symbol, with no display
/// currency held between commands.
final class HumanMoneyTests: XCTestCase {
    func money(_ text: String, _ code: String) throws -> Money {
        let negative = text.hasPrefix("-")
        let v = Exact36(try XCTUnwrap(Fixed18.parse(utf8: (negative ? String(text.dropFirst()) : text).utf8)))
        return Money(Exact36(negative: negative, high: v.high, low: v.low), CurrencyCode(code))
    }

    func testEachAmountShowsItsOwnCurrency() throws {
        XCTAssertEqual(Human.money(try money("1234.5", "USD")), "$1,234.50")
        XCTAssertEqual(Human.money(try money("-1234.5", "EUR")), "-€1,234.50")
        XCTAssertEqual(Human.money(try money("1234", "CHF")), "CHF 1,234.00")
        XCTAssertEqual(Human.money(Decimal(string: "99.999") ?? 0, in: CurrencyCode("GBP")), "£100.00")
    }

    func testSignsAndGapsInTheirCurrency() throws {
        XCTAssertEqual(Human.signedMoney(try money("0.004", "EUR")), "€0.00")
        XCTAssertEqual(Human.signedMoney(try money("5", "JPY")), "+¥5.00")
        XCTAssertEqual(Human.signedMoney(try money("0", "CHF")), "CHF 0.00")
        XCTAssertEqual(Human.moneyApart(try money("-5", "EUR")), "€5.00 less")
        XCTAssertEqual(Human.moneyApart(try money("5", "GBP")), "£5.00 more")
    }

    func testPricesAndChartLabelsInTheirCurrency() throws {
        XCTAssertEqual(Human.price(try money("0.00001234", "EUR")), "€0.00001234")
        XCTAssertEqual(Human.price(try money("48333.333", "USD")), "$48,333.33")
        XCTAssertEqual(Human.price(Decimal(string: "0.5") ?? 0, in: CurrencyCode("CHF")), "CHF 0.50")
        XCTAssertEqual(LineChart.compactMoney(120_000, in: CurrencyCode("EUR")), "€120k")
        XCTAssertEqual(LineChart.compactMoney(-1_250_000, in: CurrencyCode("USD")), "-$1.25M")
    }

    /// `asset show` gives each portfolio's cost basis in that portfolio's base (it used the last shown currency).
    func testAssetShowCostsInEachPortfoliosBase() {
        let s = Sandbox()
        s.ok(["portfolio", "add", "eu", "--currency", "EUR"])
        s.ok(["add", "buy", "bitcoin", "1", "30000", "--date", "2024-01-02"])
        s.ok(["-p", "eu", "add", "buy", "bitcoin", "1", "20000", "--date", "2024-01-02"])
        let out = s.ok(["asset", "show", "bitcoin", "--offline"]).out
        XCTAssertTrue(out.contains("€20,000.00") && out.contains("$30,000.00"), out)
    }
}
