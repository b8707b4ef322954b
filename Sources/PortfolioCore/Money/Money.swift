import Foundation

/// A currency by its code (`USD`): the supported ones are the fiat currencies the price service prices in.
public struct CurrencyCode: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The code as stored, upper case for every code `parse` gives.
    public let code: String

    /// A code already stored (a portfolio's base, a record's currency), kept exactly as it is;
    /// what a person typed goes through `parse`.
    public init(_ code: String) { self.code = code }

    /// The codes bitpal knows: the fiat currencies the price service prices in.
    public static let supported = ["USD", "EUR", "GBP", "JPY", "CAD", "AUD", "CHF", "CNY", "INR", "KRW", "BRL", "SEK",
                                   "NOK", "DKK", "PLN", "NZD", "SGD", "HKD", "MXN", "ZAR"]

    /// The currency where nothing names one (a new portfolio's base).
    public static let usd = CurrencyCode("USD")

    /// `text` upper-cased when supported, else `nil`.
    public static func parse(_ text: String) -> CurrencyCode? {
        let upper = text.uppercased()
        return supported.contains(upper) ? CurrencyCode(upper) : nil
    }

    /// Whether `text` is a supported code exactly as stored (upper case).
    public static func isSupported(_ text: String) -> Bool { supported.contains(text) }

    public var description: String { code }

    public static func < (a: CurrencyCode, b: CurrencyCode) -> Bool { a.code < b.code }
}

/// An exact amount of money with its currency.
///
/// Money of two currencies never meets without a rate: adding, subtracting or comparing them
/// throws `differentCurrencies`, and `converted(to:rate:)` names the rate it uses.
public struct Money: Hashable, Sendable {
    public var amount: Exact36
    public var currency: CurrencyCode

    public init(_ amount: Exact36, _ currency: CurrencyCode) { (self.amount, self.currency) = (amount, currency) }

    /// Zero in `currency`.
    public static func zero(_ currency: CurrencyCode) -> Money { Money(.zero, currency) }

    public var isZero: Bool { amount.isZero }
    public var isNegative: Bool { amount.isNegative }

    /// `currency` when `other` is in it too, else `differentCurrencies`.
    private func shared(with other: Money) throws(PortfolioError) -> CurrencyCode {
        guard currency == other.currency else { throw .differentCurrencies(currency.code, other.currency.code) }
        return currency
    }

    /// `self + other`; `differentCurrencies` when their currencies differ, `valueTooLarge` past 10^41.
    public func adding(_ other: Money) throws(PortfolioError) -> Money {
        Money(try amount + other.amount, try shared(with: other))
    }

    /// `self − other`; `differentCurrencies` when their currencies differ, `valueTooLarge` past 10^41.
    public func subtracting(_ other: Money) throws(PortfolioError) -> Money {
        Money(try amount - other.amount, try shared(with: other))
    }

    /// Whether `self < other`; `differentCurrencies` when their currencies differ.
    public func isLess(than other: Money) throws(PortfolioError) -> Bool {
        _ = try shared(with: other)
        return amount < other.amount
    }

    /// The same money in `target` at `rate` units of `target` per one unit of `currency`, rounded
    /// half away from zero at the 36th decimal; to its own currency only at 1.
    public func converted(to target: CurrencyCode, rate: Fixed18) throws(PortfolioError) -> Money {
        guard rate.units > 0 else { throw .priceNotPositive }
        if target == currency {
            guard rate.units == Fixed18.scale else {
                throw .currencyMismatch(given: target.code, expected: currency.code, reason: "the money's own currency, which takes no rate")
            }
            return self
        }
        return Money(try amount.multiplied(by: rate, dividedBy: Fixed18(units: Fixed18.scale)), target)
    }

    /// `values` added up, all in `currency` (zero for none); `differentCurrencies` on the first in another.
    public static func sum(_ values: some Sequence<Money>, in currency: CurrencyCode) throws(PortfolioError) -> Money {
        var total = Money.zero(currency)
        for v in values { total = try total.adding(v) }
        return total
    }
}

/// A report whose money is all in one currency.
public protocol InOneCurrency {
    /// The currency every figure is in.
    var currency: CurrencyCode { get }
}

extension InOneCurrency {
    /// `amount` in the report's currency.
    public func money(_ amount: Exact36) -> Money { Money(amount, currency) }
}
