import Foundation
import PortfolioCore
import Testing

/// Money keeps its currency: two currencies meet only through a named rate.
@Suite struct MoneyTests {
    static let usd = CurrencyCode.usd, eur = CurrencyCode("EUR")

    func exact(_ text: String) throws -> Exact36 {
        let negative = text.hasPrefix("-")
        let v = Exact36(try #require(Fixed18.parse(utf8: (negative ? String(text.dropFirst()) : text).utf8)))
        return Exact36(negative: negative, high: v.high, low: v.low)
    }

    func rate(_ text: String) throws -> Fixed18 { try #require(Fixed18.parse(utf8: text.utf8)) }

    @Test(arguments: [("usd", "USD"), ("Eur", "EUR"), ("CHF", "CHF")])
    func parseUpperCasesSupportedCodes(_ text: String, _ code: String) {
        #expect(CurrencyCode.parse(text) == CurrencyCode(code))
        #expect(CurrencyCode.parse(text)?.code == code)
    }

    @Test(arguments: ["XYZ", "", "US", "usd "])
    func parseRefusesOthers(_ text: String) {
        #expect(CurrencyCode.parse(text) == nil)
    }

    @Test func supportedMeansExactlyAsStored() {
        #expect(CurrencyCode.isSupported("EUR"))
        #expect(!CurrencyCode.isSupported("eur"))
        #expect(!CurrencyCode.isSupported("XYZ"))
    }

    @Test func addsAndSubtractsInOneCurrency() throws {
        let a = Money(try exact("10.25"), Self.eur), b = Money(try exact("0.75"), Self.eur)
        #expect(try a.adding(b) == Money(try exact("11"), Self.eur))
        #expect(try b.subtracting(a) == Money(try exact("-9.5"), Self.eur))
        #expect(try b.isLess(than: a))
        #expect(try !a.isLess(than: b))
    }

    @Test func twoCurrenciesNeverMeetWithoutARate() throws {
        let dollars = Money(try exact("10"), Self.usd), euros = Money(try exact("10"), Self.eur)
        #expect(throws: PortfolioError.differentCurrencies("USD", "EUR")) { try dollars.adding(euros) }
        #expect(throws: PortfolioError.differentCurrencies("EUR", "USD")) { try euros.subtracting(dollars) }
        #expect(throws: PortfolioError.differentCurrencies("USD", "EUR")) { try dollars.isLess(than: euros) }
        #expect(dollars != euros)
    }

    @Test func convertingNamesTheRateAndCarriesTheTarget() throws {
        let euros = Money(try exact("100"), Self.eur)
        let dollars = try euros.converted(to: Self.usd, rate: try rate("1.08"))
        #expect(dollars == Money(try exact("108"), Self.usd))
        #expect(dollars.currency == Self.usd)
        let back = try Money(try exact("-3"), Self.usd).converted(to: Self.eur, rate: try rate("0.333333333333333333"))
        #expect(back == Money(try exact("-0.999999999999999999"), Self.eur))
    }

    @Test func convertingRefusesANonsenseRate() throws {
        let euros = Money(try exact("100"), Self.eur)
        #expect(throws: PortfolioError.priceNotPositive) { try euros.converted(to: Self.usd, rate: .zero) }
        #expect(try euros.converted(to: Self.eur, rate: try rate("1")) == euros)
        #expect(throws: PortfolioError.self) { try euros.converted(to: Self.eur, rate: try rate("2")) }
    }

    @Test func sumsOneCurrency() throws {
        let values = try ["1.10", "2.20", "-0.30"].map { Money(try exact($0), Self.eur) }
        #expect(try Money.sum(values, in: Self.eur) == Money(try exact("3"), Self.eur))
        #expect(try Money.sum([], in: Self.usd) == Money.zero(Self.usd))
        #expect(throws: PortfolioError.differentCurrencies("USD", "EUR")) { try Money.sum(values, in: Self.usd) }
        let mixed = values + [Money(try exact("1"), Self.usd)]
        #expect(throws: PortfolioError.differentCurrencies("EUR", "USD")) { try Money.sum(mixed, in: Self.eur) }
    }
}
