import Foundation

/// Trading 212's history CSV: one row per event, its columns found by name (they come and go with
/// the charges of the period, and moved in 2025). Times are UTC.
///
/// - Buys and sells (`Market buy`, `Limit sell`, …) are recorded in the account's currency, the
///   currency of `Total` (the cash that moved): the total less (a buy) or plus (a sale) the charges
///   in that currency, which are the fee. The ISIN is the asset's code (a stock, or an ETF when the
///   name says so), registered in the account's currency too (bitpal keeps an asset's trades and
///   dividends in its one currency, and Trading 212 gives every amount but the price in the account's).
/// - Dividends: `Total` is what arrived; the withholding tax is added back as the fee. Tax in the
///   instrument's currency (USD on a EUR account) is converted with the row's own figures: the price
///   per share is the dividend per share after the tax (LFVN: 7.138051 × 0.034 USD × 0.78288 is the
///   0.19 GBP Total), so shares × price per share is what arrived in that currency and the tax is
///   Total × tax / (shares × price per share), rounded half-up to the cent; without them it is
///   counted, not converted.
/// - Deposits, withdrawals (whatever the sign of `Total`), interest on cash and lending interest go
///   to cash; a currency conversion with its from and to amounts is a cash exchange.
/// - Everything else (stock distributions, splits, transfers, card payments) is counted by its action.
extension ExchangeImport.Mapper {
    static let trading212FeeColumns = ["charge amount", "stamp duty reserve tax", "stamp duty", "finra fee", "french transaction tax",
                                       "currency conversion fee", "transaction fee", "ptm levy"]

    mutating func trading212(_ bytes: [UInt8]) throws(ImportFailure) {
        let table = try StatementTable.read(bytes, required: [["Action"], ["Time", "Time (UTC)"], ["Total", "Total (EUR)", "Total (GBP)", "Total (USD)"]],
                                            what: "Trading 212 history")
        let utc = TimeZone(identifier: "UTC") ?? .current
        let totalName = table.columns.keys.filter { $0 == "total" || $0.hasPrefix("total (") }.min() ?? "total"
        /// The currency of a money column: its `Currency (NAME)` cell, else the code in its name (`Total (EUR)`).
        func currency(_ r: CSVRecord, of name: String) -> String {
            let cell = table.cell(r, "Currency (\(name))").uppercased()
            if !cell.isEmpty { return cell }
            if let open = name.lastIndex(of: "("), name.hasSuffix(")") {
                return String(name[name.index(after: open)...].dropLast()).uppercased()
            }
            return ""
        }
        // Fee columns by their name as the header writes it (lower-cased), `(EUR)` and all.
        let feeColumns = table.columns.keys.filter { name in
            !name.hasPrefix("currency (") && Self.trading212FeeColumns.contains { name == $0 || name.hasPrefix($0 + " (") }
        }.sorted()
        var occurrences: [String: Int] = [:]
        for r in table.records {
            let action = table.cell(r, "Action").lowercased()
            let timeText = table.cell(r, "Time", "Time (UTC)")
            let plain = timeText.split(separator: ".").first.map(String.init) ?? timeText
            guard let date = DateFormat("yyyy-MM-dd HH:mm:ss")?.recordText(plain, in: utc) else {
                problems.append("line \(r.line): Time '\(TextEscaping.shortened(timeText))' is not a Trading 212 time (yyyy-MM-dd HH:mm:ss)")
                continue
            }
            let fileID = table.cell(r, "ID")
            let key = fileID.isEmpty ? r.fields.map(\.trimmedSpaces).joined(separator: "\u{1F}") : fileID
            occurrences[key, default: 0] += 1
            let rowID = id("t212:" + key + (fileID.isEmpty ? "#\(occurrences[key] ?? 1)" : ""))
            let totalText = table.cell(r, totalName)
            let totalCurrency = currency(r, of: totalName)
            let name = table.cell(r, "Name"), isin = table.cell(r, "ISIN").uppercased()
            let notes = "Trading 212 " + ([action, name, table.cell(r, "Notes")].filter { !$0.isEmpty }.joined(separator: ": "))
            func total() -> Decimal? {
                guard let v = number(totalText, line: r.line, column: "Total") else { return nil }
                return v < 0 ? -v : v
            }

            let trade = action.hasSuffix(" buy") || action.hasSuffix(" sell")
            if trade {
                guard CurrencyCode.isSupported(totalCurrency) else { skip("trade (in \(totalCurrency.isEmpty ? "no currency" : totalCurrency))"); continue }
                guard let t = total() else { continue }
                guard let shares = number(table.cell(r, "No. of shares"), line: r.line, column: "No. of shares"),
                      let price = number(table.cell(r, "Price / share"), line: r.line, column: "Price / share") else { continue }
                var fees: Decimal = 0
                for column in feeColumns where !table.cell(r, column).isEmpty {
                    guard let f = number(table.cell(r, column), line: r.line, column: column) else { continue }
                    let c = currency(r, of: column)
                    if c.isEmpty || c == totalCurrency { fees += f < 0 ? -f : f } else if f != 0 { feesNotCounted[c, default: 0] += 1 }
                }
                guard !isin.isEmpty, let asset = register(isin, name: name, type: Self.degiroType(name), currency: totalCurrency) else {
                    skip("trade (no ISIN bitpal can keep as a code)"); continue
                }
                let buying = action.hasSuffix(" buy")
                money = totalCurrency
                let before = rows.count
                add(line: r.line, type: buying ? "buy" : "sell", coin: asset, amount: shares < 0 ? -shares : shares, price: price < 0 ? -price : price,
                    fee: fees, total: buying ? t - fees : t + fees, date: date, notes: notes)
                if rows.count > before { rows[rows.count - 1].fields[.id] = rowID }
                continue
            }
            if action.hasPrefix("dividend") && action != "dividend adjustment" {
                guard CurrencyCode.isSupported(totalCurrency) else { skip("dividend (in \(totalCurrency.isEmpty ? "no currency" : totalCurrency))"); continue }
                guard let net = total() else { continue }
                var tax: Decimal = 0
                let taxText = table.cell(r, "Withholding tax")
                if !taxText.isEmpty {
                    guard let w = number(taxText, line: r.line, column: "Withholding tax") else { continue }
                    let c = currency(r, of: "Withholding tax")
                    let withheld = w < 0 ? -w : w
                    if c.isEmpty || c == totalCurrency {
                        tax = withheld
                    } else if withheld != 0 {
                        // Tax in the instrument's currency: converted at the row's own rate. Shares ×
                        // price per share (the dividend per share after the tax, in that currency) is
                        // what arrived as Total, so the tax is Total × tax / (shares × price), to the cent.
                        let priceCurrency = table.cell(r, "Currency (Price / share)").uppercased()
                        if priceCurrency == c, let shares = StatementNumber.parse(table.cell(r, "No. of shares")),
                           let perShare = StatementNumber.parse(table.cell(r, "Price / share")), shares * perShare > 0 {
                            tax = DecimalFormatting.rounded(net * withheld / (shares * perShare), scale: 2)
                        } else {
                            feesNotCounted[c, default: 0] += 1
                        }
                    }
                }
                guard !isin.isEmpty, let asset = register(isin, name: name, type: Self.degiroType(name), currency: totalCurrency) else {
                    skip("dividend (no ISIN bitpal can keep as a code)"); continue
                }
                dividend(line: r.line, asset: asset, amount: net + tax, tax: tax, currency: totalCurrency, date: date, notes: notes, id: rowID)
                continue
            }
            let cashKind: String? = switch action {
            case "deposit": "deposit"
            case "withdrawal": "withdrawal"
            case "interest on cash", "lending interest": "interest"
            default: nil
            }
            if let cashKind {
                guard let t = total() else { continue }
                guard CurrencyCode.isSupported(totalCurrency) else { skip("\(action) (in \(totalCurrency.isEmpty ? "no currency" : totalCurrency))"); continue }
                cash(line: r.line, type: cashKind, amount: t, currency: totalCurrency, date: date, notes: notes, id: rowID)
                continue
            }
            if action == "currency conversion", !table.cell(r, "Currency conversion from amount").isEmpty {
                guard let from = number(table.cell(r, "Currency conversion from amount"), line: r.line, column: "Currency conversion from amount"),
                      let to = number(table.cell(r, "Currency conversion to amount"), line: r.line, column: "Currency conversion to amount") else { continue }
                let fromCurrency = currency(r, of: "Currency conversion from amount"), toCurrency = currency(r, of: "Currency conversion to amount")
                guard CurrencyCode.isSupported(fromCurrency), CurrencyCode.isSupported(toCurrency) else { skip("currency conversion (a currency bitpal does not support)"); continue }
                cashExchange(line: r.line, from: (from < 0 ? -from : from, fromCurrency), to: (to < 0 ? -to : to, toCurrency), date: date, notes: notes, id: rowID)
                continue
            }
            skip(action.isEmpty ? "row without an action" : action)
        }
    }
}
