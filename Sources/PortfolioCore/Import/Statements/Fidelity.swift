import Foundation

/// Fidelity's account history CSV (`import --format fidelity`), in its per-account layouts
/// (`Run Date,Action,Symbol,Security Description,…,Amount ($),Settlement Date`, with or without
/// `Account`) and the 2025 all-accounts one (`…,Currency,Price,Quantity,…,Amount,…`). Blank lines
/// above the header and the legal footer below the rows (lines of text in one cell, `Date downloaded …`)
/// are left out; any other row without a Run Date is counted, and one with an amount is a problem. Dates are
/// `MM/dd/yyyy` days; money is USD unless a `Currency` column says otherwise.
///
/// The Action is free text, classified by how it starts:
/// - `YOU BOUGHT` and `REINVESTMENT` are buys, `YOU SOLD` a sell (its quantity is negative in the
///   file) of the cash that moved (`Amount`, less Commission + Fees on a buy, plus them on a sale:
///   the price in the file is rounded), Commission + Fees the fee; quantity × price without an Amount.
///   A bond's `Accrued Interest` is left out of the total (it is not the bond's price): paid on a buy it
///   is an expense, received on a sale interest, to cash.
/// - `DIVIDEND RECEIVED` is a dividend of `Amount`; `FOREIGN TAX PAID` (or refunded) on the same
///   symbol and day is joined into it as the tax withheld; on a later day it nets into the symbol's
///   last dividend before it, and without one it is counted (a refund is not a deposit; `DividendGroups`).
/// - `TRANSFERRED FROM` and `DIRECT DEPOSIT` are deposits, `TRANSFERRED TO` and `DIRECT DEBIT`
///   withdrawals, interest (`INTEREST`, `MUNI EXEMPT INT`, `MARGIN INTEREST`) interest received or,
///   when negative, an expense: all of `Amount`, to cash.
/// - Everything else (redemptions, mergers, journaled shares …) is counted by its first words.
/// Tickers are registered as stocks quoted by Yahoo (`yahoo:SYMBOL`, US listings); a CUSIP in the
/// Symbol column (a bond, a CD, a Treasury) is registered as a bond with no quote source.
extension ExchangeImport.Mapper {
    /// What an Action becomes, by the words it starts with.
    enum FidelityKind { case buy, sell, dividend, foreignTax, deposit, withdrawal, interest }

    static let fidelityPrefixes: [(String, FidelityKind)] = [
        ("YOU BOUGHT", .buy), ("REINVESTMENT", .buy), ("YOU SOLD", .sell),
        ("DIVIDEND RECEIVED", .dividend), ("FOREIGN TAX PAID", .foreignTax),
        ("TRANSFERRED FROM", .deposit), ("DIRECT DEPOSIT", .deposit),
        ("TRANSFERRED TO", .withdrawal), ("DIRECT DEBIT", .withdrawal),
        ("INTEREST", .interest), ("MUNI EXEMPT INT", .interest), ("MARGIN INTEREST", .interest),
    ]

    static func fidelityKind(_ action: String) -> FidelityKind? {
        let upper = action.trimmedSpaces.uppercased()
        return fidelityPrefixes.first { upper.hasPrefix($0.0) }?.1
    }

    /// A CUSIP: nine letters and digits, some of them digits (`912797GL5`).
    static func isCUSIP(_ symbol: String) -> Bool {
        symbol.utf8.count == 9 && symbol.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } && symbol.contains { $0.isNumber }
    }

    mutating func fidelity(_ bytes: [UInt8]) throws(ImportFailure) {
        let table = try StatementTable.read(bytes, required: [["Run Date", "Date"], ["Action"], ["Symbol"], ["Amount ($)", "Amount"]],
                                            what: "Fidelity account history")
        guard let dayFormat = DateFormat("MM/dd/yyyy") else { return }
        let utc = TimeZone(identifier: "UTC") ?? .current
        var occurrences: [String: Int] = [:]
        var dividends = DividendGroups()
        for r in table.records {
            let dateText = table.cell(r, "Run Date", "Date")
            let action = table.cell(r, "Action")
            let amountText = table.cell(r, "Amount ($)", "Amount")
            guard let day = dayFormat.recordText(dateText, in: utc) else {
                // The legal footer: lines of text in one cell, ending with `Date downloaded …`; left out.
                let cells = r.fields.map(\.trimmedSpaces).filter { !$0.isEmpty }
                if dateText.lowercased().hasPrefix("date downloaded") || (cells.count <= 1 && cells.allSatisfy { StatementNumber.parse($0) == nil }) {
                    continue
                }
                if !amountText.isEmpty, ExchangeNumber.parse(amountText) != nil {
                    problems.append("line \(r.line): Run Date '\(TextEscaping.shortened(dateText))' is not a Fidelity date (MM/dd/yyyy)")
                } else {
                    skip("row without a Run Date or an amount")
                }
                continue
            }
            let key = r.fields.map(\.trimmedSpaces).joined(separator: "\u{1F}")
            occurrences[key, default: 0] += 1
            let rowID = id("row:" + key + "#\(occurrences[key] ?? 1)")
            guard let kind = Self.fidelityKind(action) else {
                let words = action.uppercased().split(separator: " ").prefix(2).joined(separator: " ").lowercased()
                skip(words.isEmpty ? "row without an action" : words)
                continue
            }
            let currencyCell = table.cell(r, "Currency").uppercased()
            let currency = currencyCell.isEmpty ? "USD" : currencyCell
            let symbol = String(table.cell(r, "Symbol").uppercased().reversed().drop { $0 == "*" }.reversed())
            let description = table.cell(r, "Security Description", "Description")
            let name = description.lowercased() == "no description" ? "" : description
            let notes = "Fidelity " + action
            guard CurrencyCode.isSupported(currency) else { skip("\(action.split(separator: " ").prefix(2).joined(separator: " ").lowercased()) (in \(currency))"); continue }

            switch kind {
            case .buy, .sell:
                guard let quantity = number(table.cell(r, "Quantity"), line: r.line, column: "Quantity"),
                      let price = number(table.cell(r, "Price ($)", "Price"), line: r.line, column: "Price") else { continue }
                var fee: Decimal = 0
                for column in ["Commission ($)", "Commission", "Fees ($)", "Fees"] where table.has(column) && !table.cell(r, column).isEmpty {
                    guard let f = number(table.cell(r, column), line: r.line, column: column) else { continue }
                    fee += f < 0 ? -f : f
                }
                let amount = quantity < 0 ? -quantity : quantity
                guard amount > 0 else { skip("trade (quantity zero)"); continue }
                guard let asset = fidelityAsset(symbol, name: name, currency: currency) else { skip("trade (no symbol bitpal can keep as a code)"); continue }
                money = currency
                // A bond's accrued interest is in the cash that moved: paid to the seller on a buy,
                // received from the buyer on a sale. It is not the bond's price: left out of the total,
                // it is an expense (a buy) or interest (a sale) of its own.
                var accrued: Decimal = 0
                for column in ["Accrued Interest ($)", "Accrued Interest"] where table.has(column) && !table.cell(r, column).isEmpty {
                    guard let a = number(table.cell(r, column), line: r.line, column: column) else { continue }
                    accrued = a < 0 ? -a : a
                    break
                }
                // The cash that moved (`Amount`) is exact where the price is rounded (18 × 208.64 is
                // 3755.52, the account paid 3755.44): the total is it less the fees (a buy) or plus them
                // (a sale), less the accrued interest either way.
                var total: Decimal?
                if let moved = ExchangeNumber.parse(amountText), moved != 0 {
                    let cash = moved < 0 ? -moved : moved
                    let gross = (kind == .buy ? cash - fee : cash + fee) - accrued
                    if gross > 0 { total = gross }
                }
                let before = rows.count
                add(line: r.line, type: kind == .buy ? "buy" : "sell", coin: asset, amount: amount, price: price < 0 ? -price : price, fee: fee,
                    total: total, date: day, notes: notes)
                if rows.count > before { rows[rows.count - 1].fields[.id] = rowID }
                if accrued > 0, total != nil {
                    cash(line: r.line, type: kind == .buy ? "expense" : "interest", amount: accrued, currency: currency, date: day,
                         notes: notes + (kind == .buy ? " (accrued interest paid)" : " (accrued interest received)"), id: id(rowID + ":accrued"))
                }
            case .dividend, .foreignTax:
                guard let value = number(amountText, line: r.line, column: "Amount") else { continue }
                dividends.add(key: "\(symbol)|\(day)|\(currency)", asset: symbol, name: name, currency: currency, date: day,
                              payment: kind == .dividend ? value : 0, tax: kind == .dividend ? 0 : -value, line: r.line, notes: notes, id: rowID)
            case .deposit, .withdrawal:
                guard let value = number(amountText, line: r.line, column: "Amount") else { continue }
                // The Action says which way; a sign against it (a reversal) is taken as the cash moved.
                let type = value < 0 ? "withdrawal" : (value > 0 ? "deposit" : (kind == .deposit ? "deposit" : "withdrawal"))
                cash(line: r.line, type: type, amount: value < 0 ? -value : value, currency: currency, date: day, notes: notes, id: rowID)
            case .interest:
                guard let value = number(amountText, line: r.line, column: "Amount") else { continue }
                cash(line: r.line, type: value < 0 ? "expense" : "interest", amount: value < 0 ? -value : value, currency: currency, date: day,
                     notes: notes, id: rowID)
            }
        }
        keepDividends(dividends, unregistered: "dividend (no symbol bitpal can keep as a code)") { m, g in
            m.fidelityAsset(g.asset, name: g.name, currency: g.currency)
        }
    }

    /// Registers the symbol of a row: a ticker as a stock quoted by Yahoo, a CUSIP as a bond without a quote.
    mutating func fidelityAsset(_ symbol: String, name: String, currency: String) -> String? {
        guard !symbol.isEmpty else { return nil }
        if Self.isCUSIP(symbol) { return register(symbol, name: name, type: .bond, currency: currency) }
        let quote = AssetQuoteSource(service: .yahoo, symbol: symbol.replacingOccurrences(of: ".", with: "-").replacingOccurrences(of: "/", with: "-"))
        return register(symbol, name: name, type: .stock, currency: currency, quote: quote)
    }
}

