import Foundation

/// Interactive Brokers Activity Flex Query, CSV: the Trades and Cash Transactions sections, each
/// under its own header (a file may hold both, with `BOF`/`BOS`/`EOS`/`EOF` and `MSG` lines
/// around them). The user picks the fields, so every column is found by name.
///
/// - Trades: executions only (`LevelOfDetail` `EXECUTION`; order and lot summaries would count
///   twice). Stocks, ETFs and funds are bought and sold (commission and transaction taxes as the
///   fee, a commission in another currency as an expense of that currency; a rebate, a positive
///   commission, in the trade's money: a buy's less, a sale's more), and registered
///   with their type, currency and, when the listing exchange is known, `yahoo:SYMBOL`. Currency
///   trades (`AssetClass` `CASH`, `EUR.USD`) are cash exchanges. Options, futures and the rest
///   are counted, not imported.
/// - Cash transactions: a dividend (and a payment in lieu of one) with its withholding tax, fee
///   rows, reversals and re-bookings joined into one dividend, the tax net as its fee: by `ActionID`
///   when the file has it (a correction on a later day joins the dividend it corrects), else by
///   asset, day and currency, and a correction on a later day changes the asset's last dividend
///   before it (`DividendGroups`). A dividend described `(Return of Capital)` is counted, not
///   imported: it is not income, and bitpal has no row that lowers a holding's cost.
///   Deposits and withdrawals, interest received, interest paid and fees go to cash; a positive fee
///   row is a deposit only when its description says it is a refund (`REFUND`, `REVERSAL`, `REBATE`,
///   `CREDIT`, `CORRECTION`), else it is counted.
extension ExchangeImport.Mapper {
    /// Yahoo's suffix for IBKR's listing exchanges (`IBIS` → `.DE`); US markets have none.
    static let ibkrYahooSuffix: [String: String] = [
        "NASDAQ": "", "NYSE": "", "ARCA": "", "AMEX": "", "BATS": "", "NYSEARCA": "", "IEX": "",
        "IBIS": ".DE", "IBIS2": ".DE", "FWB": ".F", "FWB2": ".F", "GETTEX": ".DE", "TGATE": ".DE", "LSE": ".L", "LSEETF": ".L",
        "SBF": ".PA", "AEB": ".AS", "EBS": ".SW", "SWX": ".SW", "BVME": ".MI", "BM": ".MC", "SFB": ".ST", "CPH": ".CO", "OSE": ".OL",
        "TSE": ".TO", "VENTURE": ".V", "ASX": ".AX", "SEHK": ".HK", "TSEJ": ".T", "VSE": ".VI", "ENEXT.BE": ".BR",
    ]

    mutating func ibkr(_ bytes: [UInt8]) throws(ImportFailure) {
        let records: [CSVRecord]
        do { records = try CSV.parse(bytes) } catch { throw ImportFailure(problems: [error.description]) }
        if let first = records.first?.fields.first?.trimmedSpaces, first == "Statement" || first == "Trades",
           records.first?.fields.dropFirst().first?.trimmedSpaces == "Header" {
            throw ImportFailure(problems: ["this is an IBKR Activity Statement; make an Activity Flex Query in CSV (Trades and Cash Transactions) and import that"])
        }
        let newYork = TimeZone(identifier: "America/New_York") ?? TimeZone(identifier: "UTC") ?? .current
        /// Calls `body` with each data row and the table it is under.
        func eachRow(_ body: (CSVRecord, StatementTable?) -> Void) -> Bool {
            var table: StatementTable?
            var sawHeader = false
            for r in records {
                let first = r.fields.first?.trimmedSpaces.uppercased() ?? ""
                if ["BOF", "BOA", "BOS", "EOS", "EOA", "EOF", "MSG"].contains(first) { continue }
                // A header names the currency column; data rows are not lower-cased to find out.
                guard r.fields.contains(where: { f in f.utf8.count >= 15 && f.utf8.count <= 20 && f.lowercased().hasSuffix("currencyprimary") }) else {
                    body(r, table)
                    continue
                }
                table = StatementTable(records: [], columns: StatementTable.columns(r.fields), headerLine: r.line)
                sawHeader = true
            }
            return sawHeader
        }
        // Cancellations first: IBKR keeps the cancelled fill and adds a reversing row after it.
        var cancelled = IBKRCancellations()
        _ = eachRow { r, t in
            if let t, t.has("TradePrice") || t.has("Buy/Sell") { cancelled.note(r, t) }
        }
        var dividends = DividendGroups()
        let sawHeader = eachRow { r, table in
            guard let t = table else { return }
            if t.has("TradePrice") || t.has("Buy/Sell") {
                if cancelled.drops(r, t) { skip("trade (cancelled)"); return }
                ibkrTrade(r, t, zone: newYork)
            } else if t.has("Type"), t.has("Amount") {
                ibkrCash(r, t, dividends: &dividends)
            } else {
                skip("row of another Flex section")
            }
        }
        guard sawHeader else {
            throw ImportFailure(problems: ["no Flex Query header found (expected CurrencyPrimary with Buy/Sell, TradePrice … or Type, Amount …)"])
        }
        keepDividends(dividends, unregistered: "dividend (a symbol bitpal cannot keep as a code)") { m, g in
            m.register(g.asset, name: g.name, type: .stock, currency: g.currency)
        }
    }

    /// The asset code a row names: its symbol, else (no symbol, or one that is no asset code, a
    /// bond's `T 4 1/2 11/15/33`) its ISIN.
    static func ibkrCode(_ r: CSVRecord, _ t: StatementTable) -> String {
        var symbol = t.cell(r, "Symbol").uppercased()
        if symbol.contains(" ") { symbol = symbol.replacingOccurrences(of: " ", with: ".") }
        let isin = t.cell(r, "ISIN", "SecurityID").uppercased()
        if symbol.isEmpty || (Asset.code(symbol) == nil && !isin.isEmpty) { return isin }
        return symbol
    }

    /// `20230403;095853`, `20230403`, `2017-09-15`, `2021-11-23, 12:46:38` as a date (the day only with `dayOnly`).
    static func ibkrDate(_ text: String, zone: TimeZone, dayOnly: Bool) -> String? {
        for format in ibkrDateFormats { if let date = format.recordText(text, in: zone, dayOnly: dayOnly) { return date } }
        return nil
    }

    static let ibkrDateFormats = ["yyyyMMdd;HHmmss", "yyyyMMdd;HH:mm:ss", "yyyyMMdd HHmmss", "yyyyMMdd", "yyyy-MM-dd;HH:mm:ss",
                                  "yyyy-MM-dd, HH:mm:ss", "yyyy-MM-dd HH:mm:ss", "yyyy-MM-dd"].compactMap(DateFormat.init)

    mutating func ibkrTrade(_ r: CSVRecord, _ t: StatementTable, zone: TimeZone) {
        let level = t.cell(r, "LevelOfDetail").uppercased()
        if !level.isEmpty && level != "EXECUTION" { skip("\(level.lowercased()) (a summary of executions)"); return }
        let category = t.cell(r, "AssetClass", "AssetCategory").uppercased()
        let currency = t.cell(r, "CurrencyPrimary", "Currency").uppercased()
        let dateText = t.cell(r, "DateTime", "Date/Time").isEmpty ? t.cell(r, "TradeDate") : t.cell(r, "DateTime", "Date/Time")
        guard let date = Self.ibkrDate(dateText, zone: zone, dayOnly: false) else {
            problems.append("line \(r.line): DateTime '\(TextEscaping.shortened(dateText))' is not an IBKR date (yyyyMMdd;HHmmss)")
            return
        }
        guard let quantity = number(t.cell(r, "Quantity"), line: r.line, column: "Quantity"),
              let price = number(t.cell(r, "TradePrice"), line: r.line, column: "TradePrice") else { return }
        let side = t.cell(r, "Buy/Sell").uppercased()
        let buying = side.isEmpty ? quantity > 0 : side.hasPrefix("BUY")
        let amount = quantity < 0 ? -quantity : quantity
        guard amount > 0 else { skip("trade (quantity zero)"); return }
        let commissionText = t.cell(r, "IBCommission")
        guard let commission = commissionText.isEmpty ? 0 : number(commissionText, line: r.line, column: "IBCommission"),
              let taxes = t.cell(r, "Taxes").isEmpty ? 0 : number(t.cell(r, "Taxes"), line: r.line, column: "Taxes") else { return }
        let commissionCurrency = t.cell(r, "IBCommissionCurrency").uppercased()
        let fileID = t.cell(r, "TransactionID").isEmpty ? t.cell(r, "TradeID") : t.cell(r, "TransactionID")
        let rowID = fileID.isEmpty ? nil : id("trade:" + fileID)
        let symbol = t.cell(r, "Symbol").uppercased()
        guard CurrencyCode.isSupported(currency) else { skip("trade (in \(currency.isEmpty ? "no currency" : currency))"); return }

        // A currency trade: `EUR.USD` sells or buys EUR for USD (the row's currency).
        let pair = symbol.split(separator: ".").map(String.init)
        if category == "CASH" || (category.isEmpty && pair.count == 2 && pair.allSatisfy { CurrencyCode.isSupported($0) }) {
            guard pair.count == 2, pair[1] == currency, CurrencyCode.isSupported(pair[0]) else { skip("currency trade (its pair not named)"); return }
            let proceedsText = t.cell(r, "Proceeds").isEmpty ? t.cell(r, "TradeMoney") : t.cell(r, "Proceeds")
            var money = amount * price
            if !proceedsText.isEmpty { guard let p = number(proceedsText, line: r.line, column: "Proceeds") else { return }; money = p < 0 ? -p : p }
            let notes = "IBKR \(symbol)" + (fileID.isEmpty ? "" : " \(fileID)")
            let legID = rowID ?? id("fx:\(r.line):\(dateText)")
            if buying {
                cashExchange(line: r.line, from: (money, currency), to: (amount, pair[0]), date: date, notes: notes, id: legID)
            } else {
                cashExchange(line: r.line, from: (amount, pair[0]), to: (money, currency), date: date, notes: notes, id: legID)
            }
            if commission != 0 {
                // A conversion has no fee: the commission is an expense, a rebate (positive) money in.
                cash(line: r.line, type: commission < 0 ? "expense" : "deposit", amount: commission < 0 ? -commission : commission,
                     currency: commissionCurrency.isEmpty ? currency : commissionCurrency,
                     date: date, notes: notes + (commission < 0 ? " commission" : " commission rebate"), id: rowID.map { id($0 + ":commission") })
            }
            return
        }
        let type: AssetType
        switch category {
        case "STK", "": type = t.cell(r, "SubCategory").uppercased() == "ETF" ? .etf : .stock
        case "FUND": type = .mutualFund
        case "BOND": type = .bond
        default: skip("\(category) trade (not a stock, ETF, fund or bond)"); return
        }
        let code = Self.ibkrCode(r, t)
        guard !code.isEmpty else { skip("trade (no symbol or ISIN)"); return }
        let exchange = t.cell(r, "ListingExchange").uppercased()
        let quote = symbol.isEmpty || Asset.code(symbol.replacingOccurrences(of: " ", with: ".")) == nil ? nil : Self.ibkrYahooSuffix[exchange].map { AssetQuoteSource(service: .yahoo, symbol: symbol.replacingOccurrences(of: " ", with: "-") + $0) }
        guard let assetID = register(code, name: t.cell(r, "Description"), type: type, currency: currency, quote: quote) else {
            skip("trade (a symbol bitpal cannot keep as a code)"); return
        }
        // The commission and the transaction taxes are the fee, in the trade's currency; a commission
        // charged in another currency is an expense of that currency's cash. A rebate (a positive
        // commission) is part of the trade's money: a buy cost that much less, a sale brought more.
        var fee = taxes < 0 ? -taxes : taxes
        var rebate: Decimal = 0
        let sameCurrency = commissionCurrency.isEmpty || commissionCurrency == currency
        if sameCurrency {
            if commission <= 0 { fee -= commission } else { rebate = commission }
        }
        // The trade's money: `TradeMoney`, else `Proceeds`, else `NetCash` less the commission and
        // taxes in it; price × quantity only without them (a bond's price is a percentage).
        var total: Decimal?
        if !t.cell(r, "TradeMoney").isEmpty {
            guard let m = number(t.cell(r, "TradeMoney"), line: r.line, column: "TradeMoney") else { return }
            total = m
        }
        if total == nil || total == 0, !t.cell(r, "Proceeds").isEmpty {
            guard let m = number(t.cell(r, "Proceeds"), line: r.line, column: "Proceeds") else { return }
            total = m
        }
        if total == nil || total == 0, !t.cell(r, "NetCash").isEmpty {
            guard let m = number(t.cell(r, "NetCash"), line: r.line, column: "NetCash") else { return }
            total = m - taxes - (sameCurrency ? commission : 0)
        }
        if let m = total { total = m < 0 ? -m : m }
        if total == 0 { total = nil }
        if rebate > 0 {
            let gross = total ?? amount * (price < 0 ? -price : price)
            total = buying ? gross - rebate : gross + rebate
            if let t = total, t <= 0 { total = nil }
        }
        self.money = currency
        let notes = "IBKR \(code)" + (fileID.isEmpty ? "" : " \(fileID)")
        let before = rows.count
        add(line: r.line, type: buying ? "buy" : "sell", coin: assetID, amount: amount, price: price < 0 ? -price : price, fee: fee, total: total,
            date: date, notes: notes)
        if let rowID, rows.count > before { rows[rows.count - 1].fields[.id] = rowID }
        if !commissionCurrency.isEmpty, commissionCurrency != currency, commission != 0 {
            if CurrencyCode.isSupported(commissionCurrency) {
                cash(line: r.line, type: commission < 0 ? "expense" : "deposit", amount: commission < 0 ? -commission : commission,
                     currency: commissionCurrency, date: date, notes: notes + (commission < 0 ? " commission" : " commission rebate"),
                     id: rowID.map { id($0 + ":commission") })
            } else {
                feesNotCounted[commissionCurrency, default: 0] += 1
            }
        }
    }

    mutating func ibkrCash(_ r: CSVRecord, _ t: StatementTable, dividends: inout DividendGroups) {
        let type = t.cell(r, "Type").lowercased()
        let currency = t.cell(r, "CurrencyPrimary", "Currency").uppercased()
        let dateText = [t.cell(r, "SettleDate"), t.cell(r, "DateTime", "Date/Time"), t.cell(r, "ReportDate")].first { !$0.isEmpty } ?? ""
        let utc = TimeZone(identifier: "UTC") ?? .current
        guard let day = Self.ibkrDate(dateText, zone: utc, dayOnly: true) else {
            problems.append("line \(r.line): date '\(TextEscaping.shortened(dateText))' is not an IBKR date (yyyyMMdd)")
            return
        }
        guard let amount = number(t.cell(r, "Amount"), line: r.line, column: "Amount") else { return }
        guard CurrencyCode.isSupported(currency) else { skip("\(type) (in \(currency.isEmpty ? "no currency" : currency))"); return }
        let fileID = t.cell(r, "TransactionID")
        let rowID = fileID.isEmpty ? nil : id("cash:" + fileID)
        let description = t.cell(r, "Description")
        let code = Self.ibkrCode(r, t)
        let notes = "IBKR " + (description.isEmpty ? type : description)
        /// Joins the row into its dividend: by `ActionID` (IBKR's id for the corporate action, on every
        /// row of it, a later correction too) when the file has one, else by asset, day and currency.
        func join(dividend: Decimal, tax: Decimal) {
            let action = t.cell(r, "ActionID")
            let key = action.isEmpty || action == "0" ? "\(code)|\(day)|\(currency)" : "action:\(action)|\(currency)"
            let name = description.split(separator: "(").first.map { String($0).trimmedSpaces } ?? code
            dividends.add(key: key, exact: !(action.isEmpty || action == "0"), asset: code, name: name, currency: currency, date: day,
                          payment: dividend, tax: tax, line: r.line, notes: notes, id: rowID ?? id("dividend:\(key)"))
        }
        switch type {
        case "dividends", "payment in lieu of dividends":
            guard !code.isEmpty else { skip("dividend (no symbol or ISIN)"); return }
            // bitpal has no return of capital: it is not income, and lowering the basis is not a row
            // bitpal keeps; counted, not taken for a dividend.
            if description.uppercased().contains("RETURN OF CAPITAL") { skip("dividend (return of capital)"); return }
            join(dividend: amount, tax: 0)
        case "withholding tax":
            guard !code.isEmpty else {
                // Tax on no asset: paid, an expense; refunded, counted (it is not money paid in).
                if amount < 0 { cash(line: r.line, type: "expense", amount: -amount, currency: currency, date: day, notes: notes, id: rowID) }
                else { skip(amount == 0 ? "withholding tax (zero)" : "withholding tax refund (no asset named)") }
                return
            }
            join(dividend: 0, tax: -amount)
        case "other fees", "commission adjustments", "broker fees", "advisor fees":
            if !code.isEmpty && description.uppercased().contains("DIVIDEND") { join(dividend: 0, tax: -amount); return }
            if amount < 0 {
                cash(line: r.line, type: "expense", amount: -amount, currency: currency, date: day, notes: notes, id: rowID)
            } else if Self.ibkrIsRefund(description) {
                // A fee given back (`… REFUND`, `REVERSAL`, `CREDIT`): money in, a deposit.
                cash(line: r.line, type: "deposit", amount: amount, currency: currency, date: day, notes: notes, id: rowID)
            } else {
                skip(amount == 0 ? "\(type) (zero)" : "\(type) (positive, not a refund)")
            }
        case "deposits/withdrawals", "deposits & withdrawals", "deposits and withdrawals":
            cash(line: r.line, type: amount < 0 ? "withdrawal" : "deposit", amount: amount < 0 ? -amount : amount, currency: currency,
                 date: day, notes: notes, id: rowID)
        case "broker interest received", "bond interest received", "broker interest paid", "bond interest paid":
            if amount > 0 {
                cash(line: r.line, type: "interest", amount: amount, currency: currency, date: day, notes: notes, id: rowID)
            } else {
                cash(line: r.line, type: "expense", amount: -amount, currency: currency, date: day, notes: notes, id: rowID)
            }
        default:
            skip(type.isEmpty ? "untyped cash row" : type)
        }
    }

    /// Whether a positive fee row says it gives a fee back.
    static func ibkrIsRefund(_ description: String) -> Bool {
        let words = description.uppercased().split(whereSeparator: { !$0.isLetter })
        return words.contains { ["REFUND", "REFUNDED", "REVERSAL", "REVERSED", "REBATE", "CREDIT", "CORRECTION"].contains($0) }
    }
}

/// IBKR's trade cancellations: IBKR keeps a cancelled fill and adds a row reversing it (`Buy/Sell`
/// `BUY (Ca.)`/`SELL (Ca.)`, `TransactionType` `TradeCancel`, the quantity's sign opposite). Both
/// are dropped: the original the cancellation names (`OrigTransactionID`, `OrigTradeID`), else one
/// execution of the same asset, quantity and price.
struct IBKRCancellations {
    private var ids: Set<String> = []
    private var keys: [String: Int] = [:]

    static func isExecution(_ r: CSVRecord, _ t: StatementTable) -> Bool {
        let level = t.cell(r, "LevelOfDetail").uppercased()
        return level.isEmpty || level == "EXECUTION"
    }

    static func isCancellation(_ r: CSVRecord, _ t: StatementTable) -> Bool {
        t.cell(r, "Buy/Sell").uppercased().contains("(CA.)") || t.cell(r, "TransactionType").uppercased() == "TRADECANCEL"
    }

    /// Asset, |quantity| and |price|.
    static func key(_ r: CSVRecord, _ t: StatementTable) -> String? {
        guard let q = ExchangeNumber.parse(t.cell(r, "Quantity")), let p = ExchangeNumber.parse(t.cell(r, "TradePrice")) else { return nil }
        return ExchangeImport.Mapper.ibkrCode(r, t) + "|" + DecimalFormatting.exact(q < 0 ? -q : q) + "|" + DecimalFormatting.exact(p < 0 ? -p : p)
    }

    /// Notes a cancellation row (other rows are passed over).
    mutating func note(_ r: CSVRecord, _ t: StatementTable) {
        guard Self.isExecution(r, t), Self.isCancellation(r, t) else { return }
        let named = [("transaction:", t.cell(r, "OrigTransactionID")), ("trade:", t.cell(r, "OrigTradeID"))].filter { !$0.1.isEmpty && $0.1 != "0" }
        if !named.isEmpty {
            for (kind, id) in named { ids.insert(kind + id) }
        } else if let key = Self.key(r, t) {
            keys[key, default: 0] += 1
        }
    }

    /// Whether the row is a cancellation or the execution one cancels (each cancellation without an
    /// original id takes one execution).
    mutating func drops(_ r: CSVRecord, _ t: StatementTable) -> Bool {
        guard Self.isExecution(r, t) else { return false }
        if Self.isCancellation(r, t) { return true }
        if ids.contains("transaction:" + t.cell(r, "TransactionID")) || ids.contains("trade:" + t.cell(r, "TradeID")) { return true }
        if !keys.isEmpty, let key = Self.key(r, t), let n = keys[key], n > 0 {
            keys[key] = n - 1
            return true
        }
        return false
    }
}
