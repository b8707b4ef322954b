import Foundation
import PortfolioCore

/// Options and JSON shared by the `asset` commands.
enum AssetOptions {
    static let types = AssetType.allCases.map(\.rawValue)

    static func code(_ text: String) throws(UsageError) -> String {
        guard let code = Asset.code(text) else {
            throw .invalidValue(option: "CODE", value: text, reason: "a code is 1–24 characters of A–Z, 0–9, '.', '_', '-' or ':'")
        }
        return code
    }

    static func type(_ text: String) throws(UsageError) -> AssetType {
        AssetType(rawValue: try ArgumentList.choice(text, of: types, option: "--type")) ?? .other
    }

    static let quote = OptionSpec("--quote", "SOURCE", "where its quotes come from: yahoo[:SYMBOL] (Yahoo Finance, no key), "
                                  + "twelvedata[:SYMBOL[@MIC]] (Twelve Data, BITPAL_TWELVEDATA_KEY) or manual (by hand)")

    /// `--quote SOURCE[:SYMBOL]` for the asset `code` (`nil` inside: by hand); an unknown source is a usage error.
    static func quote(_ text: String?, code: String) throws(UsageError) -> AssetQuoteSource?? {
        guard let text else { return nil }
        switch AssetQuoteSource.parse(text, code: code) {
        case let .success(source): return .some(source)
        case .failure:
            throw .invalidChoice(option: "--quote", value: text, choices: ["yahoo", "yahoo:SYMBOL", "twelvedata", "twelvedata:SYMBOL[@MIC]", "manual"])
        }
    }

    /// How tables show where an asset's quotes come from: `yahoo:VWCE.DE`, `twelvedata:SAP@XETR`, or `manual`.
    static func quoteText(_ a: Asset) -> String { a.quote.map { "\($0.service.rawValue):\($0.symbol)" } ?? "manual" }

    static func currency(_ text: String) throws -> String {
        guard let code = CurrencyCode.parse(text)?.code else { throw PortfolioError.unsupportedCurrency(text) }
        return code
    }

    /// The asset's fields (`Asset.fields`) but its creation date, then where its price comes from,
    /// whether anything uses it (it cannot be removed then) and its transactions. A coin (not
    /// `registered`) is priced by the service and never locked.
    static func json(_ a: Asset, book: Book, registered: Bool = true) -> [(String, JSONValue)] {
        let used = book.usage(ofAsset: a.id)
        return Asset.fields.pairs(a, leaving: ["createdDate"], adding: [
            ("source", .string(registered ? "manual" : "coingecko")), ("locked", .bool(registered && used.transactions + used.prices > 0)),
            ("transactionCount", .number(String(used.transactions))),
        ])
    }
}

struct AssetAddCommand: Command {
    static let spec = CommandSpec(
        name: "asset add", summary: "Register a stock, ETF, bond, fund, commodity, property…", arguments: "CODE",
        options: [
            OptionSpec("--name", "NAME", "what it is called (required)"),
            OptionSpec("--type", "TYPE", "what kind of asset (required)", choices: AssetOptions.types),
            OptionSpec("--currency", "CODE", "the currency it trades in (default: the portfolio's, USD)"),
            OptionSpec("--market", "MARKET", "where it trades (NASDAQ, XETRA), free text"),
            OptionSpec("--note", "TEXT", "a note"),
            AssetOptions.quote,
        ],
        group: "Assets and portfolios",
        details: """
        CODE is upper-cased: 1–24 characters of A–Z, 0–9, '.', '_', '-' and ':' (AAPL, VWCE.DE, GOLD,
        FLAT-BERLIN). A registered asset is priced by hand ('bitpal price set AAPL 187.50') unless it
        has a quote source: with --quote yahoo, 'bitpal price refresh' fetches its latest price from
        Yahoo Finance (SYMBOL defaults to CODE: VWCE.DE, OCDO.L, ^GSPC, GC=F); with --quote
        twelvedata, from Twelve Data with the key in BITPAL_TWELVEDATA_KEY (SYMBOL@MIC names the
        market: SAP@XETR; 8 requests a minute on its free plan). By hand, it never causes a
        network call. On the command line a registered code wins over a coin symbol; the
        coin stays reachable by its id.
        """,
        examples: ["bitpal asset add AAPL --name \"Apple Inc.\" --type stock --market NASDAQ",
                   "bitpal asset add VWCE.DE --name \"Vanguard FTSE All-World\" --type etf --currency EUR --quote yahoo",
                   "bitpal asset add SAP --name SAP --type stock --currency EUR --quote twelvedata:SAP@XETR",
                   "bitpal asset add FLAT-BERLIN --name \"Flat in Berlin\" --type real-estate --currency EUR"])

    var code: String
    var name: String
    var type: AssetType
    var currency: String?
    var market: String?
    var note: String?
    var quote: AssetQuoteSource?

    init(parsing a: inout ArgumentList) throws {
        code = try AssetOptions.code(try a.popPositional("CODE"))
        quote = try AssetOptions.quote(a.popOption("--quote"), code: code) ?? nil
        guard let name = a.popOption("--name"), !name.isEmpty else { throw UsageError.missingValue(option: "--name", valueName: "NAME") }
        self.name = name
        guard let type = a.popOption("--type") else { throw UsageError.missingValue(option: "--type", valueName: "TYPE") }
        self.type = try AssetOptions.type(type)
        currency = a.popOption("--currency")
        market = a.popOption("--market").flatMap { $0.isEmpty ? nil : $0 }
        note = a.popOption("--note").flatMap { $0.isEmpty ? nil : $0 }
    }

    func run(_ context: Context) throws -> ExitCode {
        let session = try context.session()
        let now = context.now
        let book = try session.repository.loadSettings()
        let currency = try currency.map(AssetOptions.currency) ?? context.portfolio(in: book).baseCurrency
        let asset = Asset(id: code, name: name, type: type, currency: currency, market: market, notes: note, createdDate: now, quote: quote)
        _ = try session.repository.commit(.addAsset(asset), names: context.names)
        session.resolver.remember(book)
        if let coin = session.resolver.catalog(includingCache: true).resolve(code.lowercased()), coin.symbol.uppercased() == code {
            context.warn("\(code) is also the symbol of \(TextEscaping.escaped(coin.name)); to mean the coin, write '\(TextEscaping.escaped(coin.id))'")
        }
        var updated = book
        updated.assets.append(asset)
        if context.json {
            context.printJSON(.object(AssetOptions.json(asset, book: updated)))
        } else {
            context.out("Registered \(TextEscaping.escaped(code)) (\(TextEscaping.escaped(name))): \(type.rawValue) in \(currency)"
                + (market.map { " on \(TextEscaping.escaped($0))" } ?? "")
                + (quote.map { ", quotes from \($0.service.rawValue):\(TextEscaping.escaped($0.symbol)). Fetch its price with: bitpal price refresh\n" }
                    ?? ". Price it with: bitpal price set \(code) PRICE\n"))
        }
        return .success
    }
}

struct AssetListCommand: Command {
    static let spec = CommandSpec(
        name: "asset list", summary: "Registered assets, with how many transactions use each",
        options: [OptionSpec("--type", "TYPE", "only this type", choices: AssetOptions.types)],
        group: "Assets and portfolios", examples: ["bitpal asset list", "bitpal asset list --type stock --json"])

    var type: AssetType?

    init(parsing a: inout ArgumentList) throws {
        type = try a.popOption("--type").map(AssetOptions.type)
    }

    func run(_ context: Context) throws -> ExitCode {
        let book = try context.session().repository.loadBook()
        let assets = book.assets.filter { type == nil || $0.type == type }.sorted { $0.id < $1.id }
        if context.json {
            context.printJSON(.array(assets.map { .object(AssetOptions.json($0, book: book)) }))
            return .success
        }
        if assets.isEmpty {
            context.out(book.assets.isEmpty ? "No registered assets. Add one with: bitpal asset add AAPL --name \"Apple Inc.\" --type stock\n"
                : "No registered assets of that type.\n")
            return .success
        }
        var table = Table([("CODE", .left), ("NAME", .left), ("TYPE", .left), ("CURRENCY", .left), ("MARKET", .left), ("QUOTES", .left),
                           ("TRANSACTIONS", .right)])
        for a in assets {
            table.add([TextEscaping.escaped(a.id), TextEscaping.escaped(a.name), a.type.rawValue, a.currency,
                       TextEscaping.escaped(a.market ?? ""), TextEscaping.escaped(AssetOptions.quoteText(a)),
                       String(book.usage(ofAsset: a.id).transactions)])
        }
        context.out(table.render(style: context.style))
        return .success
    }
}

struct AssetShowCommand: Command {
    static let spec = CommandSpec(
        name: "asset show", summary: "One asset: its fields, its position in every portfolio, its latest price",
        arguments: "ASSET", group: "Assets and portfolios", examples: ["bitpal asset show AAPL", "bitpal asset show btc --json"])

    var query: String

    init(parsing a: inout ArgumentList) throws {
        query = try a.popPositional("ASSET")
    }

    func run(_ context: Context) throws -> ExitCode {
        let session = try context.session()
        let book = try session.repository.loadBook()
        let label = try session.resolver.resolveAsset(query, in: book)
        let ledger = try context.checkedLedger(book)
        let positions = ledger.positions.values.filter { $0.assetId == label.id && $0.isOpen }.sorted { $0.key < $1.key }
        let quote = session.prices.priceBook(book).latest(label.id)
        let registered = book.asset(id: label.id)
        if context.json {
            // A coin shows as a crypto asset in USD.
            let asset = registered ?? Asset(id: label.id, name: label.name, type: .crypto, createdDate: ISODate.epoch2024)
            var fields = AssetOptions.json(asset, book: book, registered: registered != nil)
            fields.append(("positions", .array(positions.map { p in
                .object([("portfolio", .string(p.key.portfolio)), ("quantity", .string(DecimalFormatting.exact(p.quantity))),
                         ("totalCost", ReportJSON.money(p.costBasis))])
            })))
            fields.append(("latestPrice", quote.map { q in
                .object([("price", .string(DecimalFormatting.exact(q.price))), ("currency", .string(q.currency)),
                         ("date", .string(ISODate.format(q.time))), ("source", .string(q.source.rawValue))])
            } ?? .null))
            context.printJSON(.object(fields))
            return .success
        }
        var rows = Table([("", .left), ("", .left)])
        rows.showsHeader = false
        rows.add([label.type == .crypto && registered == nil ? "Coin" : "Code", TextEscaping.escaped(registered?.id ?? label.symbol.uppercased())])
        rows.add(["Name", TextEscaping.escaped(label.name)])
        rows.add(["Type", label.type.rawValue])
        if let r = registered {
            rows.add(["Currency", r.currency])
            if let m = r.market { rows.add(["Market", TextEscaping.escaped(m)]) }
            if let n = r.notes { rows.add(["Notes", TextEscaping.escaped(n)]) }
        } else {
            rows.add(["Id", TextEscaping.escaped(label.id)])
        }
        rows.add(["Transactions", String(book.usage(ofAsset: label.id).transactions)])
        rows.add(["Latest price",
                  quote.map { "\(Human.price($0)) \($0.currency) (\($0.source.rawValue), \(Human.whenLabelled($0.time, in: context.timeZone)))" } ?? "—"])
        context.out(rows.render(style: context.style))
        if !positions.isEmpty {
            var table = Table([("PORTFOLIO", .left), ("QUANTITY", .right), ("COST BASIS", .right)])
            for p in positions {
                let base = CurrencyCode(book.portfolio(named: p.key.portfolio)?.baseCurrency ?? "USD")
                table.add([TextEscaping.escaped(p.key.portfolio), Human.quantity(p.quantity), Human.money(Money(p.costBasis, base))])
            }
            context.out("\n" + table.render(style: context.style))
        }
        return .success
    }
}

struct AssetEditCommand: Command {
    static let spec = CommandSpec(
        name: "asset edit", summary: "Change a registered asset", arguments: "CODE",
        options: [
            OptionSpec("--name", "NAME", "a new name"),
            OptionSpec("--type", "TYPE", "a new type (only while unused)", choices: AssetOptions.types),
            OptionSpec("--currency", "CODE", "a new currency (only while unused)"),
            OptionSpec("--market", "MARKET", "a new market (\"\" removes it)"),
            OptionSpec("--note", "TEXT", "a new note (\"\" removes it)"),
            OptionSpec("--quote", "SOURCE", "where its quotes come from: yahoo[:SYMBOL], twelvedata[:SYMBOL[@MIC]], or manual (fetched quotes stay)"),
        ],
        group: "Assets and portfolios",
        details: "Type and currency lock once the asset has a transaction or a price; name, market and note may always change.",
        examples: ["bitpal asset edit AAPL --market NASDAQ", "bitpal asset edit GOLD --name \"Gold (1 oz bars)\""])

    var code: String
    var name: String?
    var type: AssetType?
    var currency: String?
    var market: String?
    var note: String?
    var quote: AssetQuoteSource??

    init(parsing a: inout ArgumentList) throws {
        code = try AssetOptions.code(try a.popPositional("CODE"))
        quote = try AssetOptions.quote(a.popOption("--quote"), code: code)
        name = a.popOption("--name")
        type = try a.popOption("--type").map(AssetOptions.type)
        currency = a.popOption("--currency")
        market = a.popOption("--market")
        note = a.popOption("--note")
        if name?.isEmpty == true { throw UsageError.missingValue(option: "--name", valueName: "NAME") }
        if name == nil && type == nil && currency == nil && market == nil && note == nil && quote == nil {
            throw UsageError.conflict("nothing to change: give at least one of --name, --type, --currency, --market, --note, --quote")
        }
    }

    func run(_ context: Context) throws -> ExitCode {
        let currency = try self.currency.map(AssetOptions.currency)
        var edit = AssetEdit()
        (edit.name, edit.type, edit.currency, edit.market, edit.notes, edit.quote) = (name, type, currency, market, note, quote)
        let (done, book) = try context.session().repository.commit(.editAsset(code, edit), names: context.names)
        guard let asset = done.asset else { return .success }
        if context.json {
            context.printJSON(.object(AssetOptions.json(asset, book: book)))
        } else {
            context.out("Changed \(TextEscaping.escaped(asset.id)): \(TextEscaping.escaped(asset.name)), \(asset.type.rawValue) in \(asset.currency)"
                + (asset.market.map { " on \(TextEscaping.escaped($0))" } ?? "") + ".\n")
        }
        return .success
    }
}

struct AssetRemoveCommand: Command {
    static let spec = CommandSpec(
        name: "asset remove", summary: "Unregister an asset (and its manual prices)", arguments: "CODE",
        options: [OptionSpec("--with-transactions", nil, "delete its transactions too (and their linked legs), if what remains stays valid")],
        group: "Assets and portfolios",
        details: "Refused while transactions use it, unless --with-transactions: then all or nothing, as 'delete'.",
        examples: ["bitpal asset remove GOLD", "bitpal asset remove OLDFUND --with-transactions"])

    var code: String
    var withTransactions: Bool

    init(parsing a: inout ArgumentList) throws {
        code = try AssetOptions.code(try a.popPositional("CODE"))
        withTransactions = a.popFlag("--with-transactions")
    }

    func run(_ context: Context) throws -> ExitCode {
        let session = try context.session()
        _ = try session.repository.loadSettings()
        let removed = try session.repository.commit(.removeAsset(code, withTransactions: withTransactions), names: context.names).applied.removedTransactions
        if context.json {
            context.printJSON(.object([("removed", .string(code)), ("transactionsDeleted", .number(String(removed)))]))
        } else {
            context.out("Removed \(TextEscaping.escaped(code))" + (removed > 0 ? " and \(removed) transaction\(removed == 1 ? "" : "s")" : "") + ".\n")
        }
        return .success
    }
}
