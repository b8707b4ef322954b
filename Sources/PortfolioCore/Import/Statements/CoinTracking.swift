import Foundation

/// CoinTracking's trade table (`import --format cointracking`): the export
/// `"Type","Buy","Cur.","Sell","Cur.","Fee","Cur.","Exchange","Group","Comment","Date"[,"Tx-ID"]`,
/// whose `Cur.` columns share a name and are read by position (the one after `Buy`, `Sell`, `Fee`),
/// and the import template `Type, Buy Amount, Buy Currency, Sell Amount, Sell Currency, Fee, Fee
/// Currency, Exchange, Trade-Group, Comment, Date[, Tx-ID …]`, read by name. `-` is an empty cell.
/// Dates follow the user's CoinTracking setting and may be mixed in one file: `dd.MM.yyyy HH:mm:ss`,
/// `yyyy-MM-dd HH:mm:ss`, US `M/d/yyyy H:mm` or `d/M/yyyy H:mm` (each with or without seconds, or a
/// day alone). Slashed dates are read month first unless the file's unambiguous ones say otherwise:
/// a first number above 12 (`25/12/2024`) in some date makes the file's ambiguous ones day first, a
/// second one above 12 keeps them month first. The file names no zone: times are in the zone
/// `--utc-offset` gives, else read as UTC. The fee is paid on top of what was bought or sold.
///
/// - `Trade`: money (fiat, or a USD stablecoin at par) against crypto is a buy or a sell with the
///   money side as the exact total; a fee in that money is the fee, a fee in the crypto is paid in
///   units, a fee in anything else is counted among the fees not counted. Money against money is a
///   currency conversion; crypto against crypto is skipped and counted (the table gives no value).
/// - `Deposit` and `Withdrawal`: money to or from cash; crypto a transfer-in at a cost of 0 (the file
///   gives none) or a transfer-out with its fee in units.
/// - `Income`, `Staking`, `Mining`, `Airdrop`, `Gift/Tip`, `Reward / Bonus`, `Interest Income`,
///   `Lending Income`, … (incoming): rewards at a fair value of 0 (the units count, the income is
///   not known); in money, interest on cash.
/// - `Lost`, `Stolen`, `Other Fee`, `Margin Fee`, `Borrowing Fee`: units gone for nothing (a `fee`,
///   their basis a realized loss); in money, an expense.
/// - `Spend`, `Donation`, `Gift`, `Expense (non taxable)` (outgoing): money is a withdrawal from
///   cash; crypto has no value in the table and is skipped and counted.
/// - Anything else (margin, derivatives, liquidity, loans) is skipped and counted by type.
/// The id is the Tx-ID (when given) with what the row says, numbered only among rows that are wholly
/// identical.
extension ExchangeImport.Mapper {
    static let coinTrackingRewardTypes: Set<String> = [
        "income", "staking", "mining", "mining (commercial)", "airdrop", "gift/tip", "reward / bonus", "interest income", "lending income",
        "income (non taxable)", "staking (non taxable)", "minting", "dividends income", "bonus", "reward",
    ]
    static let coinTrackingLossTypes: Set<String> = ["lost", "stolen", "other fee", "margin fee", "borrowing fee", "fee"]
    static let coinTrackingSpendTypes: Set<String> = ["spend", "donation", "gift", "expense (non taxable)"]

    static let coinTrackingDateFormats: [DateFormat] = [
        "dd.MM.yyyy HH:mm:ss", "dd.MM.yyyy HH:mm", "yyyy-MM-dd HH:mm:ss", "yyyy-MM-dd HH:mm", "dd.MM.yyyy", "yyyy-MM-dd",
    ].compactMap { DateFormat($0) }
    static let coinTrackingMonthFirst: [DateFormat] = ["M/d/yyyy HH:mm:ss", "M/d/yyyy HH:mm", "M/d/yyyy"].compactMap { DateFormat($0) }
    static let coinTrackingDayFirst: [DateFormat] = ["d/M/yyyy HH:mm:ss", "d/M/yyyy HH:mm", "d/M/yyyy"].compactMap { DateFormat($0) }

    /// Whether a file's slashed dates are day first: some date's first number is above 12 and no
    /// date's second one is (month first, CoinTracking's US setting, otherwise).
    static func coinTrackingDayFirst(_ dates: [String]) -> Bool {
        var dayFirst = false
        for text in dates {
            let parts = text.split(separator: " ").first?.split(separator: "/").map { Int($0) } ?? []
            guard parts.count == 3, let a = parts[0], let b = parts[1] else { continue }
            if b > 12 { return false }
            if a > 12 { dayFirst = true }
        }
        return dayFirst
    }

    /// A CoinTracking date as the local time of `zone`; `nil` when none of its formats reads it.
    /// Slashed dates are tried in the file's order first (`dayFirst`), then the other.
    static func coinTrackingDate(_ text: String, zone: TimeZone = TimeZone(secondsFromGMT: 0) ?? .current, dayFirst: Bool = false) -> String? {
        let slashed = dayFirst ? coinTrackingDayFirst + coinTrackingMonthFirst : coinTrackingMonthFirst + coinTrackingDayFirst
        for format in coinTrackingDateFormats + slashed {
            if let date = format.recordText(text, in: zone) { return date }
        }
        return nil
    }

    mutating func coinTracking(_ bytes: [UInt8], offset: Int? = nil) throws(ImportFailure) {
        let t = try StatementTable.read(bytes, required: [["Type"], ["Buy", "Buy Amount"], ["Sell", "Sell Amount"], ["Date"]],
                                        what: "CoinTracking trade table")
        let zone = TimeZone(secondsFromGMT: offset ?? 0) ?? TimeZone(secondsFromGMT: 0) ?? .current
        let dayFirst = Self.coinTrackingDayFirst(t.records.map { t.cell($0, "Date") })
        // The template names every column; the export's `Cur.` is the column after its amount.
        let template = t.has("Buy Amount")
        let buy = t.columns[template ? "buy amount" : "buy"], sell = t.columns[template ? "sell amount" : "sell"], fee = t.columns["fee"]
        let buyCur = template ? t.columns["buy currency"] : buy.map { $0 + 1 }
        let sellCur = template ? t.columns["sell currency"] : sell.map { $0 + 1 }
        let feeCur = template ? t.columns["fee currency"] : fee.map { $0 + 1 }
        var seen = RowOccurrences()
        for r in t.records {
            func at(_ i: Int?) -> String {
                guard let i, i < r.fields.count else { return "" }
                let v = r.fields[i].trimmedSpaces
                return v == "-" ? "" : v
            }
            let type = t.cell(r, "Type").lowercased()
            let txid = t.cell(r, "Tx-ID", "TxID", "Tx ID")
            let cells = r.fields.map { $0.trimmedSpaces == "-" ? "" : $0.trimmedSpaces }
            let rowID = id(seen.key(RowOccurrences.rowKey(hash: txid == "-" ? "" : txid, cells)))
            let dateText = t.cell(r, "Date")
            guard let date = Self.coinTrackingDate(dateText, zone: zone, dayFirst: dayFirst) else {
                problems.append("line \(r.line): Date '\(TextEscaping.escaped(dateText))' is not a CoinTracking date (dd.MM.yyyy HH:mm:ss, yyyy-MM-dd HH:mm:ss, M/d/yyyy H:mm or d/M/yyyy H:mm)")
                continue
            }
            func leg(_ amountColumn: Int?, _ currencyColumn: Int?, _ name: String) -> (Decimal, String)?? {
                let text = at(amountColumn), currency = at(currencyColumn).uppercased()
                if text.isEmpty { return .some(nil) }
                guard let v = number(text, line: r.line, column: name) else { return nil }
                guard v != 0, !currency.isEmpty else { return .some(nil) }
                return .some((v < 0 ? -v : v, currency))
            }
            guard let bought = leg(buy, buyCur, "Buy"), let sold = leg(sell, sellCur, "Sell"), let paid = leg(fee, feeCur, "Fee") else { continue }
            let exchange = t.cell(r, "Exchange"), comment = t.cell(r, "Comment")
            let notes = "CoinTracking \(type)" + (exchange.isEmpty || exchange == "-" ? "" : " \(exchange)")
                + (comment.isEmpty || comment == "-" ? "" : " \(comment)") + (txid.isEmpty || txid == "-" ? "" : " \(txid)")
            let e = InterchangeEvent(line: r.line, date: date, notes: notes, id: rowID, sent: sold, got: bought, fee: paid, worth: nil)
            let what = type.isEmpty ? "untyped" : type
            switch type {
            case "trade":
                guard bought != nil, sold != nil else { skip("trade (one side missing)"); continue }
                interchangeTrade(e)
            case "deposit":
                guard let b = bought else { skip("deposit (no amount)"); continue }
                interchangeDeposit(e, asset: b)
            case "withdrawal":
                guard let s = sold else { skip("withdrawal (no amount)"); continue }
                interchangeWithdrawal(e, asset: s)
            default:
                if Self.coinTrackingRewardTypes.contains(type) || type.hasSuffix(" income") {
                    guard let b = bought else { skip("\(what) (no amount)"); continue }
                    interchangeReward(e, asset: b, what: type)
                } else if Self.coinTrackingLossTypes.contains(type) {
                    guard let s = sold else { skip("\(what) (no amount)"); continue }
                    interchangeLoss(e, asset: s, what: type)
                } else if Self.coinTrackingSpendTypes.contains(type) {
                    guard let s = sold else { skip("\(what) (no amount)"); continue }
                    interchangeSpend(e, asset: s, what: type)
                } else {
                    skip(what)
                }
            }
        }
    }
}
