import Foundation

/// A rule the stored history breaks: found when the store is read, not only when it is written.
///
/// A hand-edited or git-merged `portfolio.json` can hold what no bitpal command writes:
/// a duplicated id, a zero amount or price, a date in the future, a sell of more than is
/// held. Each is reported with the record it concerns; reports leave those records out
/// (with a warning) and writes are refused until a change removes them.
public struct StoreProblem: Equatable, Sendable, CustomStringConvertible {
    public enum Rule: String, Sendable, Hashable {
        case duplicateID = "duplicate id"
        case amountNotPositive = "amount not positive"
        case priceNotPositive = "price not positive"
        case futureDate = "future date"
        case priceMissing = "price missing"
        case taxAboveGross = "tax above gross"
        case unknownPortfolio = "unknown portfolio"
        case unknownAsset = "unregistered asset"
        case currencyMismatch = "currency not the portfolio's"
        case oversell = "takes more than held"
        case unlinked = "move leg without its transfer-out"
        case tooLarge = "too large to compute"
        case partnerLeftOut = "linked leg left out"
        case assetMissing = "asset missing"
        case assetGiven = "asset given to cash"
        case cashNotTracked = "cash in a portfolio that does not track it"
        case overdraw = "takes more cash than there is"
        case fxRateMissing = "foreign currency without a rate"
        case fxRateInBase = "a rate on money in the base currency"
        case brokenLink = "link broken"
        case splitToNothing = "split leaves nothing"
    }

    public var rule: Rule
    /// Position of the record in `Portfolio.transactions` (and so, in file order).
    public var index: Int
    public var id: UUID
    /// What is wrong, in words (without the line: the store adds it), naming coins by id.
    public var detail: String { describe(names: .plain) }
    /// The broken rule's own error, when it has one (an oversell, a total too large).
    var error: PortfolioError?
    /// For a duplicated id: the position of the record that has it first.
    public var firstIndex: Int?

    init(rule: Rule, index: Int, id: UUID, firstIndex: Int? = nil, error: PortfolioError? = nil) {
        self.rule = rule
        self.index = index
        self.id = id
        self.firstIndex = firstIndex
        self.error = error
    }

    public var description: String { detail }

    /// What is wrong, in words, with coins and dates named by `names`.
    public func describe(names: MessageNames) -> String {
        switch rule {
        case .duplicateID: "id \(id.uuidString.lowercased()) is used by an earlier record too"
        case .amountNotPositive: "amount must be greater than zero"
        case .priceNotPositive: "price must be greater than zero"
        case .priceMissing: "it has no price"
        case .taxAboveGross: "its tax withheld is larger than its gross amount"
        case .futureDate: "its date is in the future"
        case .partnerLeftOut: "the other leg of its swap or move breaks a rule, so it is left out too"
        case .assetMissing: "it names no asset"
        case .assetGiven: "a deposit or withdrawal is cash alone and names no asset"
        case .cashNotTracked: error?.description(names: names) ?? rule.rawValue
        case .overdraw, .fxRateMissing: error?.description(names: names) ?? rule.rawValue
        case .fxRateInBase: "it is in the portfolio's base currency, so it takes no exchange rate"
        case .unknownPortfolio, .unknownAsset, .currencyMismatch, .brokenLink, .splitToNothing: error?.description(names: names) ?? rule.rawValue
        case .oversell, .tooLarge, .unlinked:
            if case let .insufficientQuantity(s)? = error {
                "\(s.noun) of \(DecimalFormatting.exact(s.requested)) \(names.coin(s.assetId))"
                    + (s.fee.map { " (plus a fee of \(DecimalFormatting.exact($0)))" } ?? "")
                    + " on \(names.date(s.date)) but only \(DecimalFormatting.exact(s.held)) is held\(names.portfolio(s.portfolio)) then"
            } else {
                error?.description(names: names) ?? rule.rawValue
            }
        }
    }

    /// The same problem after other records moved: compared by rule and record id.
    var identity: String { rule.rawValue + " " + id.uuidString }
}

/// A history replayed the forgiving way: records that break a rule are left out, and named.
public struct CheckedHistory: Sendable {
    public var ledger: Ledger
    public var problems: [StoreProblem]
}

extension Book {
    /// Every rule the stored book breaks, in file order, and the ledger of the rest.
    ///
    /// Duplicated ids keep their first record; a record that breaks a rule of its own (a zero
    /// amount, a missing price, a future date, an unknown portfolio or asset) is left out; one
    /// that takes more than is held at its date is left out and the replay goes on (so one bad
    /// record does not hide the rest of the book).
    ///
    /// With `replaying: false` only the record-by-record rules are checked: no replay, so a
    /// listing stays as cheap as reading the file; the ledger is then empty.
    ///
    /// `cashMovements` keeps every change of a tracked cash balance in the ledger (for `cash history`).
    public func checked(now: Date, replaying: Bool = true, cashMovements: Bool = true) -> CheckedHistory {
        var options = ledgerOptions
        options.keepingCashMovements = cashMovements
        return checked(now: now, replaying: replaying, options: options)
    }

    /// How this book's portfolios keep their books: which track cash, and each one's method.
    public var ledgerOptions: LedgerOptions {
        var methods: [String: CostBasisMethod] = [:]
        for p in portfolios where p.costBasisMethod != .average { methods[p.name] = p.costBasisMethod }
        return LedgerOptions(trackingCash: Set(portfolios.filter(\.trackCash).map(\.name)), methods: methods)
    }

    /// `checked(now:replaying:cashMovements:)` with the replay's options given whole (a method
    /// tried in place of a portfolio's own, disposals kept, one record explained).
    public func checked(now: Date, replaying: Bool = true, options: LedgerOptions) -> CheckedHistory {
        checked(now: now, replaying: replaying, options: options, parallel: transactions.count >= Parallel.minimumRecords)
    }

    /// `checked`; with `parallel`, the replay runs on a second thread while the records' own rules are
    /// checked, on the guess that none breaks one (the replay then leaves nothing out). When one does,
    /// that replay is thrown away and the book replayed again without them: the result is the same.
    func checked(now: Date, replaying: Bool, cashMovements: Bool, parallel: Bool) -> CheckedHistory {
        var options = ledgerOptions
        options.keepingCashMovements = cashMovements
        return checked(now: now, replaying: replaying, options: options, parallel: parallel)
    }

    func checked(now: Date, replaying: Bool, options: LedgerOptions, parallel: Bool) -> CheckedHistory {
        guard replaying else { return CheckedHistory(ledger: Ledger(), problems: recordProblems(now: now).problems) }
        if parallel {
            let transactions = self.transactions
            let (own, guess) = Parallel.run({ recordProblems(now: now) }, alongside: {
                Ledger.replayForgiving(transactions, options: options)
            })
            if own.problems.isEmpty { return finish(problems: [], replay: guess) }
            return replayed(own, options: options)
        }
        return replayed(recordProblems(now: now), options: options)
    }

    /// `checked(now:replaying:cashMovements:)` on two threads, with `work` done on the second after the
    /// records' own rules while this one replays (the longer part): for a check that runs beside a write.
    /// `work` runs whatever the check finds.
    func checked<W: Sendable>(now: Date, cashMovements: Bool, alongside work: @escaping @Sendable () -> W) -> (history: CheckedHistory, work: W) {
        var options = ledgerOptions
        options.keepingCashMovements = cashMovements
        let book = self
        let (guess, (own, done)) = Parallel.run({
            Ledger.replayForgiving(book.transactions, options: options)
        }, alongside: { (book.recordProblems(now: now), work()) })
        if own.problems.isEmpty { return (finish(problems: [], replay: guess), done) }
        return (replayed(own, options: options), done)
    }

    /// The replay of every record that breaks no rule of its own, and every problem.
    private func replayed(_ own: (problems: [StoreProblem], excluded: Set<Int>), options: LedgerOptions) -> CheckedHistory {
        // A swap or a move stands or falls whole: a leg that breaks a rule takes its partner with it
        // (a duplicated record does not: its first copy is kept).
        let broken = Set(own.problems.compactMap { $0.rule == .duplicateID ? nil : transactions[$0.index].linkedId })
        let replay = Ledger.replayForgiving(transactions, leavingOut: own.excluded, brokenLinks: broken, options: options)
        return finish(problems: own.problems, replay: replay)
    }

    /// The problems of the records on their own and of the replay, in file order.
    private func finish(problems own: [StoreProblem], replay: (ledger: Ledger, failures: [(index: Int, error: PortfolioError?)])) -> CheckedHistory {
        var problems = own
        for (i, error) in replay.failures {
            let rule: StoreProblem.Rule = switch error {
            case nil: .partnerLeftOut
            case .insufficientQuantity?: .oversell
            case .insufficientCash?: .overdraw
            case .unlinkedTransferIn?: .unlinked
            case .splitToNothing?: .splitToNothing
            default: .tooLarge
            }
            problems.append(StoreProblem(rule: rule, index: i, id: transactions[i].id, error: error))
        }
        problems.sort { $0.index < $1.index }
        return CheckedHistory(ledger: replay.ledger, problems: problems)
    }

    /// The rules each record breaks on its own (a duplicated id, a zero amount, a future date, an
    /// unknown portfolio or asset …), in file order, and the records they leave out of the replay.
    func recordProblems(now: Date) -> (problems: [StoreProblem], excluded: Set<Int>) {
        var problems: [StoreProblem] = []
        var ids = IDTable(capacity: transactions.count)
        var excluded = Set<Int>()
        // Few portfolios: a linear scan, remembering the last one found, beats hashing each name.
        var last = portfolios.first
        func portfolio(_ name: String) -> Portfolio? {
            if let l = last, l.name == name { return l }
            guard let found = portfolios.first(where: { $0.name == name }) else { return nil }
            last = found
            return found
        }
        let registered = Dictionary(assets.map { ($0.id, $0.currency) }, uniquingKeysWith: { a, _ in a })
        for (i, t) in transactions.enumerated() {
            if let first = ids.insert(t.id, at: i, in: transactions) {
                problems.append(StoreProblem(rule: .duplicateID, index: i, id: t.id, firstIndex: first))
                excluded.insert(i)
                continue
            }
            var broken: (StoreProblem.Rule, PortfolioError?)?
            if let rule = t.rule.brokenRule(t) {
                broken = (rule, nil)
            } else if t.isDated(after: now) {
                broken = (.futureDate, nil)
            } else if let p = portfolio(t.portfolio) {
                if let c = t.currency, c != p.baseCurrency, t.fxRateValue == nil {
                    broken = (.fxRateMissing, .fxRateMissing(from: c, to: p.baseCurrency, date: t.date))
                } else if t.fxRateValue != nil, t.currency == p.baseCurrency {
                    broken = (.fxRateInBase, nil)
                } else if !p.trackCash, t.assetId.isEmpty, t.rule.isCashOnly(t) {  // the kind only when it can matter
                    broken = (.cashNotTracked, .cashNotTracked(p.name))
                }
            } else {
                broken = (.unknownPortfolio, .portfolioNotFound(t.portfolio))
            }
            if broken == nil, Asset.isRegisteredID(t.assetId) {
                if let own = registered[t.assetId] {
                    // A registered asset trades in its own currency.
                    if let c = t.currency, c != own {
                        broken = (.currencyMismatch, .currencyMismatch(given: c, expected: own, reason: "the currency \(t.assetId) trades in"))
                    }
                } else {
                    broken = (.unknownAsset, .assetNotFound(t.assetId))
                }
            }
            if let (rule, error) = broken {
                problems.append(StoreProblem(rule: rule, index: i, id: t.id, error: error))
                excluded.insert(i)
            }
        }
        // A link that makes no whole row of the link table leaves both its legs out.
        let faults = linkFaults(excluding: excluded)
        if !faults.isEmpty {
            for (i, legs, link) in faults {
                problems.append(StoreProblem(rule: .brokenLink, index: i, id: transactions[i].id, error: .brokenLink(legs: legs, link: link)))
                excluded.insert(i)
            }
            problems.sort { $0.index < $1.index }
        }
        return (problems, excluded)
    }

    /// Whether a change from `before` to this book may be written: when the result breaks
    /// no rule, or when it only removes problems (deleting or editing an offending record)
    /// and adds none. Returns the problems that block it.
    public func mayReplace(problemsBefore: () -> [StoreProblem], now: Date) -> [StoreProblem]? {
        blockers(problemsBefore: problemsBefore, now: now)?.problems
    }

    /// The problems that block a change, and whether the change introduced them (else they are
    /// the ones the book already had, none removed).
    func blockers(problemsBefore: () -> [StoreProblem], now: Date) -> (problems: [StoreProblem], introduced: Bool)? {
        blockers(after: checked(now: now, cashMovements: false).problems, problemsBefore: problemsBefore)
    }

    /// `blockers`, given the problems of this book (`checked(now:).problems`).
    func blockers(after: [StoreProblem], problemsBefore: () -> [StoreProblem]) -> (problems: [StoreProblem], introduced: Bool)? {
        if after.isEmpty { return nil }
        let before = problemsBefore()
        var remaining: [String: Int] = [:]
        for p in before { remaining[p.identity, default: 0] += 1 }
        var introduced: [StoreProblem] = []
        for p in after {
            if let n = remaining[p.identity], n > 0, !changed.contains(p.id) { remaining[p.identity] = n - 1 } else { introduced.append(p) }
        }
        if introduced.isEmpty && after.count < before.count { return nil }
        return introduced.isEmpty ? (after, false) : (introduced, true)
    }

    /// The error to show for problems a change would introduce: the changed record's own
    /// (`You only own …`, `Amount must be greater than zero`), else the later record it breaks;
    /// `nil` when the problems are not of the change's making (the store lists them instead).
    public func error(for introduced: [StoreProblem]) -> PortfolioError? {
        if let own = introduced.first(where: { changed.contains($0.id) }) {
            switch own.rule {
            case .amountNotPositive: return .amountNotPositive
            case .priceNotPositive: return .priceNotPositive
            case .priceMissing: return .priceMissing(transactions[own.index].type)
            case .taxAboveGross: return .taxAboveGross
            case .futureDate: return .futureDate
            case .duplicateID: return nil
            default: return own.error ?? .recordRule(own)
            }
        }
        for p in introduced where p.rule == .oversell || p.rule == .overdraw || p.rule == .cashNotTracked {
            if case let .insufficientQuantity(s)? = p.error { return .breaksLater(s) }
            if let error = p.error { return error }  // names the record it is about
        }
        return introduced.first { $0.rule == .unlinked || $0.rule == .tooLarge || $0.rule == .splitToNothing }?.error
    }
}

extension Ledger {
    /// Replays `transactions` (but those at `leavingOut`) in date order, going on past a record
    /// that cannot apply (a sell of more than is held, a total too large): such records are
    /// left out and returned with their error.
    ///
    /// A record linked to a leg that is left out (`brokenLinks`, or a leg failing here) is left out
    /// too, with no error of its own. When the failing leg's partner already applied (a cash
    /// transfer's deposit leg replays first at its instant), the replay starts again with that
    /// partner and every record left out so far kept out, so a left-out record never has half an
    /// effect. Only a broken store restarts, once per such pair.
    public static func replayForgiving(_ transactions: [Transaction], leavingOut excluded: Set<Int> = [],
                                       brokenLinks: Set<UUID> = [], options: LedgerOptions = LedgerOptions())
        -> (ledger: Ledger, failures: [(index: Int, error: PortfolioError?)]) {
        let order = chronologicalIndices(transactions)
        // Room for every income event at once (a large book's list would otherwise be copied as it grows).
        let incomeRecords = transactions.count { $0.type == .reward || $0.type == .dividend || $0.type == .interest }
        /// Records kept out from the start of a pass (their error; `nil` for a partner).
        var keptOut: [Int: PortfolioError?] = [:]
        let exchangeCosts = exchangeCosts(transactions)
        let savingLinks = savingLinks(transactions)
        while true {
            var ledger = Ledger(options)
            ledger.exchangeCosts = exchangeCosts
            ledger.savingLinks = savingLinks
            ledger.income.reserveCapacity(incomeRecords)
            var failures: [(index: Int, error: PortfolioError?)] = []
            var broken = brokenLinks
            var appliedLeg: [UUID: Int] = [:]
            var undo: Int?
            var restart = false
            for i in order where !excluded.contains(i) {
                let link = transactions[i].linkedId
                if let kept = keptOut[i] {
                    failures.append((i, kept))
                    if let link { broken.insert(link) }
                    continue
                }
                if let link, broken.contains(link) {
                    failures.append((i, nil))
                    continue
                }
                do {
                    try ledger.apply(transactions[i])
                    if let link { appliedLeg[link] = i }
                } catch {
                    failures.append((i, error))
                    if let link {
                        broken.insert(link)
                        undo = appliedLeg[link]
                    }
                    // A partner already applied, or a record that failed half-way (`damaged`): start
                    // again with every record left out so far kept out.
                    if undo != nil || ledger.damaged {
                        restart = true
                        break
                    }
                }
            }
            guard restart else { return (ledger, failures) }
            for (i, error) in failures { keptOut.updateValue(error, forKey: i) }
            if let partner = undo { keptOut.updateValue(nil, forKey: partner) }
        }
    }

    /// Indices of `transactions` in replay order: by date; at the same instant deposits first (so
    /// money paid in on a buy's day pays for it), then file order.
    public static func chronologicalIndices(_ transactions: [Transaction]) -> [Int] {
        var sorted = true
        var i = 1
        while i < transactions.count {
            let a = transactions[i - 1], b = transactions[i]
            if b.date < a.date || (b.date == a.date && b.type == .deposit && a.type != .deposit) { sorted = false; break }
            i += 1
        }
        if sorted { return Array(transactions.indices) }
        return transactions.indices.sorted { a, b in
            let x = transactions[a], y = transactions[b]
            if x.date != y.date { return x.date < y.date }
            if (x.type == .deposit) != (y.type == .deposit) { return x.type == .deposit }
            return a < b
        }
    }
}

/// Where each id first appears: an open-addressing table on the id's first 64 bits (ids are
/// random), several times faster than a `[UUID: Int]` at a million records.
///
/// A slot's key and record sit side by side (two words), so a probe of a large table misses the cache once.
struct IDTable {
    /// Per slot: the key, then the record index + 1 (0: empty).
    private var slots: [UInt64]
    private let mask: Int

    init(capacity: Int) {
        var size = 16
        while size < capacity * 2 { size <<= 1 }
        slots = [UInt64](repeating: 0, count: 2 * size)
        mask = size - 1
    }

    /// Records that `id` is at `index`; returns the earlier index when the id was seen before.
    mutating func insert(_ id: UUID, at index: Int, in records: [Transaction]) -> Int? {
        insert(id, at: index) { records[$0].id == id }
    }

    /// Records that the link `link` is first met at `index`; returns that first index when it was met before.
    mutating func insert(link: UUID, at index: Int, in records: [Transaction]) -> Int? {
        insert(link, at: index) { records[$0].linkedId == link }
    }

    @inline(__always)
    private mutating func insert(_ id: UUID, at index: Int, same: (Int) -> Bool) -> Int? {
        let u = id.uuid
        let key = UInt64(u.0) << 56 | UInt64(u.1) << 48 | UInt64(u.2) << 40 | UInt64(u.3) << 32
            | UInt64(u.4) << 24 | UInt64(u.5) << 16 | UInt64(u.6) << 8 | UInt64(u.7)
        var h = Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> 20) & mask
        let mask = self.mask
        return slots.withUnsafeMutableBufferPointer { s in
            while s[2 * h + 1] != 0 {
                if s[2 * h] == key {
                    let earlier = Int(s[2 * h + 1]) - 1
                    if same(earlier) { return earlier }
                }
                h = (h + 1) & mask
            }
            s[2 * h] = key
            s[2 * h + 1] = UInt64(index + 1)
            return nil
        }
    }
}
