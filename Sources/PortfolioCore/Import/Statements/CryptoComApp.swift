import Foundation

/// The Crypto.com App's transaction CSV (`import --format cryptocom`): `Timestamp (UTC),
/// Transaction Description, Currency, Amount, To Currency, To Amount, Native Currency, Native
/// Amount, Native Amount (in USD), Transaction Kind[, Transaction Hash]`, times in UTC. `Native
/// Amount` is the row's value in the user's currency; its sign is not to be trusted, so its size is
/// read. Kinds are matched on `Transaction Kind`:
///
/// - `crypto_purchase` (bought with a card): a buy with the native amount as the exact total.
///   The card money never appears in this file, so in a portfolio that tracks cash the money the
///   buy spends is first recorded as a deposit of that amount on the same date (else the import
///   would find no cash for the buy).
/// - `viban_purchase` (bought from the fiat wallet): money paid into the fiat wallet is not in this
///   file either, but money this file credits to it is (crypto sold to fiat, `crypto_viban_exchange`).
///   The file's balance per currency is followed in order of time (what its rows credit in, less
///   what they take out), and in a portfolio that tracks cash only the part of the purchase that
///   balance does not cover is deposited first.
/// - `crypto_exchange`, `viban_purchase`, `crypto_viban_exchange` (one row, `To Currency`/`To
///   Amount`) and the `*_credited`/`*_debited` pairs of one time (`crypto_wallet_swap`,
///   `dust_conversion`, `dynamic_coin_swap`, `interest_swap`, `lockup_swap`): money (fiat, or a USD
///   stablecoin at par) against crypto is a buy or a sell with the money side as the exact total;
///   crypto against crypto is a swap valued at the native amount (of the credited leg); money
///   against money is a currency conversion. A pair of several debits to one credit (dust of many
///   coins) is skipped and counted.
/// - Rewards (`referral_card_cashback`, `reimbursement`, `crypto_earn_interest_paid`,
///   `mco_stake_reward`, `referral_bonus`, `referral_gift`, `supercharger_reward_to_app_credited`,
///   `finance.…compound_interest…`, and other kinds naming interest, a reward or cashback) are
///   rewards at their native value (price = native amount ÷ amount); in money, interest on cash.
/// - `crypto_deposit`/`crypto_withdrawal` (and `crypto_transfer` by its sign): money to or from
///   cash; crypto a transfer-in at its native value (price = native amount ÷ amount; 0 with a note
///   when the row has none) or a transfer-out.
/// - `card_top_up`: money leaves cash (a withdrawal to the card); crypto is a spend at its native
///   value (the money went to the card, not to cash), a transfer-out when the row has no value.
/// - `crypto_payment`: a spend at its native value.
/// - Moves between the app, the Exchange, Earn, Supercharger and locked stakes are internal moves;
///   reverted rewards and every other kind are skipped and counted by kind.
/// The id is the Transaction Hash (when given) with what the row says, numbered only among rows that
/// are wholly identical.
extension ExchangeImport.Mapper {
    struct CryptoComRow {
        var line: Int
        var date: String
        var time: String
        var description: String
        var currency: String
        var amount: Decimal
        var toCurrency: String
        var toAmount: Decimal?
        /// The native value (its size; the sign is not consistent) in `nativeCurrency` when that is money.
        var native: (Decimal, String)?
        var kind: String
        var id: String
    }

    static let cryptoComPairs = ["crypto_wallet_swap", "dust_conversion", "dynamic_coin_swap", "interest_swap", "lockup_swap"]
    static let cryptoComExchanges: Set<String> = ["crypto_exchange", "viban_purchase", "crypto_viban_exchange"]
    static let cryptoComRewards: Set<String> = [
        "referral_card_cashback", "reimbursement", "crypto_earn_interest_paid", "crypto_earn_extra_interest_paid", "mco_stake_reward",
        "supercharger_reward_to_app_credited", "referral_bonus", "referral_gift", "referral_commission", "card_cashback",
        "pay_checkout_reward", "gift_card_reward", "rewards_platform_deposit_credited",
    ]
    static let cryptoComInternal: Set<String> = [
        "crypto_to_exchange_transfer", "exchange_to_crypto_transfer", "crypto_earn_program_created", "crypto_earn_program_withdrawn",
        "supercharger_deposit", "supercharger_withdrawal", "lockup_lock", "lockup_unlock", "lockup_upgrade",
    ]

    /// A Crypto.com number: native amounts carry up to 40 decimals, read to 20.
    mutating func cryptoComNumber(_ text: String, line: Int, column: String) -> Decimal? {
        if let v = ExchangeNumber.parse(text) { return v }
        if let point = text.firstIndex(of: "."), let v = ExchangeNumber.parse(String(text[...point]) + text[text.index(after: point)...].prefix(20)) {
            return v
        }
        return number(text, line: line, column: column)
    }

    mutating func cryptoCom(_ bytes: [UInt8]) throws(ImportFailure) {
        let t = try StatementTable.read(bytes, required: [["Timestamp (UTC)"], ["Transaction Kind"], ["Currency"], ["Amount"]],
                                        what: "Crypto.com App transaction CSV")
        var seen = RowOccurrences()
        var events: [(pair: String?, row: CryptoComRow)] = []
        var pairs: [String: [CryptoComRow]] = [:]
        for r in t.records {
            let time = t.cell(r, "Timestamp (UTC)")
            guard let date = Self.utcTimestamp(time) else {
                problems.append("line \(r.line): Timestamp (UTC) '\(TextEscaping.escaped(time))' is not a Crypto.com time")
                continue
            }
            guard let amount = cryptoComNumber(t.cell(r, "Amount"), line: r.line, column: "Amount") else { continue }
            var toAmount: Decimal?
            let toText = t.cell(r, "To Amount")
            if !toText.isEmpty {
                guard let v = cryptoComNumber(toText, line: r.line, column: "To Amount") else { continue }
                toAmount = v < 0 ? -v : v
            }
            var native: (Decimal, String)?
            let nativeText = t.cell(r, "Native Amount")
            if !nativeText.isEmpty, let currency = ExchangeImport.moneyCurrency(t.cell(r, "Native Currency").uppercased()) {
                guard let v = cryptoComNumber(nativeText, line: r.line, column: "Native Amount") else { continue }
                if v != 0 { native = (v < 0 ? -v : v, currency) }
            }
            let hash = t.cell(r, "Transaction Hash")
            let key = RowOccurrences.rowKey(hash: hash, r.fields.map(\.trimmedSpaces))
            let row = CryptoComRow(line: r.line, date: date, time: time, description: t.cell(r, "Transaction Description"),
                                   currency: t.cell(r, "Currency").uppercased(), amount: amount, toCurrency: t.cell(r, "To Currency").uppercased(),
                                   toAmount: toAmount, native: native, kind: t.cell(r, "Transaction Kind").lowercased(), id: id(seen.key(key)))
            if let prefix = Self.cryptoComPairs.first(where: { row.kind == $0 + "_credited" || row.kind == $0 + "_debited" }) {
                let pairKey = prefix + "|" + time
                if pairs[pairKey] == nil { events.append((pairKey, row)) }
                pairs[pairKey, default: []].append(row)
            } else {
                events.append((nil, row))
            }
        }
        let shortfalls = Self.cryptoComFiatShortfalls(events, pairs: pairs)
        for event in events {
            if let key = event.pair { cryptoComPair(pairs[key] ?? []) } else { cryptoComSingle(event.row, shortfall: shortfalls[event.row.line]) }
        }
    }

    /// The money each `viban_purchase` spends beyond the fiat balance this file has built up by then
    /// (by line): the file's rows in order of time (a tie in file order), each currency's balance
    /// raised by what the rows credit in (crypto sold to fiat, `crypto_viban_exchange`, money
    /// deposits and interest) and lowered by what they take out (purchases, withdrawals, top-ups).
    /// A card `crypto_purchase` leaves it as it is: its money is deposited and spent at once.
    static func cryptoComFiatShortfalls(_ events: [(pair: String?, row: CryptoComRow)], pairs: [String: [CryptoComRow]]) -> [Int: Decimal] {
        func size(_ v: Decimal) -> Decimal { v < 0 ? -v : v }
        func when(_ r: CryptoComRow) -> Date { ISODate.parseTimestamp(utf8: Array(r.date.utf8)) ?? .distantPast }
        let ordered = events.enumerated().sorted { a, b in
            let x = when(a.element.row), y = when(b.element.row)
            return x != y ? x < y : a.offset < b.offset
        }.map(\.element)
        var balance: [String: Decimal] = [:], shortfalls: [Int: Decimal] = [:]
        func move(_ amount: Decimal, _ code: String) {
            if let currency = ExchangeImport.moneyCurrency(code) { balance[currency, default: 0] += amount }
        }
        for (pair, r) in ordered {
            if let pair {
                let rows = pairs[pair] ?? []
                let credits = rows.filter { $0.kind.hasSuffix("_credited") }, debits = rows.filter { $0.kind.hasSuffix("_debited") }
                guard credits.count == 1, debits.count == 1, let c = credits.first, let d = debits.first, c.amount != 0, d.amount != 0 else { continue }
                move(-size(d.amount), d.currency)
                move(size(c.amount), c.currency)
                continue
            }
            guard r.amount != 0 else { continue }
            if cryptoComExchanges.contains(r.kind) {
                guard let to = r.toAmount, to != 0, !r.toCurrency.isEmpty else { continue }
                if r.kind == "viban_purchase", let currency = ExchangeImport.moneyCurrency(r.currency) {
                    let short = size(r.amount) - max(balance[currency] ?? 0, 0)
                    if short > 0 { shortfalls[r.line] = short; balance[currency, default: 0] += short }
                }
                move(-size(r.amount), r.currency)
                move(to, r.toCurrency)
                continue
            }
            switch r.kind {
            case "crypto_deposit", "crypto_withdrawal", "crypto_transfer":
                move(r.amount, r.currency)
            case "card_top_up":
                move(-size(r.amount), r.currency)
            default:
                if !r.kind.hasSuffix("_reverted"), r.amount > 0,
                   cryptoComRewards.contains(r.kind) || r.kind.contains("interest") || r.kind.contains("reward") || r.kind.contains("cashback") {
                    move(r.amount, r.currency)
                }
            }
        }
        return shortfalls
    }

    func cryptoComNotes(_ r: CryptoComRow) -> String { "Crypto.com \(r.description) (\(r.kind))" }

    /// The money a card buy spends, deposited just before it (this file never shows it arriving):
    /// only in a portfolio that tracks cash, which would otherwise refuse the buy.
    mutating func cryptoComCardMoney(_ e: InterchangeEvent) {
        guard tracksCash, let (amount, code) = e.sent, let currency = ExchangeImport.moneyCurrency(code),
              e.got.map({ ExchangeImport.moneyCurrency($0.1) == nil }) ?? false else { return }
        cash(line: e.line, type: "deposit", amount: amount, currency: currency, date: e.date,
             notes: e.notes + "; the card money for the buy (not in the file)", id: id(e.id + ":card"))
    }

    /// The part of a fiat-wallet buy the file's fiat balance does not cover (`shortfall`), deposited
    /// just before it: only in a portfolio that tracks cash.
    mutating func cryptoComFiatWalletMoney(_ e: InterchangeEvent, shortfall: Decimal) {
        guard tracksCash, shortfall > 0, let (_, code) = e.sent, let currency = ExchangeImport.moneyCurrency(code) else { return }
        cash(line: e.line, type: "deposit", amount: shortfall, currency: currency, date: e.date,
             notes: e.notes + "; the fiat wallet's money for the buy (not in the file)", id: id(e.id + ":card"))
    }

    /// The credited and debited rows of one conversion.
    mutating func cryptoComPair(_ rows: [CryptoComRow]) {
        let credits = rows.filter { $0.kind.hasSuffix("_credited") }, debits = rows.filter { $0.kind.hasSuffix("_debited") }
        guard let first = rows.first else { return }
        let what = String(first.kind.dropLast(first.kind.hasSuffix("_credited") ? 9 : 8)).replacingOccurrences(of: "_", with: " ")
        guard credits.count == 1, debits.count == 1, let c = credits.first, let d = debits.first else {
            for _ in rows { skip("\(what) (\(credits.count) credited, \(debits.count) debited, not paired)") }
            return
        }
        let e = InterchangeEvent(line: min(c.line, d.line), date: c.date, notes: cryptoComNotes(c), id: c.id,
                                 sent: d.amount == 0 ? nil : (d.amount < 0 ? -d.amount : d.amount, d.currency),
                                 got: c.amount == 0 ? nil : (c.amount < 0 ? -c.amount : c.amount, c.currency), fee: nil, worth: c.native ?? d.native)
        guard e.sent != nil, e.got != nil else { for _ in rows { skip("\(what) (zero)") }; return }
        interchangeTrade(e)
    }

    mutating func cryptoComSingle(_ r: CryptoComRow, shortfall: Decimal? = nil) {
        let kind = r.kind
        let size = r.amount < 0 ? -r.amount : r.amount
        var e = InterchangeEvent(line: r.line, date: r.date, notes: cryptoComNotes(r), id: r.id, sent: nil, got: nil, fee: nil, worth: r.native)
        let what = kind.isEmpty ? "untyped" : kind
        guard size != 0 else { skip("\(what) (zero)"); return }
        if Self.cryptoComExchanges.contains(kind) {
            guard let to = r.toAmount, to != 0, !r.toCurrency.isEmpty else { skip("\(what) (without what it came to)"); return }
            e.sent = (size, r.currency)
            e.got = (to, r.toCurrency)
            if kind == "viban_purchase" { cryptoComFiatWalletMoney(e, shortfall: shortfall ?? 0) }
            interchangeTrade(e)
            return
        }
        switch kind {
        case "crypto_purchase":
            guard let native = r.native else { skip("\(what) (no value in money)"); return }
            e.sent = native
            e.got = (size, r.currency)
            cryptoComCardMoney(e)
            interchangeTrade(e)
        case "crypto_deposit", "crypto_withdrawal", "crypto_transfer":
            if r.amount > 0 { interchangeDeposit(e, asset: (size, r.currency)) } else { interchangeWithdrawal(e, asset: (size, r.currency)) }
        case "card_top_up":
            if ExchangeImport.moneyCurrency(r.currency) != nil || r.native == nil {
                interchangeWithdrawal(e, asset: (size, r.currency))
            } else {
                interchangeSpend(e, asset: (size, r.currency), what: kind)
            }
        case "crypto_payment":
            interchangeSpend(e, asset: (size, r.currency), what: kind)
        default:
            if kind.hasSuffix("_reverted") {
                skip(what)
            } else if Self.cryptoComRewards.contains(kind) || kind.contains("interest") || kind.contains("reward") || kind.contains("cashback") {
                guard r.amount > 0 else { skip("\(what) (negative)"); return }
                interchangeReward(e, asset: (size, r.currency), what: kind)
            } else if Self.cryptoComInternal.contains(kind) || kind.contains("lock") {
                skip("internal move (between Crypto.com's wallets)")
            } else {
                skip(what)
            }
        }
    }
}
