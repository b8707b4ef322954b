import Foundation

// The tables of the book's other records (transactions have `TransactionField`). Their readers
// word errors as the hand-written readers before them did (`RecordFields.Wording.plain`).

extension Portfolio {
    /// The fields of a portfolio, in every codec. The store leaves out `trackCash` when false,
    /// `costBasisMethod` when average and `targets` when there are none.
    public static let fields = RecordFields<Portfolio>(
        what: "a portfolio", wording: .plain(missing: "a portfolio needs a name"),
        fields: [
            .string("name", \.name, required: true),
            .string("baseCurrency", \.baseCurrency),
            .string("description", \.description),
            .bool("active", \.active),
            .date("createdDate", \.createdDate),
            .bool("trackCash", \.trackCash, leftOutWhenFalse: true),
            .init("costBasisMethod", leftOut: { $0.costBasisMethod == .average }, value: { .string($0.costBasisMethod.rawValue) },
                  read: { r, p throws(JSONReadError) in
                      let text = try r.readString()
                      guard let m = CostBasisMethod(name: text) else {
                          throw r.error("unknown cost-basis method '\(TextEscaping.escaped(text))' (average, fifo, lifo or hifo)")
                      }
                      p.costBasisMethod = m
                  }),
            .init("targets", null: { $0.targets = nil }, leftOut: { $0.targets == nil }, value: { $0.targets.map(Targets.fields.object) ?? .null },
                  read: { r, p throws(JSONReadError) in p.targets = try Targets.fields.read(&r) }),
        ],
        blank: Portfolio(name: ""))
}

extension Targets {
    /// The fields of a portfolio's targets: `{"by": "type" | "asset", "weights": {"stock": "60", …}}`.
    public static let fields = RecordFields<Targets>(
        what: "targets", wording: .plain(),
        fields: [
            .init("by", value: { .string($0.by.rawValue) }, read: { r, t throws(JSONReadError) in
                let text = try r.readString()
                guard let b = Targets.Basis(rawValue: text) else { throw r.error("targets are by 'type' or by 'asset', not '\(TextEscaping.escaped(text))'") }
                t.by = b
            }),
            .init("weights", value: { .object($0.weights.map { ($0.target, .string($0.percent.text)) }) }, read: { r, t throws(JSONReadError) in
                try r.beginObject()
                while let target = try r.nextKey() {
                    let text = try r.readString()
                    guard let percent = Fixed18.parse(utf8: text.utf8) else {
                        throw r.error("the target of '\(TextEscaping.escaped(target))' is not a number: '\(TextEscaping.escaped(text))'")
                    }
                    t.weights.append(Targets.Weight(target, percent))
                }
            }),
        ],
        blank: Targets(by: .type, weights: []))
}

extension Asset {
    /// The fields of a registered asset, in every codec.
    public static let fields = RecordFields<Asset>(
        what: "an asset", wording: .plain(missing: "an asset needs id, name and type"),
        fields: [
            .string("id", \.id, required: true),
            .string("name", \.name, required: true),
            .choice("type", \.type, "asset type", required: true),
            .string("currency", \.currency),
            .string("market", \.market),
            .string("notes", \.notes),
            .date("createdDate", \.createdDate),
            // Left out of the store for an asset priced by hand (the default), so older files read the same.
            .init("quoteSource", null: { $0.quoteService = nil }, leftOut: { $0.quoteService == nil },
                  value: { .optional($0.quote?.service.rawValue) },
                  read: { r, a throws(JSONReadError) in
                      let text = try r.readString()
                      guard text == "manual" || AssetQuoteSource.Service(rawValue: text) != nil else {
                          throw r.error("unknown quote source '\(TextEscaping.escaped(text))'")
                      }
                      a.quoteService = AssetQuoteSource.Service(rawValue: text)
                  }),
            .init("quoteSymbol", null: { $0.quoteSymbol = nil }, leftOut: { $0.quoteService == nil },
                  value: { .optional($0.quote?.symbol) },
                  read: { r, a throws(JSONReadError) in a.quoteSymbol = try r.readString() }),
        ],
        blank: Asset(id: "", name: "", type: .other, createdDate: ISODate.epoch2024),
        finish: { a, _, _ throws(JSONReadError) in
            // A symbol without a source is by hand; a source without a symbol uses the code.
            if a.quoteService == nil { a.quoteSymbol = nil } else if a.quoteSymbol == nil { a.quoteSymbol = a.id }
        })
}

extension Quote {
    /// The fields of a manual price (`price set`, kept in `manualPrices`), in every codec; `coinId`
    /// is version 1's name of `assetId`, and the currency is USD when absent.
    public static let manualPriceFields = RecordFields<Quote>(
        what: "a manual price", wording: .plain(missing: "a manual price needs assetId, price and date"),
        fields: [
            .string("assetId", \.coinId, aliases: ["coinId"], required: true),
            .init("price", required: true, value: { .string(DecimalFormatting.exact($0.price)) },
                  read: { r, q throws(JSONReadError) in q.price = try PortfolioCodec.readFixed(&r).decimal }),
            .string("currency", \.currency),
            .date("date", \.time, required: true),
        ],
        blank: Quote(coinId: "", price: 0, time: ISODate.epoch2024, source: .manual))
}

extension FXRate {
    /// The fields of an exchange rate (`fxRates`), in every codec.
    public static let fields = RecordFields<FXRate>(
        what: "an exchange rate", wording: .plain(missing: "an exchange rate needs from, to, rate and date"),
        fields: [
            .string("from", \.from, required: true),
            .string("to", \.to, required: true),
            .fixed("rate", \.rate, required: true),
            .date("date", \.date, required: true),
            .choice("source", \.source, "rate source"),
        ],
        blank: FXRate(from: "", to: "", rate: .zero, date: ISODate.epoch2024),
        finish: { x, _, r throws(JSONReadError) in
            guard CurrencyCode.isSupported(x.from), CurrencyCode.isSupported(x.to), x.from != x.to else {
                throw r.error("an exchange rate needs two different supported currencies (\(TextEscaping.escaped(x.from))→\(TextEscaping.escaped(x.to)))")
            }
            guard x.rate.units > 0 else { throw r.error("an exchange rate must be greater than zero") }
        })
}

extension InvestmentPlan {
    /// The fields of an investment plan (`plans`), in every codec; `startDate` is `byDate` when absent.
    public static let fields = RecordFields<InvestmentPlan>(
        what: "a plan", wording: .plain(missing: "a plan needs name, target and byDate"),
        fields: [
            .string("name", \.name, required: true),
            .string("portfolio", \.portfolio),
            .fixed("target", \.target, required: true),
            .date("byDate", \.byDate, required: true),
            .fixed("monthly", \.monthly),
            .fixed("expectedReturn", \.expectedReturn),
            .date("startDate", \.startDate),
            .choice("risk", \.risk, "risk level"),
            .choice("status", \.status, "plan status"),
            .string("notes", \.notes),
        ],
        blank: InvestmentPlan(name: "", portfolio: nil, target: .zero, byDate: ISODate.epoch2024, startDate: ISODate.epoch2024),
        finish: { p, seen, _ throws(JSONReadError) in
            if !seen.contains("startDate") { p.startDate = p.byDate }
        })
}

extension WatchEntry {
    /// The fields of a watchlist entry, in every codec.
    public static let fields = RecordFields<WatchEntry>(
        what: "a watchlist entry", wording: .plain(missing: "a watchlist entry needs coinId and dateAdded"),
        fields: [
            .string("coinId", \.coinId, required: true),
            .date("dateAdded", \.dateAdded, required: true),
        ],
        blank: WatchEntry(coinId: "", dateAdded: ISODate.epoch2024))
}
