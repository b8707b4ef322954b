import Foundation
import PortfolioCore

/// The JSON shapes of spec/cli.md, built from report values.
enum ReportJSON {
    typealias F = DecimalFormatting

    static func money(_ v: Decimal?) -> JSONValue { .optional(v.map(F.money)) }
    static func price(_ v: Decimal?) -> JSONValue { .optional(v.map(F.price)) }
    /// Exact money: 2 decimals, rounded once from the exact value.
    static func money(_ v: Exact36?) -> JSONValue { .optional(v.map { $0.fixed(scale: 2) }) }
    /// Exact prices and averages: at most 8 decimals, trimmed.
    static func price(_ v: Exact36?) -> JSONValue { .optional(v.map { $0.trimmed(maxScale: 8) }) }
    static func percent(_ v: Decimal?) -> JSONValue { .optional(v.map(F.percent)) }
    static func exact(_ v: Decimal?) -> JSONValue { .optional(v.map(F.exact)) }
    static func date(_ d: Date?) -> JSONValue { .optional(d.map(ISODate.format)) }

    /// A transaction object (version 2): every field of `TransactionField`, nulls included.
    static func transaction(_ t: Transaction) -> JSONValue {
        .object(TransactionField.order.map { ($0.name, .optional($0.text(of: t))) })
    }

    /// The asset's symbol as JSON shows it: a coin's lower-case ticker, a registered asset's code.
    static func symbol(_ a: AssetLabel) -> String { a.type == .crypto && !Asset.isRegisteredID(a.id) ? a.symbol.lowercased() : a.symbol }

    static func holding(_ h: Holding) -> JSONValue {
        .object((h.portfolio.map { [("portfolio", JSONValue.string($0))] } ?? []) + [
            ("assetId", .string(h.asset.id)),
            ("symbol", .string(symbol(h.asset))),
            ("name", .string(h.asset.name)),
            ("type", .string(h.asset.type.rawValue)),
            ("totalAmount", .string(F.exact(h.totalAmount))),
            ("avgCost", price(h.avgCost)),
            ("totalCost", money(h.totalCost)),
            ("currentPrice", price(h.quote?.price)),
            ("currentValue", money(h.currentValue)),
            ("profitLoss", money(h.profitLoss)),
            ("profitLossPercentage", percent(h.profitLossPercentage)),
            ("priceUpdatedAt", date(h.quote?.time)),
            ("priceStale", h.quote == nil ? .null : .bool(h.stale)),
            // Where the price comes from: manual, coingecko, imported, or "trade" (a holding never priced, at its latest trade).
            ("priceSource", .optional(h.quote?.source.rawValue)),
        ])
    }

    /// A CASH line among the holdings: the balance is its amount and its value; no cost, no P&L.
    static func cash(_ c: CashLine) -> JSONValue {
        .object((c.portfolio.map { [("portfolio", JSONValue.string($0))] } ?? []) + [
            ("assetId", .null), ("symbol", .string(c.currency)), ("name", .string("Cash")), ("type", .string("cash")),
            ("totalAmount", .string(c.balance.trimmed(maxScale: 18))), ("avgCost", .null), ("totalCost", .null), ("currentPrice", .null),
            ("currentValue", money(c.value)), ("profitLoss", .null), ("profitLossPercentage", .null), ("priceUpdatedAt", .null),
            ("priceStale", .null), ("priceSource", .null),
        ])
    }

    static func holdings(_ r: HoldingsReport, currency: String) -> JSONValue {
        .object([
            ("currency", .string(currency)),
            ("holdings", .array(r.holdings.map(holding) + r.cash.map(cash))),
            ("totals", .object([
                ("totalCost", money(r.totalCost)),
                ("currentValue", money(r.holdingsValue)),
                ("cashBalance", money(r.cashBalance)),
                ("totalValue", money(r.totalValue)),
                ("profitLoss", money(r.unrealizedPnL)),
                ("profitLossPercentage", percent(r.unrealizedPnLPercentage)),
                ("unpricedCount", .number(String(r.unpricedCount))),
                ("unpricedCost", money(r.unpricedCost)),
            ])),
            ("pricesAsOf", date(r.pricesAsOf)),
            ("stale", .bool(r.stale)),
            ("unconvertedPortfolios", .array(r.unconvertedPortfolios.map { .string($0) })),
        ])
    }

    static func closed(_ lines: [ClosedLine]) -> JSONValue {
        .array(lines.map { l in
            let p = l.position
            return .object([
                ("assetId", .string(l.asset.id)),
                ("symbol", .string(symbol(l.asset))),
                ("name", .string(l.asset.name)),
                ("type", .string(l.asset.type.rawValue)),
                ("portfolio", .string(p.portfolio)),
                ("totalQuantity", p.totalQuantity.map { .string(F.exact($0)) } ?? .null),
                ("totalCost", money(p.totalCost)),
                ("avgCostPrice", price(p.avgCostPrice)),
                ("avgSellPrice", price(p.avgSellPrice)),
                ("realizedPnL", money(p.realizedPnL)),
                ("realizedPnLPercentage", percent(p.realizedPnLPercentage)),
                ("openedDate", .string(RecordDate(date: p.openedDate, day: p.openedDay).text)),
                ("closedDate", .string(RecordDate(date: p.closedDate, day: p.closedDay).text)),
            ])
        })
    }

    static func topHolding(_ h: Holding, idKey: String, upperSymbol: Bool) -> JSONValue {
        .object([
            (idKey, .string(h.asset.id)),
        ] + (idKey == "assetId" ? [] : [("assetId", JSONValue.string(h.asset.id))]) + [
            ("symbol", .string(upperSymbol ? h.asset.symbol.uppercased() : symbol(h.asset))),
            ("name", .string(h.asset.name)),
            ("type", .string(h.asset.type.rawValue)),
            ("currentValue", money(h.currentValue)),
            ("pnlAmount", money(h.profitLoss)),
            ("pnlPercentage", percent(h.profitLossPercentage)),
        ])
    }

    static func summary(_ s: PortfolioSummary, currency: String, unconverted: [String] = []) -> JSONValue {
        .object([
            ("currency", .string(currency)),
            ("unconvertedPortfolios", .array(unconverted.map { .string($0) })),
            ("totalValue", money(s.totalValue)),
            ("holdingsValue", money(s.holdingsValue)),
            ("cashBalance", money(s.cashBalance)),
            ("netDeposits", money(s.netDeposits)),
            ("fxEffect", money(s.fxEffect)),
            ("totalOpenCost", money(s.totalOpenCost)),
            ("totalClosedCost", money(s.totalClosedCost)),
            ("unrealizedPnL", money(s.unrealizedPnL)),
            ("realizedPnL", money(s.realizedPnL)),
            ("income", money(s.income)),
            ("taxWithheld", money(s.taxWithheld)),
            ("totalPnL", money(s.totalPnL)),
            ("totalPnLPercentage", percent(s.totalPnLPercentage)),
            ("holdingsCount", .number(String(s.holdingsCount))),
            ("unpricedCount", .number(String(s.unpricedCount))),
            ("unpricedCost", money(s.unpricedCost)),
            ("pricesAsOf", date(s.pricesAsOf)),
            ("stale", .bool(s.stale)),
            ("topHoldings", .array(s.topHoldings.map { topHolding($0, idKey: "assetId", upperSymbol: false) })),
        ])
    }

    static func quote(_ q: Quote, asset: AssetLabel, now: Date) -> JSONValue {
        .object([
            ("assetId", .string(q.coinId)),
            ("symbol", .string(symbol(asset))),
            ("name", .string(asset.name)),
            ("price", .string(F.price(q.price))),
            ("currency", .string(q.currency)),
            ("change24h", percent(q.change24h)),
            ("marketCap", money(q.marketCap)),
            ("source", .string(q.source.rawValue)),
            ("time", .string(ISODate.format(q.time))),
            ("sourceUpdatedAt", date(q.sourceUpdatedAt)),
            ("ageSeconds", .number(String(max(0, Int(now.timeIntervalSince(q.time)))))),
            ("stale", .bool(PriceBook.isStale(q.time, now: now))),
        ])
    }
}
