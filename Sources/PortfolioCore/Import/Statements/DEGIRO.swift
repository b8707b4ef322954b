import Foundation

/// DEGIRO's two exports, told apart by their header (Dutch, English, German or Portuguese):
///
/// - `Transactions.csv`, one row per fill: a buy (positive quantity) or a sell (negative) of the
///   product, its ISIN the asset's code (registered as a stock, or an ETF when the product's name
///   says `ETF`/`UCITS`, in the price's currency), the local value the exact total. The transaction
///   costs (and the AutoFX fee) are the fee when they are in the trade's currency; in another currency
///   (EUR on a USD trade) they are an expense of that currency's cash.
/// - `Account.csv`, the cash ledger: a dividend joined with its dividend-tax rows, reversals and
///   re-bookings (same ISIN, value date and currency; the day without a `Valutadatum`) into one
///   dividend, the tax as its fee; a correction alone nets into the ISIN's last dividend before it
///   (`DividendGroups`); deposits and withdrawals, interest, and
///   connection and other fees (an expense); currency legs (`Valuta Creditering`/`Debitering`, `FX
///   Credit`/`Debit`, …) grouped by order id, else by their time, into one cash exchange; several
///   conversions at one time (AutoFX) are paired by the `FX` rate on the foreign leg (the euro leg
///   nearest to its amount ÷ rate), and a leg left without a pair is counted. A trade's
///   rows (and its fee rows) are counted, not imported: the trades come from Transactions.csv.
///   Cash-sweep pairs, iDEAL reservations, money-market fund moves and corporate actions are counted too.
///
/// Numbers are read with a decimal comma or point as the file's data shows; dates are `dd-MM-yyyy`
/// with an `HH:mm` time in Amsterdam. An order id wrapped onto a line of its own is joined back.
extension ExchangeImport.Mapper {
    static let degiroAccountColumns: [[String]] = [
        ["Datum", "Date", "Data"], ["Omschrijving", "Description", "Beschreibung", "Descrição"],
        ["Mutatie", "Change", "Änderung", "Mudança"],
    ]
    static let degiroTransactionColumns: [[String]] = [
        ["Datum", "Date", "Data"], ["ISIN"], ["Aantal", "Quantity", "Anzahl"], ["Koers", "Price", "Kurs"],
    ]

    mutating func degiro(_ bytes: [UInt8]) throws(ImportFailure) {
        if let table = try? StatementTable.read(bytes, required: Self.degiroAccountColumns, what: "DEGIRO Account.csv") {
            degiroAccount(table)
        } else if let table = try? StatementTable.read(bytes, required: Self.degiroTransactionColumns, what: "DEGIRO Transactions.csv") {
            degiroTransactions(table)
        } else {
            throw ImportFailure(problems: ["no DEGIRO header found (expected Account.csv's Datum/Date, Omschrijving/Description, Mutatie/Change … "
                + "or Transactions.csv's Datum/Date, ISIN, Aantal/Quantity, Koers/Price …)"])
        }
    }

    static let amsterdam = TimeZone(identifier: "Europe/Amsterdam") ?? TimeZone(identifier: "UTC") ?? .current

    /// `19-12-2022` and `18:33` as the instant in Amsterdam (the day alone without a time).
    static let degiroDay = DateFormat("dd-MM-yyyy"), degiroTime = DateFormat("dd-MM-yyyy HH:mm")

    static func degiroDate(_ day: String, _ time: String) -> String? {
        if time.isEmpty { return degiroDay?.recordText(day, in: amsterdam) }
        return degiroTime?.recordText(day + " " + time, in: amsterdam)
    }

    /// A product's asset type: an ETF when its name says so, else a stock.
    static func degiroType(_ name: String) -> AssetType {
        let words = name.uppercased().split(whereSeparator: { !$0.isLetter })
        return words.contains("ETF") || words.contains("UCITS") ? .etf : .stock
    }

    /// A three-letter currency code, or `nil`.
    static func currencyCell(_ text: String) -> String? {
        let t = text.trimmedSpaces.uppercased()
        return t.count == 3 && t.allSatisfy({ $0.isASCII && $0.isLetter }) ? t : nil
    }

    /// A number cell read with the file's decimal mark, or a problem recorded.
    mutating func degiroNumber(_ text: String, comma: Bool, line: Int, column: String) -> Decimal? {
        if let v = StatementNumber.parse(text, decimalComma: comma) { return v }
        problems.append("line \(line): \(column) '\(TextEscaping.shortened(text))' is not a number")
        return nil
    }

    /// Records with a line holding only the tail of a wrapped cell (`,,,,,,,,,,,b017-a61a6d03c3e7`)
    /// joined back onto the record before them.
    static func degiroJoinWrapped(_ records: [CSVRecord], dateColumn: Int) -> [CSVRecord] {
        var joined: [CSVRecord] = []
        for r in records {
            let date = dateColumn < r.fields.count ? r.fields[dateColumn].trimmedSpaces : ""
            if date.isEmpty, var last = joined.popLast() {
                for (i, cell) in r.fields.enumerated() where !cell.isEmpty {
                    while last.fields.count <= i { last.fields.append("") }
                    last.fields[i] += cell
                }
                joined.append(last)
            } else {
                joined.append(r)
            }
        }
        return joined
    }

    // MARK: Account.csv

    mutating func degiroAccount(_ table: StatementTable) {
        func index(_ names: [String]) -> Int? { names.lazy.compactMap { table.columns[$0.lowercased()] }.first }
        guard let dateColumn = index(Self.degiroAccountColumns[0]), let changeColumn = index(Self.degiroAccountColumns[2]) else { return }
        let records = Self.degiroJoinWrapped(table.records, dateColumn: dateColumn)
        let timeColumn = index(["Tijd", "Time", "Uhrzeit", "Uhrze", "Hora"])
        let productColumn = index(["Product", "Produkt", "Produto"])
        let descriptionColumn = index(Self.degiroAccountColumns[1])
        let orderColumn = index(["Order Id", "Order-ID", "ID da Ordem"])
        let balanceColumn = index(["Saldo", "Balance"])
        // The rate of a currency leg (foreign currency per euro, on the foreign leg), just before the change.
        let fxColumn = index(["FX", "T.", "Tipo"]) ?? (changeColumn > 0 ? changeColumn - 1 : nil)
        func cell(_ r: CSVRecord, _ i: Int?) -> String { i.flatMap { $0 < r.fields.count ? r.fields[$0].trimmedSpaces : nil } ?? "" }
        let comma = StatementNumber.usesDecimalComma(records.map { cell($0, changeColumn + 1) })

        var occurrences: [String: Int] = [:]
        var dividends = DividendGroups()
        let valueDateColumn = index(["Valutadatum", "Value date", "Data Valor"])
        var exchanges: [DEGIROExchangeGroup] = []
        var exchangeIndex: [String: Int] = [:]
        for r in records {
            let day = cell(r, dateColumn), time = cell(r, timeColumn)
            let product = cell(r, productColumn), isin = cell(r, table.columns["isin"]).uppercased()
            let description = cell(r, descriptionColumn), d = description.lowercased()
            let currency = cell(r, changeColumn).uppercased(), amountText = cell(r, changeColumn + 1)
            let orderID = cell(r, orderColumn)
            // The row's own key (its balance aside), and its place among identical rows, for a stable id.
            let key = r.fields.enumerated().filter { i, _ in balanceColumn.map { i != $0 && i != $0 + 1 } ?? true }
                .map { $0.element.trimmedSpaces }.joined(separator: "\u{1F}")
            occurrences[key, default: 0] += 1
            let rowID = id("account:" + key + "#\(occurrences[key] ?? 1)")
            func has(_ words: [String]) -> Bool { words.contains { d.contains($0) } }

            if amountText.isEmpty { skip("cash sweep (a row without an amount)"); continue }
            if isin == "NLFLATEXACNT" || has(["cash sweep", "overboeking van uw geldrekening", "overboeking naar uw geldrekening"]) {
                skip("cash sweep"); continue
            }
            if has(["reservation", "reservering"]) { skip("deposit reservation (it reverses itself)"); continue }
            if has(["stock dividend", "productwijziging", "wijziging isin", "isin-änderung", "isin change"]) {
                skip("corporate action (not imported)"); continue
            }
            if has(["geldmarktfonds", "money market"]) { skip("money-market fund move"); continue }
            guard let date = Self.degiroDate(day, time) else {
                problems.append("line \(r.line): date '\(TextEscaping.shortened(day)) \(TextEscaping.shortened(time))' is not a DEGIRO date (dd-MM-yyyy HH:mm)")
                continue
            }
            guard let amount = degiroNumber(amountText, comma: comma, line: r.line, column: "amount") else { continue }
            guard CurrencyCode.isSupported(currency) else { skip("row in \(currency.isEmpty ? "no currency" : currency)"); continue }
            let notes = "DEGIRO " + ([product, description].filter { !$0.isEmpty }.joined(separator: ": "))

            // Currency legs: one conversion per order id, else per time.
            if has(["valuta creditering", "valuta debitering", "fx credit", "fx debit", "währungswechsel", "dito de divisa",
                    "levantamento de divisa"]) {
                let group = orderID.isEmpty ? "time:\(day) \(time)" : "order:\(orderID)"
                let rate = StatementNumber.parse(cell(r, fxColumn), decimalComma: comma).flatMap { $0 > 0 ? $0 : nil }
                let leg = DEGIROExchangeGroup.Leg(currency: currency, amount: amount, rate: rate, line: r.line)
                if let i = exchangeIndex[group] {
                    exchanges[i].legs[currency, default: 0] += amount
                    exchanges[i].rows.append(leg)
                } else {
                    exchangeIndex[group] = exchanges.count
                    exchanges.append(DEGIROExchangeGroup(key: group, line: r.line, date: date, notes: notes, legs: [currency: amount], rows: [leg]))
                }
                continue
            }
            let transactionTax = has(["transactiebelasting", "transaction tax", "finanztransaktionssteuer", "taxe sur les transactions"])
            let tradeFee = has(["transactiekosten", "transaction and/or third", "transaktionsgebühren", "comissões de transação", "frais degiro de courtage"])
            let trade = ["koop ", "verkoop ", "buy ", "sell ", "kauf ", "verkauf ", "compra ", "venda ", "achat ", "vente "].contains { d.hasPrefix($0) }
            if transactionTax {
                if amount < 0 {
                    cash(line: r.line, type: "expense", amount: -amount, currency: currency, date: date, notes: notes, id: rowID)
                } else {
                    skip("transaction tax refund (not imported)")
                }
                continue
            }
            if !orderID.isEmpty || trade || tradeFee {
                skip(tradeFee ? "trade fee (import Transactions.csv for trades)" : "trade (import Transactions.csv for trades)")
                continue
            }
            if d.contains("divid") {
                guard !isin.isEmpty else { skip("dividend row without an ISIN"); continue }
                let tax = has(["belasting", "tax", "steuer", "impôt", "imposto", "retenc", "retenç"])
                // A dividend's rows, and its reversal and re-booking days later, share the value date.
                let valueDate = cell(r, valueDateColumn)
                let group = "\(isin)|\(valueDate.isEmpty ? day : valueDate)|\(currency)"
                dividends.add(key: group, asset: isin, name: product, currency: currency, date: date,
                              payment: tax ? 0 : amount, tax: tax ? -amount : 0, line: r.line, notes: notes, id: rowID)
                continue
            }
            if has(["storting", "deposit", "einzahlung", "auszahlung", "withdrawal", "depósito", "levantamento", "overboeking"]) {
                cash(line: r.line, type: amount < 0 ? "withdrawal" : "deposit", amount: amount < 0 ? -amount : amount, currency: currency,
                     date: date, notes: notes, id: rowID)
                continue
            }
            if has(["interest", "rente", "zinsen", "juros", "intérêts"]) {
                cash(line: r.line, type: amount < 0 ? "expense" : "interest", amount: amount < 0 ? -amount : amount, currency: currency,
                     date: date, notes: notes, id: rowID)
                continue
            }
            if has(["aansluitingskosten", "connection fee", "conectividade", "kosten", "fee", "gebühr", "custo", "comiss", "frais"]) {
                if amount < 0 {
                    cash(line: r.line, type: "expense", amount: -amount, currency: currency, date: date, notes: notes, id: rowID)
                } else {
                    skip("fee refund (not imported)")
                }
                continue
            }
            let words = String(description.prefix { !$0.isNumber }).trimmedSpaces
            skip(words.isEmpty ? "row without a description" : String(words.prefix(60)))
        }

        keepDividends(dividends, unregistered: "dividend (an ISIN bitpal cannot keep as a code)") { m, g in
            m.register(g.asset, name: g.name, type: Self.degiroType(g.name), currency: g.currency)
        }
        for g in exchanges {
            let out = g.legs.filter { $0.value < 0 }, into = g.legs.filter { $0.value > 0 }
            if out.count == 1, into.count == 1, let from = out.first, let to = into.first {
                cashExchange(line: g.line, from: (-from.value, from.key), to: (to.value, to.key), date: g.date, notes: g.notes, id: id("fx:" + g.key))
                continue
            }
            // Several conversions at one time (AutoFX converting two currencies in the same minute):
            // each leg with a rate pairs with the leg of the other sign nearest to its amount ÷ rate.
            let (pairs, unpaired) = g.paired()
            for (n, pair) in pairs.enumerated() {
                cashExchange(line: min(pair.out.line, pair.into.line), from: (-pair.out.amount, pair.out.currency),
                             to: (pair.into.amount, pair.into.currency), date: g.date, notes: g.notes, id: id("fx:" + g.key + "#\(n + 1)"))
            }
            for _ in 0..<unpaired { skip("currency conversion leg (no leg to pair with)") }
        }
    }

    // MARK: Transactions.csv

    mutating func degiroTransactions(_ table: StatementTable) {
        func index(_ names: [String]) -> Int? { names.lazy.compactMap { table.columns[$0.lowercased()] }.first }
        func prefixed(_ prefixes: [String]) -> (Int, String)? {
            for p in prefixes {
                if let (name, i) = table.columns.filter({ $0.key.hasPrefix(p) }).min(by: { $0.value < $1.value }) { return (i, name) }
            }
            return nil
        }
        guard let dateColumn = index(Self.degiroTransactionColumns[0]), let quantityColumn = index(Self.degiroTransactionColumns[2]),
              let priceColumn = index(Self.degiroTransactionColumns[3]), let isinColumn = table.columns["isin"] else { return }
        let records = Self.degiroJoinWrapped(table.records, dateColumn: dateColumn)
        let timeColumn = index(["Tijd", "Time", "Uhrzeit", "Hora"])
        let productColumn = index(["Product", "Produkt", "Produto"])
        let localColumn = prefixed(["local value", "lokale waarde", "wert in lokal"])?.0
        let fee = prefixed(["transaction and/or", "transactiekosten", "transaktionskost"])
        let autoFXColumn = index(["AutoFX Fee"])
        let orderColumn = index(["Order ID", "Order-ID"])
        func cell(_ r: CSVRecord, _ i: Int?) -> String { i.flatMap { $0 < r.fields.count ? r.fields[$0].trimmedSpaces : nil } ?? "" }
        /// The currency beside an amount: the cell after it, else the one before.
        func currency(_ r: CSVRecord, _ i: Int?) -> String? {
            guard let i else { return nil }
            return Self.currencyCell(cell(r, i + 1)) ?? (i > 0 ? Self.currencyCell(cell(r, i - 1)) : nil)
        }
        // The fee's currency is in its header (`… fees EUR`) in the AutoFX layout, else beside it.
        let feeHeaderCurrency = fee.flatMap { Self.currencyCell(String($0.1.split(separator: " ").last ?? "")) }.flatMap { CurrencyCode.isSupported($0) ? $0 : nil }
        var samples: [String] = []
        for r in records { samples += [cell(r, priceColumn), cell(r, localColumn), cell(r, fee?.0), cell(r, autoFXColumn)] }
        let comma = StatementNumber.usesDecimalComma(samples)

        var occurrences: [String: Int] = [:]
        for r in records {
            let day = cell(r, dateColumn), time = cell(r, timeColumn)
            let isin = cell(r, isinColumn).uppercased(), product = cell(r, productColumn)
            // The AutoFX layout's data rows carry an empty cell before the order id its header names.
            var orderID = cell(r, orderColumn)
            if orderID.isEmpty, let o = orderColumn { orderID = cell(r, o + 1) }
            guard let date = Self.degiroDate(day, time) else {
                problems.append("line \(r.line): date '\(TextEscaping.shortened(day)) \(TextEscaping.shortened(time))' is not a DEGIRO date (dd-MM-yyyy HH:mm)")
                continue
            }
            guard let quantity = degiroNumber(cell(r, quantityColumn), comma: comma, line: r.line, column: "quantity"),
                  let price = degiroNumber(cell(r, priceColumn), comma: comma, line: r.line, column: "price") else { continue }
            guard quantity != 0 else { skip("trade (quantity zero)"); continue }
            guard let tradeCurrency = currency(r, priceColumn), CurrencyCode.isSupported(tradeCurrency) else {
                skip("trade (in \(currency(r, priceColumn) ?? "no currency"))"); continue
            }
            guard !isin.isEmpty, let asset = register(isin, name: product, type: Self.degiroType(product), currency: tradeCurrency) else {
                skip("trade (no ISIN bitpal can keep as a code)"); continue
            }
            var total: Decimal?
            if let localColumn, !cell(r, localColumn).isEmpty, currency(r, localColumn) == tradeCurrency {
                guard let v = degiroNumber(cell(r, localColumn), comma: comma, line: r.line, column: "local value") else { continue }
                total = v < 0 ? -v : v
                if total == 0 { total = nil }
            }
            var fees: Decimal = 0
            for column in [fee?.0, autoFXColumn].compactMap({ $0 }) where !cell(r, column).isEmpty {
                guard let v = degiroNumber(cell(r, column), comma: comma, line: r.line, column: "fee") else { continue }
                fees += v < 0 ? -v : v
            }
            let feeCurrency = feeHeaderCurrency ?? currency(r, fee?.0) ?? tradeCurrency
            let key = orderID.isEmpty ? r.fields.map(\.trimmedSpaces).joined(separator: "\u{1F}")
                : [orderID, day, time, cell(r, quantityColumn), cell(r, priceColumn)].joined(separator: "\u{1F}")
            occurrences[key, default: 0] += 1
            let rowID = id("trade:" + key + "#\(occurrences[key] ?? 1)")
            let notes = "DEGIRO \(product)" + (orderID.isEmpty ? "" : " \(orderID)")
            money = tradeCurrency
            let before = rows.count
            add(line: r.line, type: quantity > 0 ? "buy" : "sell", coin: asset, amount: quantity < 0 ? -quantity : quantity,
                price: price < 0 ? -price : price, fee: feeCurrency == tradeCurrency ? fees : 0, total: total, date: date, notes: notes)
            guard rows.count > before else { continue }
            rows[rows.count - 1].fields[.id] = rowID
            // Costs charged in another currency (EUR on a USD trade) are that currency's expense.
            if feeCurrency != tradeCurrency, fees != 0 {
                if CurrencyCode.isSupported(feeCurrency) {
                    cash(line: r.line, type: "expense", amount: fees, currency: feeCurrency, date: date, notes: notes + " transaction costs",
                         id: id(rowID + ":fee"))
                } else {
                    feesNotCounted[feeCurrency, default: 0] += 1
                }
            }
        }
    }
}

/// The legs of one DEGIRO currency conversion: the sum moved in each currency, and the rows.
struct DEGIROExchangeGroup {
    struct Leg {
        var currency: String
        var amount: Decimal
        /// The `FX` cell: foreign currency per euro, on the foreign leg.
        var rate: Decimal?
        var line: Int
    }

    var key: String
    var line: Int
    var date: String
    var notes: String
    var legs: [String: Decimal]
    var rows: [Leg] = []

    /// The rows paired by their rates: a leg with a rate and the leg of the other sign and another
    /// currency whose amount is nearest to its amount ÷ rate (within 1% and a cent), and how many
    /// legs are left without a pair.
    func paired() -> (pairs: [(out: Leg, into: Leg)], unpaired: Int) {
        var used = Array(repeating: false, count: rows.count)
        var pairs: [(out: Leg, into: Leg)] = []
        for (i, leg) in rows.enumerated() where !used[i] {
            guard let rate = leg.rate, leg.amount != 0 else { continue }
            let expected = (leg.amount < 0 ? -leg.amount : leg.amount) / rate
            var best: (j: Int, gap: Decimal)?
            for (j, other) in rows.enumerated() where j != i && !used[j] && other.currency != leg.currency
                && ((other.amount < 0) != (leg.amount < 0)) && other.amount != 0 {
                let size = other.amount < 0 ? -other.amount : other.amount
                let gap = size > expected ? size - expected : expected - size
                if best.map({ gap < $0.gap }) ?? true { best = (j, gap) }
            }
            guard let best, best.gap <= expected / 100 + Decimal(1) / 100 else { continue }
            used[i] = true
            used[best.j] = true
            let other = rows[best.j]
            pairs.append(leg.amount < 0 ? (leg, other) : (other, leg))
        }
        return (pairs, used.filter { !$0 }.count)
    }
}
