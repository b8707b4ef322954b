import Foundation

/// One row to import, with its fields by `TransactionField` and where it came from.
public struct ImportRow: Sendable {
    /// `line 7` for CSV (the line where the record starts), `item 3` for JSON.
    public var location: String
    public var fields: ImportFields
    /// Position in the file, for ordering messages.
    public var order: Int

    public init(location: String, fields: ImportFields, order: Int = 0) {
        self.location = location
        self.fields = fields
        self.order = order
    }
}

/// A row's values as text, one per `TransactionField`, stored without a dictionary (a million rows stay small).
public struct ImportFields: Sendable, ExpressibleByDictionaryLiteral {
    public typealias Column = TransactionField

    /// One value per field, in `TransactionField` order: copying a row's fields is one reference, not thirteen.
    private var values = [String?](repeating: nil, count: 13)

    public init() {}

    /// Keys are field names or their aliases (`coin`, `pricePerCoin`), any case.
    public init(dictionaryLiteral elements: (String, String)...) {
        for (k, v) in elements { self[k] = v }
    }

    /// The field's place in `values`.
    @inline(__always)
    private static func slot(_ field: TransactionField) -> Int {
        switch field {
        case .id: 0
        case .portfolio: 1
        case .type: 2
        case .assetId: 3
        case .amount: 4
        case .price: 5
        case .total: 6
        case .fee: 7
        case .currency: 8
        case .fxRate: 9
        case .date: 10
        case .notes: 11
        case .linkedId: 12
        }
    }

    public subscript(_ field: TransactionField) -> String? {
        get { values[Self.slot(field)] }
        set { values[Self.slot(field)] = newValue }
    }

    /// The field a name or alias means (`coin` is `assetId`); unknown names read `nil` and are not kept.
    public subscript(_ name: String) -> String? {
        get { TransactionField.named(name).flatMap { self[$0] } }
        set { if let f = TransactionField.named(name) { self[f] = newValue } }
    }

    /// The value trimmed of spaces, `nil` when absent or empty.
    func text(_ field: TransactionField) -> String? {
        guard let v = self[field]?.trimmedSpaces, !v.isEmpty else { return nil }
        return v
    }
}

/// An import that cannot go ahead: the problems found, each prefixed with its location.
public struct ImportFailure: Error, Equatable, Sendable {
    /// How many problems are listed at most: a file of millions of bad lines is summed up, not printed.
    public static let listed = 20

    /// The first problems, in file order (all of them when there are at most `listed`).
    public var problems: [String]
    /// How many problems were found in all.
    public var count: Int

    public init(problems: [String]) {
        self.problems = problems
        count = problems.count
    }

    public init(problems: [String], count: Int) {
        self.problems = problems
        self.count = max(count, problems.count)
    }

    /// The first `listed` problems and how many there are in all, gathered one at a time.
    public struct Collector: Sendable {
        public private(set) var first: [String] = []
        public private(set) var count = 0

        public init() {}

        /// Counts a problem, keeping its text while fewer than `listed` are kept (`text` is only made then).
        public mutating func add(_ text: @autoclosure () -> String) {
            count += 1
            if first.count < ImportFailure.listed { first.append(text()) }
        }

        public var failure: ImportFailure? { count == 0 ? nil : ImportFailure(problems: first, count: count) }
    }
}

/// What a JSON file to import holds: transaction rows, and for a whole-book export
/// (`"format": "bitpal-export"`) the portfolios, assets and manual prices it names.
public struct ImportDocument: Sendable {
    public var rows: [ImportRow]
    public var portfolios: [Portfolio]
    public var assets: [Asset]
    public var manualPrices: [Quote]
    /// The rest of a whole-book export: what `portfolio.json` keeps besides the transactions.
    public var defaultPortfolio: String?
    public var fxRates: [FXRate] = []
    public var plans: [InvestmentPlan] = []
    public var savingPlans: [SavingPlan] = []
    public var alerts: [PriceAlert] = []
    public var watchlist: [WatchEntry] = []
    /// A whole-book export, not a plain array of transactions (or a CSV).
    public var isBook: Bool

    public init(rows: [ImportRow], portfolios: [Portfolio] = [], assets: [Asset] = [], manualPrices: [Quote] = [], isBook: Bool = false) {
        self.rows = rows
        self.portfolios = portfolios
        self.assets = assets
        self.manualPrices = manualPrices
        self.isBook = isBook
    }
}

/// What an import adds and what it recognises as already recorded.
public struct ImportPlan: Sendable {
    public var added: [Transaction]
    public var skipped: Int
    /// Where each added transaction came from (`line 7`), for messages.
    public var locations: [String] = []
    /// The file position of each added transaction's row (sorts messages).
    var orders: [Int] = []
    /// The check of the merged history, when it broke no rule (see `Book.admission`).
    public var admission: Admission?

    public init(added: [Transaction], skipped: Int, locations: [String] = []) {
        self.added = added
        self.skipped = skipped
        self.locations = locations
    }

    /// `message` prefixed with the row the failing transaction came from, when it is one of ours.
    public func locate(_ error: PortfolioError, names: MessageNames = .plain) -> String {
        located(error, names: names).text
    }

    /// The message and the position of its row (`Int.max` when it is no row's).
    func located(_ error: PortfolioError, names: MessageNames) -> (order: Int, text: String) {
        let text = error.description(names: names)
        switch error {
        case let .insufficientQuantity(s):
            if let (location, order) = row(of: s.id) { return (order, "\(location): \(text)") }
        case let .unlinkedTransferIn(id):
            if let (location, order) = row(of: id) { return (order, "\(location): \(text)") }
        case let .brokenLink(legs, _):
            for leg in legs { if let (location, order) = row(of: leg.id) { return (order, "\(location): \(text)") } }
        case .breaksLater:
            return (Int.max, "the imported rows would break a recorded transaction: " + text)
        default: break
        }
        return (Int.max, text)
    }

    /// Problems of the merged history (`BookRejection`), each at its row when it is one of ours.
    func located(_ rejection: BookRejection, in book: Book, names: MessageNames) -> [(order: Int, text: String)] {
        rejection.problems.map { p in
            let detail = p.describe(names: names)
            if let (location, order) = row(of: p.id) { return (order, "\(location): \(detail)") }
            return (Int.max, "the imported rows would leave a problem in the store: \(detail)")
        }
    }

    private func row(of id: UUID) -> (String, Int)? {
        guard let i = added.firstIndex(where: { $0.id == id }), i < locations.count else { return nil }
        return (locations[i], i < orders.count ? orders[i] : Int.max - 1)
    }
}

/// What a whole import did, besides the transactions: portfolios and assets it created, manual prices it added.
public struct ImportOutcome: Sendable {
    public var plan: ImportPlan
    public var createdPortfolios: [String] = []
    public var createdAssets: [String] = []
    public var addedPrices: Int = 0
    /// Rates, plans, saving plans and alerts a whole-book export added.
    public var addedSettings: Int = 0
    public var skippedPrices: Int = 0

    /// Whether anything would be written.
    public var changesStore: Bool {
        !plan.added.isEmpty || !createdPortfolios.isEmpty || !createdAssets.isEmpty || addedPrices > 0 || addedSettings > 0
    }
}

/// Reads `bitpal import` files and checks every row as `add` would, all or nothing.
///
/// Rows are read into transactions by their kind's `KindRule`; the merged history is checked by
/// `Book.admit`, the one gate every write passes, and its errors are mapped back to the rows.
public enum TransactionImport {
    /// The columns a CSV must have; `price` is needed only by the kinds whose rule says so.
    public static let requiredColumns: [TransactionField] = TransactionField.order.filter { $0.required && $0 != .id }
    static var optionalColumns: [TransactionField] { TransactionField.order.filter { !requiredColumns.contains($0) } }

    /// Rows of a bitpal CSV: a header naming the columns in any order (case-insensitive), by the
    /// names and aliases of `TransactionField`; unknown columns are ignored.
    public static func rows(csv bytes: [UInt8]) throws(ImportFailure) -> [ImportRow] {
        var columns: [(Int, TransactionField)] = []
        var headerSeen = false
        var rows: [ImportRow] = []
        rows.reserveCapacity(bytes.count / 60)
        var headerProblem: String?
        do {
            try CSV.forEachRecord(bytes) { fields, line in
                if !headerSeen {
                    headerSeen = true
                    var seen: [TransactionField: String] = [:]
                    for (i, raw) in fields.enumerated() {
                        let name = raw.trimmedSpaces
                        guard let field = TransactionField.named(name) else { continue }
                        if let first = seen[field] {
                            headerProblem = "line \(line): column '\(field.columnName)' appears twice"
                                + (first.lowercased() == name.lowercased() ? "" : " (as '\(TextEscaping.escaped(first))' and '\(TextEscaping.escaped(name))')")
                            return false
                        }
                        seen[field] = name
                        columns.append((i, field))
                    }
                    let missing = requiredColumns.filter { seen[$0] == nil }
                    if !missing.isEmpty {
                        headerProblem = "line \(line): missing column\(missing.count == 1 ? "" : "s") "
                            + missing.map { "'\($0.columnName)'" }.joined(separator: ", ")
                            + " (need " + requiredColumns.map(\.columnName).joined(separator: ", ")
                            + "; optional " + optionalColumns.map(\.columnName).joined(separator: ", ") + ")"
                        return false
                    }
                    return true
                }
                var row = ImportFields()
                for (i, column) in columns where i < fields.count { row[column] = fields[i] }
                rows.append(ImportRow(location: "line \(line)", fields: row, order: line))
                return true
            }
        } catch {
            throw ImportFailure(problems: [error.description])
        }
        if let headerProblem { throw ImportFailure(problems: [headerProblem]) }
        if !headerSeen { throw ImportFailure(problems: ["the file is empty (expected a header row)"]) }
        return rows
    }

    /// Rows of a JSON file: a plain array of transaction objects (as `list --json` prints them),
    /// or the transactions of a whole-book export.
    public static func rows(json bytes: [UInt8]) throws(ImportFailure) -> [ImportRow] {
        try document(json: bytes).rows
    }

    /// The name of a whole-book export's format.
    public static let exportFormatName = "bitpal-export"

    /// A JSON file to import: a plain array of transaction objects, or a whole-book export
    /// `{"format": "bitpal-export", "version": 2, "portfolios", "assets", "transactions", "manualPrices"}`.
    public static func document(json bytes: [UInt8]) throws(ImportFailure) -> ImportDocument {
        var r = JSONReader(bytes: bytes)
        var item = 0
        do {
            switch r.peek() {
            case UInt8(ascii: "[")?:
                var rows: [ImportRow] = []
                try r.beginArray()
                while try r.nextElement() {
                    item += 1
                    rows.append(try readRow(&r, item: item))
                }
                try r.finish()
                return ImportDocument(rows: rows)
            case UInt8(ascii: "{")?:
                var doc = ImportDocument(rows: [], isBook: true)
                var format: String?
                var version: Int?
                try r.beginObject()
                while let key = try r.nextKey() {
                    switch key {
                    case "format":
                        let f = try r.readString()
                        if f == PortfolioCodec.formatName {
                            throw r.error("this is a bitpal store (portfolio.json), not an export; make one with 'bitpal export --format json'")
                        }
                        if f != exportFormatName { throw r.error("this is not a bitpal export (format '\(TextEscaping.escaped(f))')") }
                        format = f
                    case "version":
                        let v = try r.readInt()
                        if v > TransactionExport.version {
                            throw r.error("this export has format version \(v), but this bitpal reads up to version \(TransactionExport.version); upgrade bitpal")
                        }
                        if v < 2 { throw r.error("unknown export version \(v)") }
                        version = v
                    case "portfolios":
                        doc.portfolios += try r.readArray(PortfolioCodec.readPortfolio)
                    case "assets":
                        doc.assets += try r.readArray(PortfolioCodec.readAsset)
                    case "transactions":
                        try r.beginArray()
                        while try r.nextElement() {
                            item += 1
                            doc.rows.append(try readRow(&r, item: item))
                        }
                    case "manualPrices":
                        doc.manualPrices += try r.readArray(PortfolioCodec.readManualPrice)
                    case "defaultPortfolio": doc.defaultPortfolio = try r.readString()
                    // The rest of the book, read as the store reads it.
                    case "fxRates": doc.fxRates = try r.readArray(PortfolioCodec.readRate)
                    case "plans": doc.plans = try r.readArray(PortfolioCodec.readPlan)
                    case "savingPlans": doc.savingPlans = try r.readArray { r throws(JSONReadError) in try SavingPlan.fields.read(&r) }
                    case "alerts": doc.alerts = try r.readArray { r throws(JSONReadError) in try PriceAlert.fields.read(&r) }
                    case "watchlist": doc.watchlist = try r.readArray(PortfolioCodec.readWatchEntry)
                    default:
                        try r.skipValue()
                    }
                }
                try r.finish()
                guard format != nil else { throw JSONReadError(message: "no \"format\": \"\(exportFormatName)\" field", line: 1, column: 1) }
                guard version != nil else { throw JSONReadError(message: "no \"version\" field", line: 1, column: 1) }
                return doc
            default:
                throw r.error("expected an array of transactions or a bitpal export object")
            }
        } catch {
            throw ImportFailure(problems: ["not a JSON array of transactions or a bitpal export: \(error)"])
        }
    }

    /// One transaction object: keys by `TransactionField` names and aliases (any case), null
    /// values as absent; decimals as strings, or bare numbers read from their text.
    static func readRow(_ r: inout JSONReader, item: Int) throws(JSONReadError) -> ImportRow {
        var fields = ImportFields()
        var seen: Set<TransactionField> = []
        try r.beginObject()
        while let keyBytes = try r.nextKeyBytes() {
            let field = TransactionField.key(keyBytes) ?? TransactionField.named(String(decoding: keyBytes, as: UTF8.self))
            guard let field else {
                try r.skipValue()
                continue
            }
            if !seen.insert(field).inserted { throw r.error("item \(item) gives \(field.name) twice") }
            if r.consumeNull() { continue }
            switch field {
            case .amount, .price, .total, .fee:
                fields[field] = r.peek() == UInt8(ascii: "\"") ? try r.readString() : try r.readNumberText()
            default:
                fields[field] = try r.readString()
            }
        }
        return ImportRow(location: "item \(item)", fields: fields, order: item)
    }

    /// Checks every row, drops rows already recorded, and checks the merged history with
    /// `Book.admit`, mapping its error back to the row.
    ///
    /// A row is already recorded when its `id` is in the store, or (unless `allowDuplicates`)
    /// when a stored transaction has the same `TradeKey` — counted as a multiset, so two identical
    /// rows in a first import both land and importing the file again adds none.
    ///
    /// - Parameters:
    ///   - portfolio: the portfolio of rows that name none (`--portfolio`, else the default).
    ///   - resolveAsset: turns the `asset` text into a stored asset id (a registered code, else a
    ///     coin id), or throws (`PortfolioError.coinNotFound`).
    /// - Throws: `ImportFailure` listing every failing row.
    public static func plan(
        _ rows: [ImportRow], into book: Book, portfolio defaultPortfolio: String, now: Date, allowDuplicates: Bool,
        timeZone: TimeZone = .current, names: MessageNames = .plain, resolveAsset: (String) throws -> String
    ) throws(ImportFailure) -> ImportPlan {
        var problems: [(Int, String)] = []
        var parsed: [Transaction] = []
        var parsedRow: [Int] = []
        var assetCache: [String: Result<String, Error>] = [:]
        var idsInFile: [UUID: String] = [:]
        parsed.reserveCapacity(rows.count)
        parsedRow.reserveCapacity(rows.count)
        let fallback = book.portfolio(named: defaultPortfolio)
        let registered = Set(book.assets.map(\.id))
        for (index, row) in rows.enumerated() {
            do {
                let portfolio: Portfolio
                if let name = row.fields.text(.portfolio) {
                    guard let p = book.portfolio(named: name) else { throw PortfolioError.portfolioNotFound(name) }
                    portfolio = p
                } else {
                    guard let fallback else { throw PortfolioError.portfolioNotFound(defaultPortfolio) }
                    portfolio = fallback
                }
                let assetText = row.fields.text(.assetId) ?? ""
                let kind = row.fields.text(.type).flatMap(TransactionType.named)
                let assetId: String
                switch assetCache[assetText] {
                case _ where assetText.isEmpty:
                    // Cash alone names no asset (a deposit, a withdrawal, interest on cash); other kinds must.
                    guard let kind, KindRule.of(kind).asset != .required else { throw CommandError("missing \(TransactionField.assetId.columnName)") }
                    assetId = ""
                case let .success(id)?: assetId = id
                case let .failure(e)?: throw e
                case nil:
                    do {
                        assetId = try resolveAsset(assetText)
                        assetCache[assetText] = .success(assetId)
                    } catch {
                        assetCache[assetText] = .failure(error)
                        throw error
                    }
                }
                if Asset.isRegisteredID(assetId) && !registered.contains(assetId) { throw PortfolioError.assetNotFound(assetId) }
                let tx = try transaction(from: row, assetId: assetId, portfolio: portfolio, book: book, timeZone: timeZone)
                try ValueRules.check(tx, now: now)
                if row.fields.text(.id) != nil {
                    if let first = idsInFile[tx.id] {
                        throw CommandError("id \(UUIDText.lowercased(tx.id)) also appears at \(first)")
                    }
                    idsInFile[tx.id] = row.location
                }
                parsed.append(tx)
                parsedRow.append(index)
            } catch let error as PortfolioError {
                problems.append((row.order, "\(row.location): \(error.description(names: names))"))
            } catch {
                problems.append((row.order, "\(row.location): \(error)"))
            }
        }

        // De-duplicate against the store, as a multiset of trade keys.
        let knownIDs = Set(book.transactions.map(\.id))
        var counts: [TradeKey: Int] = [:]
        if !allowDuplicates { for t in book.transactions { counts[t.tradeKey, default: 0] += 1 } }
        var added: [Transaction] = []
        added.reserveCapacity(parsed.count)
        var addedRow: [Int] = []
        addedRow.reserveCapacity(parsed.count)
        var skipped = 0
        for (i, tx) in parsed.enumerated() {
            if !knownIDs.isEmpty && knownIDs.contains(tx.id) { skipped += 1; continue }
            if !counts.isEmpty, let n = counts[tx.tradeKey], n > 0 {
                counts[tx.tradeKey] = n - 1
                skipped += 1
                continue
            }
            added.append(tx)
            addedRow.append(parsedRow[i])
        }
        parsed = []
        var plan = ImportPlan(added: added, skipped: skipped, locations: addedRow.map { rows[$0].location })
        plan.orders = addedRow.map { rows[$0].order }

        // The merged history is checked where every write is: `Book.admit`.
        if !added.isEmpty {
            var merged = book
            merged.add(added)
            do {
                try merged.admitRemembering(from: book, now: now)
                plan.admission = merged.admission
            } catch let error as PortfolioError {
                problems.append(plan.located(error, names: names))
            } catch let rejection as BookRejection {
                problems += plan.located(rejection, in: merged, names: names)
            } catch {
                problems.append((Int.max, "\(error)"))
            }
        }
        if !problems.isEmpty {
            throw ImportFailure(problems: problems.enumerated().sorted { ($0.element.0, $0.offset) < ($1.element.0, $1.offset) }.map(\.element.1))
        }
        return plan
    }

    /// `plan` into a store of `existing` transactions in one portfolio, `main` (for callers
    /// that know no portfolios or assets); `resolveCoin` turns the asset text into a coin id.
    public static func plan(
        _ rows: [ImportRow], into existing: [Transaction], now: Date, allowDuplicates: Bool,
        timeZone: TimeZone = .current, resolveCoin: (String) throws -> String
    ) throws(ImportFailure) -> ImportPlan {
        var names = Set([Portfolio.mainName])
        var portfolios = [Portfolio(name: Portfolio.mainName)]
        for t in existing where names.insert(t.portfolio).inserted { portfolios.append(Portfolio(name: t.portfolio)) }
        let book = Book(transactions: existing, portfolios: portfolios)
        return try plan(rows, into: book, portfolio: Portfolio.mainName, now: now, allowDuplicates: allowDuplicates,
                        timeZone: timeZone, resolveAsset: resolveCoin)
    }

    /// Merges a whole import into `book`: creates the portfolios and assets the document names
    /// that do not exist (one that exists with another base currency, type or currency fails the
    /// import), plans the rows, adds its manual prices; all or nothing.
    ///
    /// `book` is changed only when nothing fails.
    public static func merge(
        _ doc: ImportDocument, into book: inout Book, portfolio defaultPortfolio: String, now: Date, allowDuplicates: Bool,
        timeZone: TimeZone = .current, names: MessageNames = .plain, resolveAsset: (String) throws -> String
    ) throws(ImportFailure) -> ImportOutcome {
        var merged = book
        var problems: [String] = []
        var outcome = ImportOutcome(plan: ImportPlan(added: [], skipped: 0))
        for p in doc.portfolios {
            let name = TextEscaping.escaped(p.name)
            guard Portfolio.isValidName(p.name) else {
                problems.append("portfolio '\(name)': a portfolio name is 1–40 letters, digits, '-', '_' or '.'")
                continue
            }
            guard CurrencyCode.isSupported(p.baseCurrency) else {
                problems.append("portfolio '\(name)': " + PortfolioError.unsupportedCurrency(p.baseCurrency).description)
                continue
            }
            if let existing = merged.portfolio(named: p.name), let i = merged.portfolios.firstIndex(of: existing),
               existing == Portfolio(name: existing.name, createdDate: existing.createdDate),
               !book.transactions.contains(where: { $0.portfolio == existing.name }) {
                // A portfolio as bitpal first makes it, with nothing in it yet (the 'main' of a new folder),
                // takes the file's settings whole.
                var adopted = p
                adopted.name = existing.name
                adopted.createdDate = existing.createdDate
                if merged.portfolios[i] != adopted { outcome.addedSettings += 1 }
                merged.portfolios[i] = adopted
                continue
            }
            if let existing = merged.portfolio(named: p.name) {
                if let i = merged.portfolios.firstIndex(of: existing), existing.targets == nil, p.targets != nil {
                    merged.portfolios[i].targets = p.targets
                    outcome.addedSettings += 1
                }
                if existing.baseCurrency != p.baseCurrency {
                    problems.append("portfolio '\(name)' exists with base currency \(existing.baseCurrency); the file's is \(p.baseCurrency)")
                }
                // The file's cash records need its cash tracking; the whole book is re-checked before anything is written.
                if p.trackCash && !existing.trackCash, let i = merged.portfolios.firstIndex(of: existing) {
                    merged.portfolios[i].trackCash = true
                }
                continue
            }
            merged.portfolios.append(p)
            outcome.createdPortfolios.append(p.name)
        }
        for a in doc.assets {
            let id = TextEscaping.escaped(a.id)
            guard Asset.code(a.id) == a.id else {
                problems.append("asset '\(id)': a code is 1–24 upper-case letters, digits, '.', '_', '-' or ':'")
                continue
            }
            guard CurrencyCode.isSupported(a.currency) else {
                problems.append("asset \(id): " + PortfolioError.unsupportedCurrency(a.currency).description)
                continue
            }
            if let existing = merged.asset(id: a.id) {
                if existing.type != a.type || existing.currency != a.currency {
                    problems.append("asset \(id) exists as \(existing.type.rawValue) in \(existing.currency); the file has it as \(a.type.rawValue) in \(a.currency)")
                }
                continue
            }
            merged.assets.append(a)
            outcome.createdAssets.append(a.id)
        }
        do {
            outcome.plan = try plan(doc.rows, into: merged, portfolio: defaultPortfolio, now: now, allowDuplicates: allowDuplicates,
                                    timeZone: timeZone, names: names, resolveAsset: resolveAsset)
        } catch {
            problems += error.problems
        }
        var known = Set(book.manualPrices.map(PriceKey.init))
        var prices: [Quote] = []
        for (i, q) in doc.manualPrices.enumerated() {
            let at = "manual price \(i + 1)"
            if Asset.isRegisteredID(q.coinId) && merged.asset(id: q.coinId) == nil {
                problems.append("\(at): " + PortfolioError.assetNotFound(q.coinId).description)
            } else if q.price <= 0 {
                problems.append("\(at): " + PortfolioError.priceNotPositive.description)
            } else if q.time > now {
                problems.append("\(at): a price dated \(ISODate.format(q.time)) is in the future")
            } else if !CurrencyCode.isSupported(q.currency) {
                problems.append("\(at): " + PortfolioError.unsupportedCurrency(q.currency).description)
            } else if !known.insert(PriceKey(q)).inserted {
                outcome.skippedPrices += 1
            } else {
                prices.append(q)
            }
        }
        mergeSettings(doc, into: &merged, outcome: &outcome, problems: &problems, emptyBefore: book.transactions.isEmpty)
        if !problems.isEmpty { throw ImportFailure(problems: problems) }
        merged.add(outcome.plan.added)
        merged.manualPrices += prices
        merged.admission = outcome.plan.admission
        outcome.addedPrices = prices.count
        book = merged
        return outcome
    }

    /// The records of a whole-book export that are not transactions: rates, plans, saving plans and
    /// alerts are added unless the book has them already (the same record, or for a plan the same name
    /// with the same settings; another plan of that name is a problem), the watchlist gains its coins,
    /// and into a book without transactions the default portfolio is the file's. The merged book's
    /// rules (`settingProblems`) are checked with every write.
    static func mergeSettings(_ doc: ImportDocument, into merged: inout Book, outcome: inout ImportOutcome, problems: inout [String],
                              emptyBefore: Bool) {
        for r in doc.fxRates where !merged.fxRates.contains(r) {
            merged.fxRates.append(r)
            outcome.addedSettings += 1
        }
        /// Records found by name (any case): the same one is skipped, another of that name is a problem.
        func mergeNamed<T: Equatable>(_ incoming: [T], into existing: inout [T], what: String, name: (T) -> String) {
            for p in incoming {
                if let found = existing.first(where: { name($0).lowercased() == name(p).lowercased() }) {
                    if found != p { problems.append("\(what) '\(TextEscaping.escaped(name(p)))' exists with other settings; rename one of them") }
                    continue
                }
                existing.append(p)
                outcome.addedSettings += 1
            }
        }
        mergeNamed(doc.plans, into: &merged.plans, what: "plan") { $0.name }
        mergeNamed(doc.savingPlans, into: &merged.savingPlans, what: "saving plan") { $0.name }
        for var a in doc.alerts {
            func same(_ b: PriceAlert) -> Bool {
                b.assetId == a.assetId && b.condition == a.condition && b.threshold == a.threshold && b.currency == a.currency
            }
            if merged.alerts.contains(where: same) { continue }
            // Alerts are named by their number: an imported one takes the next free one.
            if merged.alerts.contains(where: { $0.id == a.id }) { a.id = (merged.alerts.map(\.id).max() ?? 0) + 1 }
            merged.alerts.append(a)
            outcome.addedSettings += 1
        }
        for e in doc.watchlist where !merged.watchlist.contains(where: { $0.coinId == e.coinId }) { merged.watchlist.append(e) }
        if emptyBefore, let name = doc.defaultPortfolio, let p = merged.portfolio(named: name) { merged.defaultPortfolio = p.name }
    }

    /// A manual price's identity: the same asset, price, currency and time is the same price.
    struct PriceKey: Hashable {
        var assetId: String
        var price: Decimal
        var currency: String
        var millis: Int64
        init(_ q: Quote) {
            assetId = q.coinId
            price = q.price
            currency = q.currency
            millis = ISODate.millis(q.time)
        }
    }

    static func field(_ row: ImportRow, _ column: TransactionField) throws -> String {
        guard let v = row.fields.text(column) else { throw CommandError("missing \(column.columnName)") }
        return v
    }

    /// One row as a transaction of its kind: which of price, total, fee and currency it may
    /// have is said by `KindRule`; the values themselves are checked by `ValueRules` afterwards.
    static func transaction(from row: ImportRow, assetId: String, portfolio: Portfolio, book: Book, timeZone: TimeZone) throws -> Transaction {
        let f = row.fields
        let typeText = try field(row, .type)
        guard let type = TransactionType.named(typeText) else {
            throw CommandError("type '\(TextEscaping.shortened(typeText))' is not one of "
                + TransactionType.allCases.map(\.rawValue).joined(separator: ", ")
                + " (a swap is two rows, a sell and a buy, sharing a linkedId)")
        }
        let rule = KindRule.of(type)
        var kind: String { "a \(type.rawValue)" }

        var amountText = try field(row, .amount)
        var negative = false
        var price: Fixed18?
        if amountText.hasPrefix("-") {
            guard rule.signed else {
                throw CommandError("Amount '\(TextEscaping.shortened(amountText))' is negative; only an adjustment's amount may be")
            }
            negative = true
            amountText.removeFirst()
        }
        let amount: Fixed18
        if type == .split, let colon = amountText.firstIndex(of: ":") {
            // NEW:OLD, as `add split` takes it; stored as amount NEW, price OLD.
            if f.text(.price) != nil { throw CommandError("give a split's ratio as NEW:OLD in amount or its OLD as price, not both") }
            amount = try ValueRules.fixed(String(amountText[..<colon]), field: "Ratio")
            price = try ValueRules.fixed(String(amountText[amountText.index(after: colon)...]), field: "Ratio")
        } else {
            amount = try ValueRules.fixed(amountText, field: "Amount")
        }

        if let text = f.text(.price) {
            if rule.price == .none { throw CommandError("\(kind) has no price (price '\(TextEscaping.shortened(text))')") }
            price = try ValueRules.fixed(text, field: type == .transferIn ? "Cost" : "Price")
        }
        var total: Fixed18?
        if let text = f.text(.total) {
            guard rule.takesTotal else { throw CommandError("\(kind) has no total (only a buy or a sell does)") }
            total = try ValueRules.fixed(text, field: "Total")  // the price is then total ÷ amount, as `add --total` has it
        }
        var linkedId: UUID?
        if let text = f.text(.linkedId) {
            guard let u = UUIDText.parse(text.utf8) else { throw CommandError("linkedId '\(TextEscaping.shortened(text))' is not a UUID") }
            linkedId = u
        }

        let fee = try f.text(.fee).map { try ValueRules.fixed($0, field: "Fee") }
        if rule.fee == .none, let fee, fee.units != 0 { throw CommandError("\(kind) has no fee") }

        let currencyText = f.text(.currency)
        if !rule.hasCurrency, let currencyText, CurrencyCode.parse(currencyText)?.code != portfolio.baseCurrency {
            // Many files fill every row's currency: the portfolio's own base says nothing and is let be.
            throw CommandError("\(kind) has no money, so no currency (currency '\(TextEscaping.shortened(currencyText))')")
        }
        // The currency is refused before the date, as it always was (the builder resolves it again).
        if rule.hasCurrency, let currencyText { _ = try book.currency(given: currencyText, assetId: assetId, portfolio: portfolio) }

        let dateText = try field(row, .date)
        // A day, a local time or an instant, as on the command line (`today` is not a date in a file).
        guard let input = DateInput.parse(dateText) else { throw LiteralError.notADate(field: "Date", text: dateText) }
        if case .relativeDay = input {
            // A file's dates may not depend on the day it is imported.
            throw CommandError("Date '\(TextEscaping.shortened(dateText))' depends on the day of the import: write the day itself (YYYY-MM-DD)")
        }
        let when = try input.record(in: timeZone, now: Date(), field: "Date", text: dateText)
        var id = UUIDText.random()
        if let idText = f.text(.id) {
            guard let parsed = UUIDText.parse(idText.utf8) else {
                throw CommandError("id '\(TextEscaping.escaped(idText))' is not a UUID")
            }
            id = parsed
        }
        // Money in another currency than the base takes the rate of its date: the file's, else the table's.
        return try book.transaction(RecordRequest(
            id: id, portfolio: portfolio.name, type: type, assetId: assetId, amount: amount, negative: negative, price: price,
            total: total, fee: fee, currency: rule.hasCurrency ? currencyText : nil, fxRate: try f.text(.fxRate).map { try ValueRules.fixed($0, field: "fxRate") },
            date: when, notes: f[.notes].flatMap { $0.isEmpty ? nil : $0 }, linkedId: linkedId))
    }
}

extension TransactionType {
    /// The kind a file names, in any case (`Buy`, `SELL`); the kinds' own names are lower case.
    static func named(_ text: String) -> TransactionType? {
        TransactionType(rawValue: text) ?? TransactionType(rawValue: text.lowercased())
    }
}

/// A one-off message used inside the importer.
struct CommandError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Writes transactions for `bitpal export`: CSV with the columns of `TransactionField`, and the
/// whole-book JSON export.
public enum TransactionExport {
    /// The whole-book export's format version.
    public static let version = 2

    /// The CSV header: `TransactionField.order`'s names.
    public static var csvHeader: String { TransactionField.order.map(\.name).joined(separator: ",") }

    /// One line per transaction, every field as stored (`TransactionField.text(of:)`), empty for null.
    public static func csv(_ transactions: [Transaction]) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(transactions.count * 160 + 96)
        out.append(contentsOf: csvHeader.utf8)
        out.append(10)
        for t in transactions {
            for (i, f) in TransactionField.order.enumerated() {
                if i > 0 { out.append(44) }
                if let text = f.text(of: t) { out.append(contentsOf: CSV.escape(text).utf8) }
            }
            out.append(10)
        }
        return out
    }

    /// A plain JSON array of transaction objects (as `list --json` prints them).
    public static func json(_ transactions: [Transaction]) -> [UInt8] {
        var w = JSONWriter(capacity: transactions.count * 300 + 16)
        w.beginArray()
        for t in transactions { PortfolioCodec.writeTransaction(t, to: &w) }
        w.endArray()
        w.finish()
        return w.bytes
    }

    /// The whole book as `{"format": "bitpal-export", "version": 2, "portfolios", "assets",
    /// "transactions", "manualPrices"}`: the portfolios named by `portfolios` (every one when
    /// `nil`) with their transactions oldest first, every registered asset and manual price.
    public static func document(_ book: Book, portfolios names: Set<String>? = nil) -> [UInt8] {
        let portfolios = book.portfolios.filter { names?.contains($0.name) ?? true }
        let transactions = Ledger.chronological(book.transactions.filter { names?.contains($0.portfolio) ?? true })
        var w = JSONWriter(capacity: 1024 + transactions.count * 260 + book.manualPrices.count * 120)
        w.beginObject()
        w.key("format"); w.string(TransactionImport.exportFormatName)
        w.key("version"); w.number(String(version))
        w.key("portfolios")
        w.beginArray()
        for p in portfolios { PortfolioCodec.writePortfolio(p, to: &w) }
        w.endArray()
        w.key("assets")
        w.beginArray()
        for a in book.assets { PortfolioCodec.writeAsset(a, to: &w) }
        w.endArray()
        w.key("transactions")
        w.beginArray()
        for t in transactions { PortfolioCodec.writeTransaction(t, to: &w, inline: true) }
        w.endArray()
        w.key("manualPrices")
        w.beginArray()
        for q in book.manualPrices { PortfolioCodec.writeManualPrice(q, to: &w) }
        w.endArray()
        // The rest of the book: with these, an import into an empty folder reproduces every report.
        if names == nil || names?.contains(book.defaultPortfolio) == true {
            w.key("defaultPortfolio"); w.string(book.defaultPortfolio)
        }
        w.key("fxRates")
        w.beginArray()
        for r in book.fxRates { PortfolioCodec.writeRate(r, to: &w) }
        w.endArray()
        w.key("plans")
        w.beginArray()
        for p in book.plans where p.portfolio.map({ names?.contains($0) ?? true }) ?? (names == nil) { PortfolioCodec.writePlan(p, to: &w) }
        w.endArray()
        w.key("savingPlans")
        w.beginArray()
        for p in book.savingPlans where names?.contains(p.portfolio) ?? true { SavingPlan.fields.write(p, to: &w) }
        w.endArray()
        w.key("alerts")
        w.beginArray()
        for a in book.alerts { PriceAlert.fields.write(a, to: &w) }
        w.endArray()
        w.key("watchlist")
        w.beginArray()
        for e in book.watchlist { PortfolioCodec.writeWatchEntry(e, to: &w) }
        w.endArray()
        w.endObject()
        w.finish()
        return w.bytes
    }
}
