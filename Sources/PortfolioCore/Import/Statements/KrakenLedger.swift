import Foundation

/// Kraken's `ledgers.csv` (`import --format kraken-ledger`): one row per balance change, the rows of
/// one event sharing a `refid` (in any order, not always next to each other). Columns are found by
/// name, so the variants with `subtype`, `wallet`, `subclass`, `amountusd` … all read.
///
/// - Trades (`trade`+`trade`, or `spend`+`receive` for Buy Crypto): one leg in money (fiat, or a USD
///   stablecoin at par) and one in crypto are a buy or a sell of the crypto with the money leg's
///   amount as the exact total and the money leg's fee as the fee. A fee on the crypto leg is paid
///   in units: a buy receives that many fewer, a sell gives that many more. Two money legs are a
///   currency conversion (fees out of what moved); two crypto legs are skipped as crypto-to-crypto.
///   A `KFEE` row (fees paid in fee credits) is counted among the fees not counted.
/// - Deposits and withdrawals come twice under one refid (pending, with an empty txid, then
///   completed): the completed row is kept. Money goes to cash (net of Kraken's fee); crypto is a
///   transfer-in at a cost of 0 (the file gives none) or a transfer-out with its fee in units.
/// - Staking and earn rewards (`staking` with a positive amount, `earn` with subtype `reward` or an
///   empty one) and `transfer` rows with subtype `airdrop` are rewards at a fair value of 0, the
///   file giving no price: the units count, the income does not (in money, interest on cash).
/// - Moves between spot, staking, earn and futures wallets are internal moves, skipped and counted:
///   by their subtype, or as `staking`, `earn` and `transfer` legs of one plain asset that sum to
///   zero in one refid group or at one instant (a staking migration `DOT.S` −10, `DOT28.S` +10;
///   `BTC.M` −0.01, `BTC` +0.01). Margin, rollovers and the rest are skipped and counted by type.
/// Staked codes (`DOT.S`, `BTC.M`, `ETH28.S` …) are the plain asset, X/Z codes their plain names.
/// The id is the refid, else the txid, else what the row says numbered among identical rows. Rows
/// of one refid that are each an event of their own (two rewards under one refid) are keyed by
/// their txid, else by the refid with what the row says, numbered among identical rows of it.
extension ExchangeImport.Mapper {
    /// One row of the ledger, read.
    struct KrakenLedgerRow {
        var line: Int
        var txid: String
        var refid: String
        var time: String
        var type: String
        var subtype: String
        /// The asset as the file names it (`XXBT`, `DOT.S`).
        var code: String
        /// The plain asset (`BTC`, `DOT`).
        var asset: String
        var amount: Decimal
        var fee: Decimal
        /// Whether the row has a balance (a pending deposit's or withdrawal's has none).
        var hasBalance: Bool
        /// What the row says, numbered among identical rows: its id when it has no refid or txid.
        var rowKey = ""
    }

    /// `DOT28.S`, `BTC.M`, `XXBT` → `DOT`, `BTC`, `BTC`.
    static func krakenLedgerAsset(_ code: String) -> String {
        var c = code.uppercased()
        for suffix in ["03.S", "04.S", "07.S", "14.S", "21.S", "28.S"] where c.hasSuffix(suffix) && c.count > suffix.count {
            c = String(c.dropLast(suffix.count))
            break
        }
        return krakenAsset(c)
    }

    static let krakenInternalSubtypes: Set<String> = [
        "spottostaking", "stakingfromspot", "stakingtospot", "spotfromstaking", "spottofutures", "spotfromfutures",
        "futurestospot", "futuresfromspot", "allocation", "deallocation", "autoallocation", "migration",
    ]

    mutating func krakenLedger(_ bytes: [UInt8]) throws(ImportFailure) {
        let t = try StatementTable.read(bytes, required: [["txid"], ["refid"], ["time"], ["type"], ["asset"], ["amount"]],
                                        what: "Kraken ledgers.csv")
        var groups: [[KrakenLedgerRow]] = []
        var index: [String: Int] = [:]
        var seen = RowOccurrences()
        for r in t.records {
            let code = t.cell(r, "asset")
            let time = t.cell(r, "time")
            guard !code.isEmpty, !time.isEmpty else { skip("row without a time or asset"); continue }
            guard let amount = number(t.cell(r, "amount"), line: r.line, column: "amount") else { continue }
            let feeText = t.cell(r, "fee")
            guard let fee = feeText.isEmpty ? 0 : number(feeText, line: r.line, column: "fee") else { continue }
            var row = KrakenLedgerRow(line: r.line, txid: t.cell(r, "txid"), refid: t.cell(r, "refid"), time: time,
                                      type: t.cell(r, "type").lowercased(), subtype: t.cell(r, "subtype").lowercased(),
                                      code: code.uppercased(), asset: Self.krakenLedgerAsset(code), amount: amount, fee: fee,
                                      hasBalance: !t.cell(r, "balance").isEmpty)
            row.rowKey = seen.key("row:\(row.time)|\(row.code)|\(row.type)|\(DecimalFormatting.exact(row.amount))")
            // `Unknown` (earn rows since 2024) and an empty refid join nothing: each row is its own event.
            let key = row.refid.isEmpty || row.refid.lowercased() == "unknown" ? "line:\(r.line)" : "ref:" + row.refid
            if let i = index[key] { groups[i].append(row) } else { index[key] = groups.count; groups.append([row]) }
        }
        // Legs of one plain asset that cancel out, in one refid group or at one instant, are a move
        // between wallets, never a reward: a staking migration (DOT.S −10, DOT28.S +10), spot to
        // staking, an earn allocation without a refid (BTC.M −0.01, BTC +0.01).
        var moves = Set<Int>()
        func cancelling(_ rows: [KrakenLedgerRow]) {
            var byAsset: [String: [KrakenLedgerRow]] = [:]
            for r in rows where ["staking", "earn", "transfer"].contains(r.type) { byAsset[r.asset, default: []].append(r) }
            for legs in byAsset.values where legs.count > 1 && legs.reduce(Decimal(0), { $0 + $1.amount }) == 0 {
                moves.formUnion(legs.map(\.line))
            }
        }
        var byTime: [String: [KrakenLedgerRow]] = [:]
        for g in groups {
            if g.count > 1 { cancelling(g) }
            for r in g { byTime[r.time, default: []].append(r) }
        }
        for rows in byTime.values { cancelling(rows) }
        for group in groups {
            krakenLedgerEvent(group, walletMove: { moves.contains($0.line) })
        }
    }

    /// The stable id of an event: its refid, else its txid, else what the row says (numbered among
    /// identical rows, so two equal rewards of one second keep ids of their own).
    func krakenLedgerID(_ r: KrakenLedgerRow) -> String {
        if !r.refid.isEmpty && r.refid.lowercased() != "unknown" { return id("ref:" + r.refid) }
        if !r.txid.isEmpty { return id("tx:" + r.txid) }
        return id(r.rowKey)
    }

    mutating func krakenLedgerEvent(_ group: [KrakenLedgerRow], walletMove: (KrakenLedgerRow) -> Bool) {
        // Fee credits: a row of its own in the group, its fee not in money.
        var rows: [KrakenLedgerRow] = []
        for r in group {
            if r.asset == "KFEE" {
                if r.fee != 0 || r.amount != 0 { feesNotCounted["KFEE", default: 0] += 1 }
            } else {
                rows.append(r)
            }
        }
        guard let first = rows.first else { return }
        let types = Set(rows.map(\.type))
        if types.isSubset(of: ["trade", "spend", "receive"]) {
            krakenLedgerTrade(rows)
        } else if types == ["deposit"] || types == ["withdrawal"] {
            // The pending row (no txid, no balance) and the completed one: the completed one counts.
            func done(_ r: KrakenLedgerRow) -> Int { (r.txid.isEmpty ? 0 : 2) + (r.hasBalance ? 1 : 0) }
            let kept = rows.reversed().max { done($0) < done($1) } ?? first
            for _ in 1..<rows.count { skip("\(first.type) (pending row; the completed one is kept)") }
            krakenLedgerTransfer(kept)
        } else if rows.count == 1 {
            krakenLedgerSingle(first, walletMove: walletMove(first), id: krakenLedgerID(first))
        } else {
            // Each row its own event: the refid they share is no id for any one of them.
            var seen = RowOccurrences()
            for r in rows { krakenLedgerSingle(r, walletMove: walletMove(r), id: krakenLedgerSharedID(r, seen: &seen)) }
        }
    }

    /// The id of one of several rows of a refid handled each on its own (two rewards of one refid):
    /// its txid, else the refid with what the row says, numbered among identical rows of the group.
    func krakenLedgerSharedID(_ r: KrakenLedgerRow, seen: inout RowOccurrences) -> String {
        if !r.txid.isEmpty { return id("tx:" + r.txid) }
        return id(seen.key("ref:\(r.refid)|\(r.time)|\(r.code)|\(r.type)|\(r.subtype)|\(DecimalFormatting.exact(r.amount))|\(DecimalFormatting.exact(r.fee))"))
    }

    mutating func krakenLedgerTrade(_ rows: [KrakenLedgerRow]) {
        let out = rows.filter { $0.amount < 0 }, into = rows.filter { $0.amount > 0 }
        guard rows.count == 2, out.count == 1, into.count == 1, let spent = out.first, let got = into.first else {
            for _ in rows { skip("trade (legs not paired)") }
            return
        }
        guard let date = krakenLedgerDate(got) else { return }
        let rowID = krakenLedgerID(got)
        let spentMoney = ExchangeImport.moneyCurrency(spent.asset), gotMoney = ExchangeImport.moneyCurrency(got.asset)
        let notes = "Kraken \(spent.code)→\(got.code) \(got.refid)"
        switch (spentMoney, gotMoney) {
        case let (.some(from), .some(to)):
            // Money for money: what left (with its fee) and what arrived (less its fee).
            cashExchange(line: spent.line, from: (-spent.amount + spent.fee, from), to: (got.amount - got.fee, to), date: date, notes: notes,
                         id: rowID)
        case let (.some(currency), nil):
            money = currency
            let count = self.rows.count
            add(line: got.line, type: "buy", coin: got.asset, amount: got.amount - got.fee, price: -spent.amount / got.amount, fee: spent.fee,
                total: -spent.amount, date: date, notes: notes)
            if self.rows.count > count { self.rows[self.rows.count - 1].fields[.id] = rowID }
        case let (nil, .some(currency)):
            money = currency
            let count = self.rows.count
            add(line: spent.line, type: "sell", coin: spent.asset, amount: -spent.amount + spent.fee, price: got.amount / -spent.amount,
                fee: got.fee, total: got.amount, date: date, notes: notes)
            if self.rows.count > count { self.rows[self.rows.count - 1].fields[.id] = rowID }
        case (nil, nil):
            skip(spent.asset == got.asset ? "trade (into the same asset)" : "crypto-to-crypto")
        }
    }

    mutating func krakenLedgerDate(_ r: KrakenLedgerRow) -> String? {
        if let date = Self.utcTimestamp(r.time) { return date }
        problems.append("line \(r.line): time '\(TextEscaping.escaped(r.time))' is not a Kraken time")
        return nil
    }

    /// A deposit or a withdrawal: money to cash, crypto as a transfer.
    mutating func krakenLedgerTransfer(_ r: KrakenLedgerRow) {
        guard let date = krakenLedgerDate(r) else { return }
        let rowID = krakenLedgerID(r)
        let notes = "Kraken \(r.type) \(r.code)" + (r.txid.isEmpty ? "" : " \(r.txid)")
        let deposit = r.type == "deposit"
        if let currency = ExchangeImport.moneyCurrency(r.asset) {
            // Kraken's fee on a deposit or a withdrawal is out of the balance: net in, gross out.
            let amount = deposit ? r.amount - r.fee : -r.amount + r.fee
            cash(line: r.line, type: deposit ? "deposit" : "withdrawal", amount: amount, currency: currency, date: date, notes: notes, id: rowID)
            return
        }
        if deposit {
            transferIn(line: r.line, asset: r.asset, amount: r.amount - r.fee, date: date, notes: notes, id: rowID)
        } else {
            transferOut(line: r.line, asset: r.asset, amount: r.amount < 0 ? -r.amount : r.amount, fee: r.fee, date: date, notes: notes, id: rowID)
        }
    }

    mutating func krakenLedgerSingle(_ r: KrakenLedgerRow, walletMove: Bool, id rowID: String) {
        switch r.type {
        case "staking", "earn", "transfer":
            if Self.krakenInternalSubtypes.contains(r.subtype) || walletMove { skip("internal move (between Kraken's wallets)"); return }
            let isReward = (r.type == "staking" && r.subtype.isEmpty) || r.subtype == "reward" || r.subtype == "airdrop"
                || (r.type == "earn" && r.subtype.isEmpty)
            guard isReward, r.amount > 0 else {
                skip(r.type == "transfer" ? "transfer" + (r.subtype.isEmpty ? "" : " (\(r.subtype))") : "internal move (between Kraken's wallets)")
                return
            }
            guard let date = krakenLedgerDate(r) else { return }
            let notes = "Kraken \(r.type) \(r.code)" + (r.txid.isEmpty ? "" : " \(r.txid)")
            if let currency = ExchangeImport.moneyCurrency(r.asset) {
                cash(line: r.line, type: "interest", amount: r.amount - r.fee, currency: currency, date: date, notes: notes, id: rowID)
            } else {
                reward(line: r.line, asset: r.asset, amount: r.amount - r.fee, date: date, notes: notes, id: rowID)
            }
        case "margin", "rollover", "settled", "margin trade":
            skip("margin")
        case "trade", "spend", "receive":
            skip("trade (legs not paired)")
        default:
            skip(r.type.isEmpty ? "untyped" : r.type + (r.subtype.isEmpty ? "" : " (\(r.subtype))"))
        }
    }

    /// Crypto received from elsewhere: a transfer-in at a cost of 0, the file giving none (the
    /// portfolio's base currency; `bitpal edit` can set the real cost).
    mutating func transferIn(line: Int, asset: String, amount: Decimal, date: String, notes: String, id rowID: String) {
        guard let a = Self.fixed(amount), a.units > 0 else {
            if amount <= 0 { skip("transfer-in (zero)") } else { tooLarge(line: line, "transfer-in") }
            return
        }
        keep(line: line, kind: "transfer-in", [[
            "id": rowID, "type": "transfer-in", "asset": asset, "amount": a.text, "price": "0", "fee": "0", "currency": "", "date": date,
            "notes": notes + "; cost not in the file (0)",
        ]])
    }

    /// Crypto sent elsewhere, `fee` units to the network.
    mutating func transferOut(line: Int, asset: String, amount: Decimal, fee: Decimal, date: String, notes: String, id rowID: String) {
        guard let a = Self.fixed(amount), a.units > 0, let f = Self.fixed(fee) else {
            if amount == 0 { skip("transfer-out (zero)") } else { tooLarge(line: line, "transfer-out") }
            return
        }
        keep(line: line, kind: "transfer-out", [[
            "id": rowID, "type": "transfer-out", "asset": asset, "amount": a.text, "fee": f.text, "date": date, "notes": notes,
        ]])
    }

    /// Units earned (staking, interest in crypto, an airdrop): a reward at a fair value of 0, the
    /// file giving no price (the units count; the income is not known).
    mutating func reward(line: Int, asset: String, amount: Decimal, date: String, notes: String, id rowID: String) {
        guard let a = Self.fixed(amount), a.units > 0 else {
            if amount <= 0 { skip("reward (zero)") } else { tooLarge(line: line, "reward") }
            return
        }
        keep(line: line, kind: "reward", [[
            "id": rowID, "type": "reward", "asset": asset, "amount": a.text, "price": "0", "currency": "", "date": date,
            "notes": notes + "; value not in the file (0)",
        ]])
    }
}
