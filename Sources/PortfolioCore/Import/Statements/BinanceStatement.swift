import Foundation

/// Binance's Transaction History statement (`import --format binance-statement`):
/// `UTC_Time,Account,Operation,Coin,Change,Remark`, with `User_ID` before it (2021–2024), or
/// `User ID,Time,…` (2025+) whose `yy-MM-dd` times are in the zone the file name gives
/// (`…(UTC+7).csv`, or `--utc-offset`). One row per balance change; a trade's legs share their
/// second and have no order id.
///
/// - Trades (`Buy`/`Sell`, `Transaction Related`, `Transaction Buy`/`Spend`/`Fee`,
///   `Transaction Revenue`/`Sold`/`Fee`, `Fee`, `Binance Convert`, `Buy Crypto`): the legs of one
///   second and account are one trade, fills merged (what came in is one coin, what went out one
///   coin). Money (fiat, or a USD stablecoin at par) against crypto is a buy or a sell with the
///   money side as the exact total; a fee in the money is the fee, a fee in the crypto is paid in
///   units (a buy receives fewer, a sell gives more), a fee in another coin (BNB) is counted among
///   the fees not counted. Money against money is a currency conversion; crypto against crypto
///   and dust into BNB are skipped and counted.
/// - `Deposit`, `Fiat Deposit` and `Withdraw` (its network fee inside the amount): money goes to
///   cash, crypto is a transfer-in at a cost of 0 (the file gives none) or a transfer-out.
/// - Staking, Earn and Launchpool interest, distributions and airdrops are rewards at a fair value
///   of 0 (the file gives no price: the units count, the income does not); in money, interest on cash.
/// - Moves between wallets and Earn subscriptions and redemptions are internal moves; futures,
///   P2P and anything else are skipped and counted by operation. Rows with no time or coin are skipped.
/// The id is what the row says with its instant (the same export in another zone keeps its ids),
/// numbered among identical rows (two equal distributions in one second are two rewards).
extension ExchangeImport.Mapper {
    /// One row of the statement, read.
    struct BinanceStatementRow {
        var line: Int
        var time: String
        var date: String
        var account: String
        var operation: String
        var coin: String
        var change: Decimal
    }

    static let binanceTradeOperations: Set<String> = [
        "buy", "sell", "fee", "transaction related", "transaction buy", "transaction spend", "transaction fee", "transaction revenue",
        "transaction sold", "binance convert", "buy crypto", "large otc trading", "eth 2.0 staking",
    ]

    static let binanceRewardOperations: Set<String> = [
        "staking rewards", "simple earn flexible interest", "simple earn locked rewards", "launchpool interest", "distribution",
        "airdrop assets", "eth 2.0 staking rewards", "bnb vault rewards", "cash voucher distribution", "mission reward distribution",
        "savings interest", "pos savings interest", "locked staking rewards", "flexible savings interest", "launchpool airdrop",
        "megadrop rewards", "hodler airdrops distribution",
    ]

    static func binanceIsInternal(_ operation: String) -> Bool {
        operation.hasPrefix("transfer between") || operation.contains("subscription") || operation.contains("redemption")
            || operation.hasSuffix("purchase") || operation.hasSuffix("account transfer") || operation == "staking purchase"
    }

    mutating func binanceStatement(_ bytes: [UInt8], fileName: String, offset: Int?) throws(ImportFailure) {
        let t = try StatementTable.read(bytes, required: [["Operation"], ["Coin"], ["Change"], ["UTC_Time", "Time"]],
                                        what: "Binance transaction-history")
        let utc = t.has("UTC_Time")
        var zone = 0
        if !utc {
            guard let given = offset ?? Self.offsetFromFileName(fileName) else {
                throw ImportFailure(problems: ["this Binance statement gives times in the zone named only in its file name, e.g. '(UTC+7)'; "
                    + "keep Binance's file name, or give the zone with --utc-offset"])
            }
            zone = given
        }
        let timeColumn = utc ? "UTC_Time" : "Time"
        var trades: [[BinanceStatementRow]] = []
        var tradeIndex: [String: Int] = [:]
        // Events in the file's order: a trade (its group, by index) where its first leg is, or a single row.
        var events: [(trade: Int?, row: BinanceStatementRow)] = []
        for r in t.records {
            let time = t.cell(r, timeColumn), coin = t.cell(r, "Coin").uppercased()
            guard !time.isEmpty, !coin.isEmpty else { skip("row without a time or coin"); continue }
            let operation = t.cell(r, "Operation").lowercased()
            guard let change = number(t.cell(r, "Change"), line: r.line, column: "Change") else { continue }
            guard let date = binanceStatementDate(time, zone: zone, line: r.line, column: timeColumn) else { continue }
            let row = BinanceStatementRow(line: r.line, time: time, date: date, account: t.cell(r, "Account"), operation: operation, coin: coin,
                                          change: change)
            if Self.binanceTradeOperations.contains(operation) {
                let key = time + "|" + row.account.lowercased()
                if let i = tradeIndex[key] {
                    trades[i].append(row)
                } else {
                    tradeIndex[key] = trades.count
                    events.append((trades.count, row))
                    trades.append([row])
                }
                continue
            }
            events.append((nil, row))
        }
        // Identical rows (two equal distributions in one second) are numbered, so each keeps an id.
        var seen = RowOccurrences()
        for event in events {
            if let i = event.trade { binanceStatementTrade(trades[i], seen: &seen) } else { binanceStatementSingle(event.row, seen: &seen) }
        }
    }

    /// `2024-07-25 21:30:41` (UTC) or `24-07-25 21:30:41` in the file's zone → an instant.
    mutating func binanceStatementDate(_ text: String, zone: Int, line: Int, column: String) -> String? {
        var t = text
        if t.count == 17, t.dropFirst(2).first == "-" { t = "20" + t }
        guard let local = Self.utcTimestamp(t), let parsed = ISODate.parseTimestamp(utf8: local.utf8) else {
            problems.append("line \(line): \(column) '\(TextEscaping.escaped(text))' is not a Binance time")
            return nil
        }
        let shifted = parsed.addingTimeInterval(TimeInterval(-zone))
        guard ISODate.isInRange(shifted) else {
            problems.append("line \(line): \(column) '\(TextEscaping.escaped(text))' is outside the dates bitpal keeps (\(ISODate.rangeText))")
            return nil
        }
        return ISODate.format(shifted)
    }

    /// A stable id from what a row says (overlapping exports give the same rows again), its time the
    /// instant (an export in another zone keeps the ids), numbered among identical rows.
    func binanceStatementID(_ seen: inout RowOccurrences, _ parts: String...) -> String { id(seen.key(parts.joined(separator: "|"))) }

    mutating func binanceStatementSingle(_ r: BinanceStatementRow, seen: inout RowOccurrences) {
        let op = r.operation
        let rowID = binanceStatementID(&seen, r.date, r.account.lowercased(), op, r.coin, DecimalFormatting.exact(r.change))
        let notes = "Binance \(op) \(r.coin)"
        guard r.change != 0 else { skip("\(op.isEmpty ? "untyped" : op) (zero)"); return }
        switch op {
        case "deposit", "fiat deposit", "withdraw", "fiat withdraw", "fiat withdrawal":
            let deposit = op.hasSuffix("deposit")
            guard (r.change > 0) == deposit else { skip("\(op) (with the wrong sign)"); return }
            let amount = r.change < 0 ? -r.change : r.change
            if let currency = ExchangeImport.moneyCurrency(r.coin) {
                cash(line: r.line, type: deposit ? "deposit" : "withdrawal", amount: amount, currency: currency, date: r.date, notes: notes, id: rowID)
            } else if deposit {
                transferIn(line: r.line, asset: r.coin, amount: amount, date: r.date, notes: notes, id: rowID)
            } else {
                transferOut(line: r.line, asset: r.coin, amount: amount, fee: 0, date: r.date, notes: notes + "; network fee inside the amount", id: rowID)
            }
        case "small assets exchange bnb":
            skip("small assets exchange BNB (dust into BNB, crypto-to-crypto)")
        default:
            if Self.binanceRewardOperations.contains(op) || op.hasSuffix(" interest") || op.hasSuffix(" rewards") {
                guard r.change > 0 else { skip("\(op) (negative)"); return }
                if let currency = ExchangeImport.moneyCurrency(r.coin) {
                    cash(line: r.line, type: "interest", amount: r.change, currency: currency, date: r.date, notes: notes, id: rowID)
                } else {
                    reward(line: r.line, asset: r.coin, amount: r.change, date: r.date, notes: notes, id: rowID)
                }
            } else if Self.binanceIsInternal(op) {
                skip("internal move (between Binance's wallets)")
            } else {
                skip(op.isEmpty ? "untyped" : op)
            }
        }
    }

    /// The legs of one second: what came in, what went out, the fees.
    mutating func binanceStatementTrade(_ legs: [BinanceStatementRow], seen: inout RowOccurrences) {
        var gotCoins: [String: Decimal] = [:], spentCoins: [String: Decimal] = [:], fees: [String: Decimal] = [:]
        for l in legs {
            if l.operation.hasSuffix("fee") { fees[l.coin, default: 0] += -l.change }
            else if l.change > 0 { gotCoins[l.coin, default: 0] += l.change }
            else if l.change < 0 { spentCoins[l.coin, default: 0] += -l.change }
        }
        guard let first = legs.first else { return }
        guard gotCoins.count == 1, spentCoins.count == 1, let (got, gotAmount) = gotCoins.first, let (spent, spentAmount) = spentCoins.first,
              got != spent else {
            skip(gotCoins.count > 1 || spentCoins.count > 1 ? "trade (several coins in one second, not paired)" : "trade (legs incomplete)")
            return
        }
        let rowID = binanceStatementID(&seen, first.date, first.account.lowercased(), "trade", spent, got)
        let line = legs.map(\.line).min() ?? first.line
        let notes = "Binance \(legs.map(\.operation).contains("binance convert") ? "convert" : "trade") \(spent)→\(got)"
        let spentMoney = ExchangeImport.moneyCurrency(spent), gotMoney = ExchangeImport.moneyCurrency(got)
        // Fees: in the money side, in the crypto (units), or in another coin (not counted).
        func feeIn(_ coin: String) -> Decimal { fees[coin] ?? 0 }
        func otherFees(_ counted: Set<String>) {
            for (coin, value) in fees where !counted.contains(coin) && value != 0 { feesNotCounted[coin, default: 0] += 1 }
        }
        switch (spentMoney, gotMoney) {
        case let (.some(currency), nil):
            money = currency
            otherFees([spent, got])
            let count = rows.count
            add(line: line, type: "buy", coin: got, amount: gotAmount - feeIn(got), price: spentAmount / gotAmount, fee: feeIn(spent),
                total: spentAmount, date: first.date, notes: notes)
            if rows.count > count { rows[rows.count - 1].fields[.id] = rowID }
        case let (nil, .some(currency)):
            money = currency
            otherFees([spent, got])
            let count = rows.count
            add(line: line, type: "sell", coin: spent, amount: spentAmount + feeIn(spent), price: gotAmount / spentAmount, fee: feeIn(got),
                total: gotAmount, date: first.date, notes: notes)
            if rows.count > count { rows[rows.count - 1].fields[.id] = rowID }
        case let (.some(from), .some(to)):
            otherFees([spent, got])
            cashExchange(line: line, from: (spentAmount + feeIn(spent), from), to: (gotAmount - feeIn(got), to), date: first.date, notes: notes,
                         id: rowID)
        case (nil, nil):
            skip("crypto-to-crypto")
        }
    }
}
