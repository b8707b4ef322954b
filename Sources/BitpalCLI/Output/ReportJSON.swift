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

    static func transaction(_ t: Transaction) -> JSONValue {
        .object([
            ("id", .string(t.id.uuidString.lowercased())),
            ("coinId", .string(t.coinId)),
            ("type", .string(t.type.rawValue)),
            ("amount", .string(F.exact(t.amount))),
            ("pricePerCoin", .string(F.exact(t.pricePerCoin))),
            ("fee", .string(F.exact(t.fee))),
            ("date", .string(ISODate.format(t.date))),
            ("notes", .optional(t.notes)),
        ])
    }

    static func holding(_ h: Holding) -> JSONValue {
        .object([
            ("coinId", .string(h.coin.id)),
            ("symbol", .string(h.coin.symbol.lowercased())),
            ("name", .string(h.coin.name)),
            ("totalAmount", .string(F.exact(h.totalAmount))),
            ("avgCost", price(h.avgCost)),
            ("totalCost", money(h.totalCost)),
            ("currentPrice", price(h.quote?.price)),
            ("currentValue", money(h.currentValue)),
            ("profitLoss", money(h.profitLoss)),
            ("profitLossPercentage", percent(h.profitLossPercentage)),
            ("priceUpdatedAt", date(h.quote?.time)),
            ("priceStale", h.quote == nil ? .null : .bool(h.stale)),
        ])
    }

    static func holdings(_ r: HoldingsReport) -> JSONValue {
        .object([
            ("holdings", .array(r.holdings.map(holding))),
            ("totals", .object([
                ("totalCost", money(r.totalCost)),
                ("currentValue", money(r.totalValue)),
                ("profitLoss", money(r.unrealizedPnL)),
                ("profitLossPercentage", percent(r.unrealizedPnLPercentage)),
                ("unpricedCount", .number(String(r.unpricedCount))),
                ("unpricedCost", money(r.unpricedCost)),
            ])),
            ("pricesAsOf", date(r.pricesAsOf)),
            ("stale", .bool(r.stale)),
        ])
    }

    static func closed(_ lines: [ClosedLine]) -> JSONValue {
        .array(lines.map { l in
            let p = l.position
            return .object([
                ("coinId", .string(l.coin.id)),
                ("symbol", .string(l.coin.symbol.lowercased())),
                ("name", .string(l.coin.name)),
                ("totalQuantity", .string(F.exact(p.totalQuantity))),
                ("avgCostPrice", price(p.avgCostPrice)),
                ("avgSellPrice", price(p.avgSellPrice)),
                ("realizedPnL", money(p.realizedPnL)),
                ("realizedPnLPercentage", percent(p.realizedPnLPercentage)),
                ("openedDate", .string(ISODate.format(p.openedDate))),
                ("closedDate", .string(ISODate.format(p.closedDate))),
            ])
        })
    }

    static func topHolding(_ h: Holding, idKey: String, upperSymbol: Bool) -> JSONValue {
        .object([
            (idKey, .string(h.coin.id)),
            ("symbol", .string(upperSymbol ? h.coin.symbol.uppercased() : h.coin.symbol.lowercased())),
            ("name", .string(h.coin.name)),
            ("currentValue", money(h.currentValue)),
            ("pnlAmount", money(h.profitLoss)),
            ("pnlPercentage", percent(h.profitLossPercentage)),
        ])
    }

    static func summary(_ s: PortfolioSummary) -> JSONValue {
        .object([
            ("totalValue", money(s.totalValue)),
            ("totalOpenCost", money(s.totalOpenCost)),
            ("totalClosedCost", money(s.totalClosedCost)),
            ("unrealizedPnL", money(s.unrealizedPnL)),
            ("realizedPnL", money(s.realizedPnL)),
            ("totalPnL", money(s.totalPnL)),
            ("totalPnLPercentage", percent(s.totalPnLPercentage)),
            ("holdingsCount", .number(String(s.holdingsCount))),
            ("unpricedCount", .number(String(s.unpricedCount))),
            ("unpricedCost", money(s.unpricedCost)),
            ("pricesAsOf", date(s.pricesAsOf)),
            ("stale", .bool(s.stale)),
            ("topHoldings", .array(s.topHoldings.map { topHolding($0, idKey: "coinId", upperSymbol: false) })),
        ])
    }

    static func quote(_ q: Quote, coin: Coin, now: Date) -> JSONValue {
        .object([
            ("coinId", .string(q.coinId)),
            ("symbol", .string(coin.symbol.lowercased())),
            ("name", .string(coin.name)),
            ("price", .string(F.price(q.price))),
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
