import Foundation

/// What a registered asset is.
public enum AssetType: String, CaseIterable, Sendable, Hashable {
    case crypto, stock, etf, bond
    case mutualFund = "mutual-fund"
    case commodity
    case realEstate = "real-estate"
    case cash, other
}

/// Where a registered asset's quotes come from, when not by hand (market-data.md, "Sources of an asset").
public struct AssetQuoteSource: Hashable, Sendable {
    public enum Service: String, CaseIterable, Sendable {
        /// Yahoo Finance's chart endpoint, no key.
        case yahoo
        /// Twelve Data, with a key (`BITPAL_TWELVEDATA_KEY`).
        case twelvedata

        /// How messages name it: `Yahoo Finance`, `Twelve Data`.
        public var name: String {
            switch self {
            case .yahoo: "Yahoo Finance"
            case .twelvedata: "Twelve Data"
            }
        }

        /// The source of the quotes fetched from it.
        public var quoteSource: QuoteSource {
            switch self {
            case .yahoo: .yahoo
            case .twelvedata: .twelvedata
            }
        }
    }

    public var service: Service
    /// The service's symbol (`VWCE.DE`, `^GSPC`, `0P000071W8.TO`); for Twelve Data `SYMBOL@MIC` names the market (`SAP@XETR`).
    public var symbol: String

    public init(service: Service, symbol: String) {
        self.service = service
        self.symbol = symbol
    }

    /// `yahoo[:SYMBOL]`, `twelvedata[:SYMBOL[@MIC]]` or `manual` (`nil`), as `--quote` takes it; `code` is the default symbol.
    /// - Returns: `.failure` with the unknown source's name.
    public static func parse(_ text: String, code: String) -> Result<AssetQuoteSource?, UnknownSource> {
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        let name = parts[0].lowercased()
        if name == "manual" && parts.count == 1 { return .success(nil) }
        guard let service = Service(rawValue: name) else { return .failure(UnknownSource(name: parts[0])) }
        let symbol = parts.count == 2 ? parts[1] : code
        guard !symbol.isEmpty, symbol.utf8.count <= 40, symbol.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }) else {
            return .failure(UnknownSource(name: text))
        }
        if service == .twelvedata, symbol.contains("@") {
            let sides = symbol.split(separator: "@", omittingEmptySubsequences: false)
            guard sides.count == 2, !sides[0].isEmpty, !sides[1].isEmpty else { return .failure(UnknownSource(name: text)) }
        }
        return .success(AssetQuoteSource(service: service, symbol: symbol))
    }

    public struct UnknownSource: Error, Sendable { public var name: String }
}

/// An asset the user registered (a stock, a fund, gold, a flat): priced by hand, or by a quote source.
public struct Asset: Hashable, Sendable {
    /// The code, upper case: 1–24 characters of `A–Z 0–9 . _ - :`.
    public var id: String
    public var name: String
    public var type: AssetType
    public var currency: String
    public var market: String?
    public var notes: String?
    public var createdDate: Date
    /// The service its quotes are fetched from, and the symbol there; `nil`: by hand only (`price set`, `price import`).
    public var quoteService: AssetQuoteSource.Service?
    public var quoteSymbol: String?

    /// Where its quotes are fetched from; `nil`: by hand only.
    public var quote: AssetQuoteSource? {
        get { quoteService.map { AssetQuoteSource(service: $0, symbol: quoteSymbol ?? id) } }
        set {
            quoteService = newValue?.service
            quoteSymbol = newValue?.symbol
        }
    }

    public init(id: String, name: String, type: AssetType, currency: String = "USD", market: String? = nil,
                notes: String? = nil, createdDate: Date, quote: AssetQuoteSource? = nil) {
        quoteService = quote?.service
        quoteSymbol = quote?.symbol
        self.id = id
        self.name = name
        self.type = type
        self.currency = currency
        self.market = market
        self.notes = notes
        self.createdDate = createdDate
    }

    /// `text` upper-cased when it is a valid code, else `nil`.
    public static func code(_ text: String) -> String? {
        let upper = text.uppercased()
        guard (1...24).contains(upper.utf8.count) else { return nil }
        for b in upper.utf8 {
            switch b {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: ":"): continue
            default: return nil
            }
        }
        return upper
    }

    /// Whether a stored asset id names a registered asset (coins are lower case).
    public static func isRegisteredID(_ id: String) -> Bool {
        guard let first = id.utf8.first else { return false }
        return !(UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first) && id.utf8.allSatisfy { !(UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) }
    }
}

/// A portfolio's target mix (allocation-plans.md): percentages by asset type or by asset that add
/// up to exactly 100; the class `cash` is the portfolio's cash under either basis.
public struct Targets: Hashable, Sendable {
    public enum Basis: String, CaseIterable, Sendable { case type, asset }

    public var by: Basis
    /// (class, percent), in the order given.
    public var weights: [Weight]

    public struct Weight: Hashable, Sendable {
        public var target: String
        public var percent: Fixed18

        public init(_ target: String, _ percent: Fixed18) {
            self.target = target
            self.percent = percent
        }
    }

    public init(by: Basis, weights: [Weight]) {
        self.by = by
        self.weights = weights
    }

    /// Σ percent (`nil` past 128 bits).
    public var sum: Fixed18? {
        var total = Fixed18.zero
        for w in weights {
            guard let t = try? total.adding(w.percent) else { return nil }
            total = t
        }
        return total
    }

    /// The class a holding of `asset` belongs to.
    public func target(of asset: AssetLabel) -> String { by == .type ? asset.type.rawValue : asset.id }
}

/// A named portfolio: transactions belong to exactly one.
public struct Portfolio: Hashable, Sendable {
    public static let mainName = "main"

    public var name: String
    public var baseCurrency: String
    public var description: String?
    public var active: Bool
    public var createdDate: Date
    /// Whether the portfolio keeps a cash ledger: buys spend cash, sells and income bring it back,
    /// and cash never goes below zero.
    public var trackCash: Bool
    /// Which basis leaves on a disposal: the pool (`average`, the default) or lots.
    public var costBasisMethod: CostBasisMethod
    /// The target mix (`target set`), or `nil`.
    public var targets: Targets?

    public init(name: String, baseCurrency: String = "USD", description: String? = nil, active: Bool = true,
                createdDate: Date = ISODate.epoch2024, trackCash: Bool = false, costBasisMethod: CostBasisMethod = .average) {
        self.trackCash = trackCash
        self.costBasisMethod = costBasisMethod
        self.name = name
        self.baseCurrency = baseCurrency
        self.description = description
        self.active = active
        self.createdDate = createdDate
    }

    /// Whether `text` is a valid name: 1–40 characters of letters, digits, `-`, `_`, `.`.
    public static func isValidName(_ text: String) -> Bool {
        guard (1...40).contains(text.count) else { return false }
        return text.unicodeScalars.allSatisfy { s in
            s == "-" || s == "_" || s == "." || (s.isASCII && (CharacterSet.alphanumerics.contains(s)))
        }
    }
}

/// Everything the user typed: the content of `portfolio.json`.
public struct Book: Sendable, Equatable {
    /// The store format this build writes; a file with a higher one is refused, never overwritten.
    public static let formatVersion = 3

    public var defaultPortfolio: String
    public var portfolios: [Portfolio]
    public var assets: [Asset]
    public var transactions: [Transaction]
    public var watchlist: [WatchEntry]
    /// Prices entered with `price set`.
    public var manualPrices: [Quote]
    /// Exchange rates, in recording order (`fx set`).
    public var fxRates: [FXRate] = []
    /// Investment plans (`plan add`).
    public var plans: [InvestmentPlan] = []
    /// Saving plans (`saving add`).
    public var savingPlans: [SavingPlan] = []
    /// Price alerts and their last state (`alert add`).
    public var alerts: [PriceAlert] = []
    /// Rates beyond `fxRates` (the price cache's fetched and imported ones), read only when
    /// `fxRate(for:in:on:)` needs a rate; not stored.
    public var moreRates: (@Sendable () -> [FXRate])?
    /// Asked by `fxRate(for:in:on:)` when no rate of FROM→TO is known at a date: fetches rates and
    /// says whether it found any (then the lookup is made again); not stored.
    public var fetchRates: (@Sendable (_ from: String, _ to: String, _ date: Date) -> Bool)?
    /// Top-level keys this build does not know, with their JSON text, kept as they were.
    public var unknownKeys: [(key: String, json: [UInt8])] = []
    /// The version the file was read in (1 for a file to migrate on the first write).
    public var readVersion = Book.formatVersion
    /// Ids of the records the current change added or edited (not stored; messages only).
    public var changed: Set<UUID> = []
    /// Set on a book read from a snapshot (`Repository.loadForReports`): its transactions are not in
    /// memory (`transactions` is empty), and this is what reports need of them. Not stored.
    public internal(set) var omitted: OmittedTransactions?
    /// What a clean `admitRemembering` checked, so that the store's `admit` of the same book is not
    /// replayed twice (not stored; compared with the book itself before it is trusted).
    public var admission: Admission?

    public init(transactions: [Transaction] = [], watchlist: [WatchEntry] = [], manualPrices: [Quote] = [],
                portfolios: [Portfolio] = [Portfolio(name: Portfolio.mainName)], assets: [Asset] = [],
                defaultPortfolio: String = Portfolio.mainName) {
        self.transactions = transactions
        self.watchlist = watchlist
        self.manualPrices = manualPrices
        self.portfolios = portfolios
        self.assets = assets
        self.defaultPortfolio = defaultPortfolio
    }

    public static func == (a: Book, b: Book) -> Bool {
        a.defaultPortfolio == b.defaultPortfolio && a.portfolios == b.portfolios && a.assets == b.assets
            && a.transactions == b.transactions && a.watchlist == b.watchlist && a.manualPrices == b.manualPrices
            && a.fxRates == b.fxRates && a.plans == b.plans && a.savingPlans == b.savingPlans && a.alerts == b.alerts
            && a.unknownKeys.map(\.key) == b.unknownKeys.map(\.key) && a.unknownKeys.map(\.json) == b.unknownKeys.map(\.json)
    }

    /// The portfolio named `name`, any case.
    public func portfolio(named name: String) -> Portfolio? {
        if let exact = portfolios.first(where: { $0.name == name }) { return exact }
        let lower = name.lowercased()
        return portfolios.first { $0.name.lowercased() == lower }
    }

    public func asset(id: String) -> Asset? { assets.first { $0.id == id } }
}

extension Book {
    /// The currency a money-bearing transaction of `assetId` in `portfolio` is in: `given` if
    /// any (a supported code, and a registered asset's own), else the asset's (a registered
    /// one), else the portfolio's base. Until exchange rates exist, anything but the base is refused.
    public func currency(given: String?, assetId: String, portfolio: Portfolio) throws(PortfolioError) -> String {
        let registered = asset(id: assetId)
        var currency = registered?.currency ?? portfolio.baseCurrency
        if let given {
            guard let code = CurrencyCode.parse(given)?.code else { throw .unsupportedCurrency(given) }
            if let registered, registered.currency != code {
                throw .currencyMismatch(given: code, expected: registered.currency, reason: "the currency \(registered.id) trades in")
            }
            currency = code
        }
        return currency
    }

    /// The rate to store with money in `currency` at `date` in `portfolio`: `nil` in its base currency;
    /// else `given` (`--fx-rate`), else the table's newest rate at or before the date (an inverse
    /// counts; typed ones and `moreRates` alike), else what `fetchRates` finds, else a refusal saying how to give one.
    public func fxRate(for currency: String, in portfolio: Portfolio, on date: Date, given: Fixed18? = nil) throws(PortfolioError) -> Fixed18? {
        if currency == portfolio.baseCurrency {
            if given != nil { throw .currencyMismatch(given: currency, expected: currency, reason: "the base currency of '\(portfolio.name)', which takes no --fx-rate") }
            return nil
        }
        if let given {
            guard given.units > 0 else { throw .priceNotPositive }
            return given
        }
        // Typed, fetched and imported rates alike (the newest at or before the date), as reports use them.
        func lookup() -> FXTable.Found? { FXTable(fxRates + (moreRates?() ?? [])).rate(from: currency, to: portfolio.baseCurrency, on: date) }
        guard let found = lookup() ?? (fetchRates?(currency, portfolio.baseCurrency, date) == true ? lookup() : nil) else {
            throw .fxRateMissing(from: currency, to: portfolio.baseCurrency, date: date)
        }
        return found.rate
    }
}
