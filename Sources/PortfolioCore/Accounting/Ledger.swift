import Foundation

/// What a position is: an asset held in a portfolio.
public struct PositionKey: Hashable, Sendable, Comparable {
    public var portfolio: String
    public var assetId: String

    public init(portfolio: String, assetId: String) {
        self.portfolio = portfolio
        self.assetId = assetId
    }

    public static func < (a: PositionKey, b: PositionKey) -> Bool {
        a.portfolio != b.portfolio ? a.portfolio < b.portfolio : a.assetId < b.assetId
    }
}

/// One asset's open cycle in one portfolio: what is held now and how the cycle got here.
///
/// Sums are exact (`Fixed18` quantities, `Exact36` money); the `Decimal` views are for reports.
public struct Position: Sendable {
    public let key: PositionKey
    public var lots: Lots
    /// Units acquired in the cycle (split-adjusted) and what they cost.
    ///
    /// These four are statistics of the closed-positions report, not the books: no record may be
    /// refused for them. A sum that no longer fits (a long cycle of huge trades, many splits)
    /// becomes `nil`, "too large to show", instead of throwing.
    public var cycleAcquired: Fixed18? = .zero
    public var cycleAcquisitionCost: Exact36? = .zero
    /// Units sold in the cycle (split-adjusted) and their proceeds before fees.
    public var cycleSold: Fixed18? = .zero
    public var cycleSoldGross: Exact36? = .zero
    /// Basis realized in the cycle (sales, transfer-out fees, losses) and the gain on it.
    public var cycleRealizedBasis: Exact36 = .zero
    public var cycleRealized: Exact36 = .zero
    public var openedDate: Date?
    public var lastDisposalDate: Date?
    /// The calendar days of those two records, when they are dated by day (`Transaction.day`).
    public var openedDay: Int64?
    public var lastDisposalDay: Int64?

    public init(key: PositionKey, method: CostBasisMethod = .average) {
        self.key = key
        lots = Lots(method: method)
    }

    public var assetId: String { key.assetId }
    /// Something is held.
    public var isOpen: Bool { lots.quantity.units > 0 }
    public var quantity: Decimal { lots.quantity.decimal }
    public var costBasis: Exact36 { lots.costBasis }
    /// `costBasis / quantity` (rounded at the 36th decimal); `nil` at quantity 0. Derived, never stored.
    public var averageCost: Exact36? { isOpen ? try? lots.costBasis.divided(by: lots.quantity) : nil }
}

/// A finished cycle: acquired, then brought down to exactly zero by any kind.
public struct ClosedPosition: Sendable, Equatable {
    public var portfolio: String
    public var assetId: String
    /// Units acquired in the cycle (split-adjusted); `nil` when too large to keep exactly.
    public var totalQuantity: Decimal? { acquired?.decimal }
    /// Basis realized in the cycle (sales, swap disposals, transfer-out fees, losses).
    public var totalCost: Exact36
    /// Acquisition cost ÷ units acquired; `nil` when either was too large to keep exactly.
    public var avgCostPrice: Exact36?
    /// Σ proceeds before fees ÷ Σ units sold; `nil` when nothing was sold.
    public var avgSellPrice: Exact36?
    public var realizedPnL: Exact36
    /// The realized gain over the basis realized, in the portfolio's base (as the cycle closed, so a
    /// view in another currency keeps it).
    public var realizedPnLPercentage: Decimal? { Percent.of(closingPnL, closingCost) }
    public var openedDate: Date
    public var closedDate: Date
    /// The calendar days of those two, when their records are dated by day.
    public var openedDay: Int64?
    public var closedDay: Int64?
    /// What the `Decimal` views are made of, when asked for (a replay closes many cycles no report shows).
    let acquired: Fixed18?
    let closingPnL: Exact36
    let closingCost: Exact36

    init(portfolio: String, assetId: String, acquired: Fixed18?, totalCost: Exact36, avgCostPrice: Exact36?, avgSellPrice: Exact36?,
         realizedPnL: Exact36, openedDate: Date, closedDate: Date) {
        self.portfolio = portfolio
        self.assetId = assetId
        self.acquired = acquired
        self.totalCost = totalCost
        self.avgCostPrice = avgCostPrice
        self.avgSellPrice = avgSellPrice
        self.realizedPnL = realizedPnL
        self.openedDate = openedDate
        self.closedDate = closedDate
        closingPnL = realizedPnL
        closingCost = totalCost
    }
}

/// A dividend, interest payment or reward, as the replay saw it.
public struct IncomeEvent: Sendable, Equatable {
    public var transactionId: UUID
    public var portfolio: String
    public var assetId: String
    public var type: TransactionType
    public var date: Date
    /// The transaction's calendar day, when it is dated by day (see `Transaction.day`).
    public var day: Int64? = nil
    public var gross: Exact36
    public var taxWithheld: Exact36
    public var net: Exact36
}

/// Cash of one portfolio in one currency.
public struct CashKey: Hashable, Sendable {
    public var portfolio: String
    public var currency: String

    public init(portfolio: String, currency: String) {
        self.portfolio = portfolio
        self.currency = currency
    }
}

/// One change of a tracked cash balance, as the replay saw it.
public struct CashMovement: Sendable, Equatable {
    public var transactionId: UUID
    public var portfolio: String
    public var type: TransactionType
    public var date: Date
    /// The transaction's calendar day, when it is dated by day (see `Transaction.day`).
    public var day: Int64? = nil
    public var currency: String
    /// Signed: + in, − out (a dividend's net amount).
    public var amount: Exact36
    /// The balance after it.
    public var balance: Exact36
}

/// A record that takes more cash than there is, named for the message.
public struct CashShortfall: Sendable, Equatable {
    public var type: TransactionType
    public var portfolio: String
    public var currency: String
    public var date: Date
    public var id: UUID
    /// What the record takes out of cash.
    public var needed: Exact36
    /// The balance before it.
    public var available: Exact36

    public init(type: TransactionType, portfolio: String, currency: String, date: Date, id: UUID, needed: Exact36, available: Exact36) {
        self.type = type
        self.portfolio = portfolio
        self.currency = currency
        self.date = date
        self.id = id
        self.needed = needed
        self.available = available
    }
}

/// Realized and income sums of one portfolio (or several, added).
public struct LedgerTotals: Sendable, Equatable {
    /// Σ gains realized (sales, transfer-out fees and losses as negative gains).
    public var realized: Exact36 = .zero
    /// Σ basis realized.
    public var realizedBasis: Exact36 = .zero
    /// Σ reward values and dividends and interest net of tax.
    public var income: Exact36 = .zero
    public var taxWithheld: Exact36 = .zero
    /// Σ deposits − Σ withdrawals (cash transfers included), plus asset transfers in at their
    /// basis, minus asset transfers out at the basis that left.
    public var netDeposits: Exact36 = .zero

    public init() {}

    public func adding(_ o: LedgerTotals) throws(PortfolioError) -> LedgerTotals {
        var t = LedgerTotals()
        t.realized = try realized + o.realized
        t.realizedBasis = try realizedBasis + o.realizedBasis
        t.income = try income + o.income
        t.taxWithheld = try taxWithheld + o.taxWithheld
        t.netDeposits = try netDeposits + o.netDeposits
        return t
    }
}

/// A step that removes more units than are held, named for the message.
public struct Shortfall: Sendable, Equatable {
    public var type: TransactionType
    public var portfolio: String
    public var assetId: String
    public var held: Decimal
    public var requested: Decimal
    /// A transfer-out's fee in units.
    public var fee: Decimal?
    public var date: Date
    public var id: UUID
    /// Part of a swap or a move.
    public var linked: Bool

    public init(type: TransactionType, portfolio: String, assetId: String, held: Decimal, requested: Decimal, fee: Decimal?,
                date: Date, id: UUID, linked: Bool) {
        self.type = type
        self.portfolio = portfolio
        self.assetId = assetId
        self.held = held
        self.requested = requested
        self.fee = fee
        self.date = date
        self.id = id
        self.linked = linked
    }
}

/// How a replay keeps the books, and what it keeps beyond them.
public struct LedgerOptions: Sendable {
    /// The portfolios that keep a cash ledger.
    public var trackingCash: Set<String> = []
    /// Each portfolio's cost-basis method (`average` when absent).
    public var methods: [String: CostBasisMethod] = [:]
    /// Every change of a tracked cash balance (`cash history`).
    public var keepingCashMovements = true
    /// Every disposal with the lot parts it took (`gains`, `compare`).
    public var keepingDisposals = false
    /// The record whose effect to keep in full (`explain`).
    public var explaining: UUID?
    /// Every applied record with the quantity, cash and net deposits it left (`history`, `performance`):
    /// value over time is read from this one replay, never from a replay per day.
    public var keepingChanges = false

    public init(trackingCash: Set<String> = [], methods: [String: CostBasisMethod] = [:], keepingCashMovements: Bool = true,
                keepingDisposals: Bool = false, explaining: UUID? = nil, keepingChanges: Bool = false) {
        self.trackingCash = trackingCash
        self.methods = methods
        self.keepingCashMovements = keepingCashMovements
        self.keepingDisposals = keepingDisposals
        self.explaining = explaining
        self.keepingChanges = keepingChanges
    }
}

/// Units that left a position, the basis they took (by the lots or the pool they came from) and
/// what was realized: one sale, swap disposal, loss, transfer-out amount or transfer-out fee.
public struct Disposal: Sendable, Equatable {
    public var transactionId: UUID
    public var portfolio: String
    public var assetId: String
    public var type: TransactionType
    /// A swap's sell leg or a move's transfer-out.
    public var linked: Bool
    public var date: Date
    /// The transaction's calendar day, when it is dated by day (see `Transaction.day`).
    public var day: Int64? = nil
    public var method: CostBasisMethod
    /// Units taken (a transfer-out's fee row: the fee's units).
    public var quantity: Fixed18
    /// What the sale brought in net of its fee, in the portfolio's base (zero for a loss or a fee).
    public var proceeds: Exact36
    /// A sale's fee in the portfolio's base (what `proceeds` is net of).
    public var fee: Exact36
    public var basis: Exact36
    /// proceeds − basis (zero when nothing is realized).
    public var gain: Exact36
    /// `false` for a transfer-out's amount: its basis moves, nothing is realized.
    public var realizes: Bool
    /// The row of a transfer-out's fee in units.
    public var isNetworkFee: Bool
    /// Under `average`, the pool just before (quantity and basis).
    public var poolBefore: Lot?
    /// The lot parts taken, in the order taken (under `average`, one part of the pool).
    public var parts: [Lot]
}

/// One record as the replay applied it, with what it left (kept only with `keepingChanges`).
public struct AppliedChange: Sendable {
    public var transaction: Transaction
    /// The quantity of the record's position after it (zero for a record of cash alone).
    public var quantity: Fixed18
    /// What it changed of its portfolio's net deposits, in the portfolio's base: a transfer's basis
    /// (+ in, − out), a deposit's or withdrawal's value at its own rate; zero otherwise.
    public var netDepositsChange: Exact36
    /// The tracked cash balance it changed (its currency and the balance after), if any.
    public var cashCurrency: String?
    public var cashBalance: Exact36
    /// A leg of a cash exchange: money changing currency inside one portfolio, never a flow.
    public var exchangeLeg = false
}

/// Everything one record did, kept by a replay that `explaining` names.
public struct Explanation: Sendable {
    public var transaction: Transaction
    public var method: CostBasisMethod
    /// The position's open lots just before and just after (under `average`, the pool).
    public var before: [Lot]
    public var after: [Lot]
    /// The lots it made (an acquisition; a move's transfer-in makes one per lot it receives).
    public var made: [Lot]
    public var disposals: [Disposal]
    public var income: IncomeEvent?
    public var cash: CashMovement?
}

/// The result of replaying a history: positions keyed by portfolio and asset, closed cycles,
/// realized and income totals per portfolio.
public struct Ledger: Sendable {
    /// Every position's current cycle (quantity 0 when its last cycle closed).
    public var positions: [PositionKey: Position] { Dictionary(uniqueKeysWithValues: positionList.map { ($0.key, $0) }) }
    /// The cost of the cash each cash exchange receives, by link (`exchangeCosts(_:)`), set before a replay.
    public var exchangeCosts: [UUID: Exact36] = [:]
    /// The links of saving plans' due dates (a deposit and the buy it pays for), set before a replay:
    /// their buy pays cash as any buy, not as a swap's leg.
    public var savingLinks: Set<UUID> = []
    /// The positions, in the order they first appeared (found through `positionIndex`, `recentPositions`).
    var positionList: [Position] = []
    /// Where each position is in `positionList`.
    var positionIndex: [PositionKey: Int] = [:]
    /// Positions found before, by the bits of their keys' text (no hashing when a record names one again).
    private var recentPositions = RecentPositions()
    /// Closed cycles in the order they closed.
    public var closed: [ClosedPosition] = []
    /// Dividends, interest and rewards in replay order.
    public var income: [IncomeEvent] = []
    /// Sums per portfolio, in the order the portfolios first appear (few: a linear scan beats hashing).
    public internal(set) var portfolioTotals: [(portfolio: String, totals: LedgerTotals)] = []
    /// The lots a move's transfer-out sent, waiting for its transfer-in (keyed by the link).
    var moving: [UUID: [Lot]] = [:]
    /// Disposals in replay order (kept only when `keepingDisposals`).
    public private(set) var disposals: [Disposal] = []
    /// What the record named by `explaining` did (after the replay reached it).
    public private(set) var explanation: Explanation?
    public let options: LedgerOptions
    /// Records applied so far: the recording order of the lots they make.
    var applied = 0
    /// A record failed after changing a position's lots (an amount too large to compute exactly):
    /// the ledger no longer holds the books without it, and a forgiving replay starts again.
    public private(set) var damaged = false
    /// The portfolios that keep a cash ledger.
    public let cashTracked: Set<String>
    /// The same few names in a list: comparing a name with each is cheaper than hashing it once.
    private let cashTrackedList: [String]
    /// Cash balances of the portfolios that track cash, per currency.
    public var cash: [CashKey: Exact36] { Dictionary(uniqueKeysWithValues: cashList.map { ($0.key, $0.balance) }) }
    /// What each balance was worth in the portfolio's base when it moved: Σ changes at their own
    /// records' rates (`fxEffect` is today's value of the balance less this).
    public var cashAtCost: [CashKey: Exact36] { Dictionary(uniqueKeysWithValues: cashList.map { ($0.key, $0.atCost) }) }
    /// The few balances (portfolios that track cash × currencies), found by comparing their keys.
    var cashList: [(key: CashKey, balance: Exact36, atCost: Exact36)] = []
    /// Every change of a tracked cash balance, in replay order (kept only when asked: `cash history`;
    /// a million records would hold half a million of them for nothing).
    public private(set) var cashMovements: [CashMovement] = []
    /// Every applied record in replay order with what it left (kept only with `keepingChanges`).
    public private(set) var changes: [AppliedChange] = []

    public init(_ options: LedgerOptions = LedgerOptions()) {
        self.options = options
        cashTracked = options.trackingCash
        cashTrackedList = options.trackingCash.sorted()
    }

    /// The method of `portfolio`.
    public func method(of portfolio: String) -> CostBasisMethod { options.methods[portfolio] ?? .average }

    /// Σ realized over every portfolio.
    public var realizedPnL: Exact36 { (try? allTotals().realized) ?? .zero }
    /// Σ basis realized over every portfolio.
    public var closedCost: Exact36 { (try? allTotals().realizedBasis) ?? .zero }

    /// The totals of the portfolios `selected` names (all when `nil`).
    public func totals(for selected: Set<String>?) throws(PortfolioError) -> LedgerTotals {
        var sum = LedgerTotals()
        for (name, t) in portfolioTotals where selected?.contains(name) ?? true { sum = try sum.adding(t) }
        return sum
    }

    /// The sums of one portfolio.
    public func totals(of portfolio: String) -> LedgerTotals {
        portfolioTotals.first { $0.portfolio == portfolio }?.totals ?? LedgerTotals()
    }

    private func allTotals() throws(PortfolioError) -> LedgerTotals { try totals(for: nil) }

    /// Positions with something held.
    public var openPositions: [Position] { positionList.filter(\.isOpen) }

    /// Replays `transactions` in date order, ties in the order given, by weighted average cost.
    ///
    /// - Throws: the first transaction that cannot apply (`insufficientQuantity` for one that
    ///   removes more than is held at its point of the replay).
    public static func replay(_ transactions: [Transaction], options: LedgerOptions = LedgerOptions()) throws(PortfolioError) -> Ledger {
        var ledger = Ledger(options)
        ledger.exchangeCosts = exchangeCosts(transactions)
        ledger.savingLinks = savingLinks(transactions)
        for tx in chronological(transactions) { try ledger.apply(tx) }
        return ledger
    }

    /// The transactions in replay order: by date, ties keeping their given order.
    public static func chronological(_ transactions: [Transaction]) -> [Transaction] {
        let order = chronologicalIndices(transactions)
        if order.elementsEqual(transactions.indices) { return transactions }
        return order.map { transactions[$0] }
    }

    /// What one record's steps change, held apart until every step has passed and `apply` commits it.
    struct Pending {
        /// The position, taken out of the list while it changes (see `apply`).
        var p: Position
        /// Its portfolio's sums.
        var t: LedgerTotals
        /// A cash step comes first (`KindRule.steps`); the overdraw it finds is thrown before any lot
        /// changes, yet after the checks of the later steps, whose errors come first as they always have.
        var overdraw: PortfolioError?
        /// A lot changed: a failure from here on leaves the ledger `damaged`.
        var changedInPlace = false
        var event: IncomeEvent?
        /// The lots a move's transfer-out sends.
        var sent: [Lot]?
        /// A move's transfer-in took the lots waiting for it.
        var received = false
        /// The cycle closes.
        var closes = false
        /// The tracked cash balance the record changes: its new value, where it is in `cashList`
        /// (`nil`: a new one), its currency and the change.
        var cashAfter: (balance: Exact36, slot: Int?, currency: String, change: Exact36)?
        var cashCost = Exact36.zero
        var made: [Lot] = []
        var gone: [Disposal] = []
        /// Disposals keep their parts (`keepingDisposals`, or the record explained).
        let keepingParts: Bool
        let explaining: Bool

        /// Throws the overdraw a cash step found, before the first lot changes.
        mutating func changing() throws(PortfolioError) {
            if let overdraw { throw overdraw }
            changedInPlace = true
        }
    }

    /// Money of `tx`'s currency in its portfolio's base, at the rate stored with it.
    @inline(__always)
    static func base(_ money: Exact36, of tx: Transaction) throws(PortfolioError) -> Exact36 {
        guard let rate = tx.fxRateValue else { return money }
        return try money.multiplied(by: rate, dividedBy: Fixed18(units: Fixed18.scale))
    }

    /// Applies one transaction by the steps of its kind (`KindRule`): the one place where a
    /// transaction changes quantity, basis, realized P&L and income. Each step is a function of its
    /// own (`acquire`, `dispose`, `receiveIncome`, `moveCash`, `payExpense`, `scale`) over `Pending`.
    ///
    /// All or nothing: a transaction that cannot apply leaves the ledger as it was, so a
    /// forgiving replay can leave it out and go on.
    public mutating func apply(_ tx: Transaction) throws(PortfolioError) {
        let key = PositionKey(portfolio: tx.portfolio, assetId: tx.assetId)
        let slot = position(key)
        // The position is taken out of the list while it changes, so that its lots are changed in
        // place rather than copied (the table would otherwise share them); it goes back either way.
        var p: Position
        if let slot {
            p = Position(key: key)  // a stand-in while the real one is out
            swap(&p, &positionList[slot])
        } else {
            p = Position(key: key, method: method(of: tx.portfolio))
        }
        let totalsSlot = portfolioTotals.firstIndex { $0.portfolio == tx.portfolio }
        let rule = KindRule.of(tx.type)
        let explaining = options.explaining == tx.id
        let lotsBefore = explaining ? p.lots.open : []
        // The position moves into `s` (never copied: its lots keep one owner and change in place).
        var s = Pending(p: consume p, t: totalsSlot.map { portfolioTotals[$0].totals } ?? LedgerTotals(),
                        keepingParts: options.keepingDisposals || explaining, explaining: explaining)
        do throws(PortfolioError) {
            for step in rule.steps(negative: tx.negative) {
                switch step {
                case let .acquire(cost): try acquire(tx, cost: cost, &s)
                case let .dispose(mode): try dispose(tx, mode: mode, &s)
                case let .income(measure): try receiveIncome(tx, measure: measure, &s)
                case .cash: try moveCash(tx, rule: rule, &s)
                case .expense: s.t.realized = try s.t.realized - Ledger.base(Exact36(tx.amountValue), of: tx)
                case .scale: try scale(tx, &s)
                }
            }
            if let overdraw = s.overdraw { throw overdraw }
        } catch {
            // Only an amount too large to compute exactly fails once a lot has changed; the books of
            // this position are then no longer those before the record (`damaged`).
            if let slot { swap(&s.p, &positionList[slot]) }
            if s.changedInPlace { damaged = true }
            throw error
        }
        commit(tx, s, slot: slot, totalsSlot: totalsSlot, rule: rule, lotsBefore: lotsBefore)
    }

    /// The `acquire` step: units in at a basis (a move's transfer-in: the very lots its transfer-out sent).
    private mutating func acquire(_ tx: Transaction, cost: KindRule.Cost, _ s: inout Pending) throws(PortfolioError) {
        let fee = tx.feeValue ?? .zero
        if !s.p.isOpen {
            s.p = Position(key: s.p.key, method: s.p.lots.method)
            s.p.openedDate = tx.date
            s.p.openedDay = tx.day
        }
        let basis: Exact36
        if cost == .grossPlusFee, tx.type == .transferIn, tx.priceValue == nil {
            // A move's receiving leg: the very lots its transfer-out took, converted into this
            // portfolio's base at the move's rate, any fee of its own shared by quantity.
            guard let link = tx.linkedId, let lots = moving[link] else { throw .unlinkedTransferIn(id: tx.id) }
            let arriving = try Ledger.arriving(lots, fee: try Ledger.base(Exact36(fee), of: tx), convert: { m throws(PortfolioError) in try Ledger.base(m, of: tx) },
                                               at: tx, order: applied)
            var sum = Exact36.zero
            for lot in arriving {
                try s.changing()
                try s.p.lots.receive(lot)
                sum = try sum + lot.basis
            }
            basis = sum
            s.made = arriving
            s.received = true
        } else {
            switch cost {
            case .grossPlusFee: basis = try Ledger.base(tx.gross + Exact36(fee), of: tx)
            case .gross: basis = try Ledger.base(tx.gross, of: tx)
            case .zero: basis = .zero
            }
            try s.changing()
            try s.p.lots.acquire(quantity: tx.amountValue, cost: basis, date: tx.date, source: tx.id, order: applied)
            if s.explaining { s.made = [Lot(quantity: tx.amountValue, basis: basis, acquired: tx.date, source: tx.id, order: applied)] }
        }
        if tx.type == .transferIn { s.t.netDeposits = try s.t.netDeposits + basis }
        s.p.cycleAcquired = s.p.cycleAcquired.flatMap { try? $0.adding(tx.amountValue) }
        s.p.cycleAcquisitionCost = s.p.cycleAcquisitionCost.flatMap { try? $0 + basis }
    }

    /// The `dispose` step: units out of the lots, what they realize by the mode (a sale, a transfer, a loss).
    private mutating func dispose(_ tx: Transaction, mode: KindRule.Disposal, _ s: inout Pending) throws(PortfolioError) {
        let fee = tx.feeValue ?? .zero
        let feeUnits = mode == .transfer ? fee : .zero
        let needed = try tx.amountValue.adding(feeUnits)
        guard needed <= s.p.lots.quantity else {
            throw .insufficientQuantity(Shortfall(
                type: tx.type, portfolio: tx.portfolio, assetId: tx.assetId, held: s.p.quantity, requested: tx.amountValue.decimal,
                fee: mode == .transfer && fee.units > 0 ? fee.decimal : nil, date: tx.date, id: tx.id, linked: tx.linkedId != nil))
        }
        let keepingParts = s.keepingParts
        let pool = keepingParts && s.p.lots.method == .average ? s.p.lots.open.first : nil
        let moves = mode == .transfer && tx.linkedId != nil
        try s.changing()
        let (basis, parts) = try s.p.lots.dispose(quantity: tx.amountValue, keepingParts: keepingParts || moves)
        /// What `realized` loses or gains, with the basis it realizes.
        func realize(_ gain: Exact36, basis: Exact36, _ s: inout Pending) throws(PortfolioError) {
            s.p.cycleRealized = try s.p.cycleRealized + gain
            s.p.cycleRealizedBasis = try s.p.cycleRealizedBasis + basis
            s.t.realized = try s.t.realized + gain
            s.t.realizedBasis = try s.t.realizedBasis + basis
        }
        switch mode {
        case .sale, .spend:
            let gross = try Ledger.base(tx.gross, of: tx)
            let proceeds = try Ledger.base(tx.gross - Exact36(fee), of: tx)
            let gain = try proceeds - basis
            // What was spent leaves the portfolio at its value: as money taken out, not as a loss.
            if mode == .spend { s.t.netDeposits = try s.t.netDeposits - proceeds }
            s.p.cycleSold = s.p.cycleSold.flatMap { try? $0.adding(tx.amountValue) }
            s.p.cycleSoldGross = s.p.cycleSoldGross.flatMap { try? $0 + gross }
            try realize(gain, basis: basis, &s)
            if keepingParts {
                s.gone.append(Ledger.disposal(tx, method: s.p.lots.method, tx.amountValue, proceeds: proceeds, fee: try Ledger.base(Exact36(fee), of: tx),
                                              basis: basis, gain: gain, realizes: true, networkFee: false, pool: pool, parts: parts))
            }
        case .transfer:
            if keepingParts {
                s.gone.append(Ledger.disposal(tx, method: s.p.lots.method, tx.amountValue, proceeds: .zero, fee: .zero, basis: basis, gain: .zero,
                                              realizes: false, networkFee: false, pool: pool, parts: parts))
            }
            if feeUnits.units > 0 {
                let feePool = keepingParts && s.p.lots.method == .average ? s.p.lots.open.first : nil
                let (lost, feeParts) = try s.p.lots.dispose(quantity: feeUnits, keepingParts: keepingParts)
                try realize(try Exact36.zero - lost, basis: lost, &s)
                if keepingParts {
                    s.gone.append(Ledger.disposal(tx, method: s.p.lots.method, feeUnits, proceeds: .zero, fee: .zero, basis: lost,
                                                  gain: try Exact36.zero - lost, realizes: true, networkFee: true, pool: feePool, parts: feeParts))
                }
            }
            if moves { s.sent = parts }
            s.t.netDeposits = try s.t.netDeposits - basis
        case .loss:
            try realize(try Exact36.zero - basis, basis: basis, &s)
            if keepingParts {
                s.gone.append(Ledger.disposal(tx, method: s.p.lots.method, tx.amountValue, proceeds: .zero, fee: .zero, basis: basis,
                                              gain: try Exact36.zero - basis, realizes: true, networkFee: false, pool: pool, parts: parts))
            }
        }
        s.p.lastDisposalDate = tx.date
        s.p.lastDisposalDay = tx.day
        s.closes = !s.p.isOpen
    }

    /// The `income` step: a dividend's, interest's or reward's gross, tax and net, in the base.
    private func receiveIncome(_ tx: Transaction, measure: KindRule.Income, _ s: inout Pending) throws(PortfolioError) {
        let fee = tx.feeValue ?? .zero
        let paid = measure == .value ? tx.gross : Exact36(tx.amountValue)
        let withheld = measure == .netOfTax ? Exact36(fee) : .zero
        let gross = try Ledger.base(paid, of: tx)
        let tax = try Ledger.base(withheld, of: tx)
        let net = try Ledger.base(paid - withheld, of: tx)
        s.t.income = try s.t.income + net
        s.t.taxWithheld = try s.t.taxWithheld + tax
        s.event = IncomeEvent(transactionId: tx.id, portfolio: tx.portfolio, assetId: tx.assetId, type: tx.type,
                              date: tx.date, day: tx.day, gross: gross, taxWithheld: tax, net: net)
    }

    /// The `cash` step: the tracked balance the record changes (an overdraw is noted, thrown later).
    private func moveCash(_ tx: Transaction, rule: KindRule, _ s: inout Pending) throws(PortfolioError) {
        let fee = tx.feeValue ?? .zero
        let swapLeg = tx.linkedId.map { !savingLinks.contains($0) } ?? false
        guard cashTrackedList.contains(tx.portfolio), let flow = rule.cash(of: tx, swapLeg: swapLeg) else { return }
        // A swap's leg moves no cash but its fee: without one, there is no cash movement at all.
        if flow == .spendFee && fee.units == 0 { return }
        // A leg of a cash exchange: never money put in or taken out; the cash received costs what left.
        let exchangeCost = tx.linkedId.flatMap { exchangeCosts[$0] }
        let change: Exact36
        switch flow {
        case .spendGrossPlusFee: change = try Exact36.zero - tx.gross - Exact36(fee)
        case .receiveGrossMinusFee: change = try tx.gross - Exact36(fee)
        case .receiveNetOfTax: change = try Exact36(tx.amountValue) - Exact36(fee)
        case .deposit: change = Exact36(tx.amountValue)
        case .withdrawal: change = try Exact36.zero - Exact36(tx.amountValue)
        case .spendFee: change = try Exact36.zero - Exact36(fee)
        case .spendAmount: change = try Exact36.zero - Exact36(tx.amountValue)
        }
        // Cash stays in its currency; what was put in counts at its own date's rate.
        if (flow == .deposit || flow == .withdrawal) && exchangeCost == nil { s.t.netDeposits = try s.t.netDeposits + Ledger.base(change, of: tx) }
        let currency = tx.currency ?? ""
        let cashSlot = cashList.firstIndex { $0.key.portfolio == tx.portfolio && $0.key.currency == currency }
        let before = cashSlot.map { cashList[$0].balance } ?? .zero
        let after = try before + change
        if after < .zero {
            s.overdraw = .insufficientCash(CashShortfall(type: tx.type, portfolio: tx.portfolio, currency: currency, date: tx.date,
                                                         id: tx.id, needed: try Exact36.zero - change, available: before))
        }
        if let exchangeCost, flow == .deposit { s.cashCost = exchangeCost } else { s.cashCost = try Ledger.base(change, of: tx) }
        s.cashAfter = (after, cashSlot, currency, change)
    }

    /// The `scale` step: a split of an open position by NEW:OLD.
    private func scale(_ tx: Transaction, _ s: inout Pending) throws(PortfolioError) {
        let divisor = tx.priceValue ?? Fixed18(units: Fixed18.scale)
        guard s.p.isOpen else { return }
        if let overdraw = s.overdraw { throw overdraw }
        // Units held must stay units held: a ratio that rounds them to nothing would lose their basis.
        if try s.p.lots.quantity.scaled(by: tx.amountValue, over: divisor).units == 0 {
            throw PortfolioError.splitToNothing(held: s.p.lots.quantity)
        }
        try s.changing()
        try s.p.lots.scale(by: tx.amountValue, over: divisor)
        s.p.cycleAcquired = s.p.cycleAcquired.flatMap { try? $0.scaled(by: tx.amountValue, over: divisor) }
        s.p.cycleSold = s.p.cycleSold.flatMap { try? $0.scaled(by: tx.amountValue, over: divisor) }
    }

    /// Everything computed: the record's changes go into the ledger.
    private mutating func commit(_ tx: Transaction, _ s: consuming Pending, slot: Int?, totalsSlot: Int?, rule: KindRule, lotsBefore: [Lot]) {
        var movement: CashMovement?
        applied += 1
        let p = s.p
        if let slot {
            positionList[slot] = p
        } else if !rule.isCashOnly(tx) {
            positionIndex[s.p.key] = positionList.count
            positionList.append(p)
        }
        if let cashAfter = s.cashAfter {
            if let i = cashAfter.slot {
                cashList[i].balance = cashAfter.balance
                cashList[i].atCost = (try? cashList[i].atCost + s.cashCost) ?? s.cashCost
            } else {
                cashList.append((CashKey(portfolio: tx.portfolio, currency: cashAfter.currency), cashAfter.balance, s.cashCost))
            }
            if options.keepingCashMovements || s.explaining {
                let m = CashMovement(transactionId: tx.id, portfolio: tx.portfolio, type: tx.type, date: tx.date, day: tx.day,
                                     currency: cashAfter.currency, amount: cashAfter.change, balance: cashAfter.balance)
                if options.keepingCashMovements { cashMovements.append(m) }
                movement = m
            }
        }
        if options.keepingChanges {
            keepChange(tx, quantity: rule.isCashOnly(tx) ? .zero : p.lots.quantity, netDeposits: s.t.netDeposits, totalsSlot: totalsSlot,
                       cashCurrency: s.cashAfter?.currency, cashBalance: s.cashAfter?.balance)
        }
        if let totalsSlot { portfolioTotals[totalsSlot].totals = s.t } else { portfolioTotals.append((tx.portfolio, s.t)) }
        if let event = s.event { income.append(event) }
        if let sent = s.sent, let link = tx.linkedId { moving[link] = sent }
        if s.received, let link = tx.linkedId { moving[link] = nil }
        if options.keepingDisposals { disposals.append(contentsOf: s.gone) }
        if s.explaining {
            explanation = Explanation(transaction: tx, method: p.lots.method, before: lotsBefore, after: p.lots.open, made: s.made,
                                      disposals: s.gone, income: s.event, cash: movement)
        }
        if s.closes { closeCycle(of: p) }
    }

    /// Keeps what `tx` left (`keepingChanges`); apart from `apply`, so that the replay without it stays as it was.
    @inline(never)
    private mutating func keepChange(_ tx: Transaction, quantity: Fixed18, netDeposits: Exact36, totalsSlot: Int?, cashCurrency: String?,
                                     cashBalance: Exact36?) {
        let before = totalsSlot.map { portfolioTotals[$0].totals.netDeposits } ?? .zero
        changes.append(AppliedChange(transaction: tx, quantity: quantity, netDepositsChange: (try? netDeposits - before) ?? .zero,
                                     cashCurrency: cashCurrency, cashBalance: cashBalance ?? .zero,
                                     exchangeLeg: tx.linkedId.map { exchangeCosts[$0] != nil } ?? false))
    }

    /// What the cash received by each cash exchange of `transactions` costs, by link: the cost in the
    /// portfolio's base of the cash that left (the withdrawal leg's amount at its rate). The deposit leg
    /// replays first at their instant, so this is known before either leg applies.
    /// The links whose two legs are a saving plan's deposit and buy (`LinkKind.savingPlan`).
    public static func savingLinks(_ transactions: [Transaction]) -> Set<UUID> {
        var deposits: [UUID: Transaction] = [:]
        for t in transactions where t.type == .deposit { if let link = t.linkedId { deposits[link] = t } }
        guard !deposits.isEmpty else { return [] }
        var links: Set<UUID> = []
        for t in transactions where t.type == .buy {
            if let link = t.linkedId, let deposit = deposits[link], LinkKind.of(deposit, t)?.name == LinkKind.savingPlan { links.insert(link) }
        }
        return links
    }

    public static func exchangeCosts(_ transactions: [Transaction]) -> [UUID: Exact36] {
        var legs: [UUID: [Transaction]] = [:]
        for t in transactions where t.linkedId != nil && (t.type == .withdrawal || t.type == .deposit) {
            if let link = t.linkedId { legs[link, default: []].append(t) }
        }
        var costs: [UUID: Exact36] = [:]
        for (link, pair) in legs where pair.count == 2 {
            guard LinkKind.of(pair[0], pair[1])?.name == LinkKind.cashExchange,
                  let out = pair.first(where: { $0.type == .withdrawal }) else { continue }
            let amount = Exact36(out.amountValue)
            costs[link] = out.fxRateValue.map { (try? amount.multiplied(by: $0, dividedBy: Fixed18(units: Fixed18.scale))) ?? amount } ?? amount
        }
        return costs
    }

    /// One disposal's record (kept only when asked).
    static func disposal(_ tx: Transaction, method: CostBasisMethod, _ quantity: Fixed18, proceeds: Exact36, fee: Exact36, basis: Exact36,
                         gain: Exact36, realizes: Bool, networkFee: Bool, pool: Lot?, parts: [Lot]) -> Disposal {
        Disposal(transactionId: tx.id, portfolio: tx.portfolio, assetId: tx.assetId, type: tx.type, linked: tx.linkedId != nil,
                 date: tx.date, day: tx.day, method: method, quantity: quantity, proceeds: proceeds, fee: fee, basis: basis, gain: gain,
                 realizes: realizes, isNetworkFee: networkFee, poolBefore: pool, parts: parts)
    }

    /// The lots a move's transfer-in receives: the transfer-out's lots with their dates, sources and
    /// order, each basis converted; the leg's own fee (rare: only a hand-written record has one)
    /// shared by quantity, the last lot taking the rest. A part of an `average` pool arrives as one
    /// lot acquired on the move's date by the transfer-in.
    static func arriving(_ lots: [Lot], fee: Exact36, convert: (Exact36) throws(PortfolioError) -> Exact36, at tx: Transaction,
                         order: Int) throws(PortfolioError) -> [Lot] {
        var out: [Lot] = []
        out.reserveCapacity(lots.count)
        var feeLeft = fee
        let total = lots.reduce(Fixed18.zero) { (try? $0.adding($1.quantity)) ?? $0 }
        for (i, var lot) in lots.enumerated() {
            lot.basis = try convert(lot.basis)
            if fee != .zero {
                let share = i == lots.count - 1 ? feeLeft : try fee.multiplied(by: lot.quantity, dividedBy: total)
                lot.basis = try lot.basis + share
                feeLeft = try feeLeft - share
            }
            if lot.acquired == nil {
                lot.acquired = tx.date
                lot.source = tx.id
                lot.order = order
            }
            out.append(Lot(quantity: lot.quantity, basis: lot.basis, acquired: lot.acquired, source: lot.source, order: lot.order))
        }
        return out
    }

    /// Where the position of `key` is in `positionList`, or `nil`.
    private mutating func position(_ key: PositionKey) -> Int? {
        if let i = recentPositions.find(key) { return i }
        guard let i = positionIndex[key] else { return nil }
        recentPositions.remember(key, at: i)
        return i
    }

    private mutating func closeCycle(of p: Position) {
        guard (p.cycleAcquired?.units ?? 1) > 0, let opened = p.openedDate, let closedOn = p.lastDisposalDate else { return }
        var cycle = ClosedPosition(
            portfolio: p.key.portfolio,
            assetId: p.key.assetId,
            acquired: p.cycleAcquired,
            totalCost: p.cycleRealizedBasis,
            avgCostPrice: p.cycleAcquired.flatMap { units in p.cycleAcquisitionCost.flatMap { try? $0.divided(by: units) } },
            avgSellPrice: p.cycleSold.flatMap { units in units.units > 0 ? p.cycleSoldGross.flatMap { try? $0.divided(by: units) } : nil },
            realizedPnL: p.cycleRealized,
            openedDate: opened,
            closedDate: closedOn)
        (cycle.openedDay, cycle.closedDay) = (p.openedDay, p.lastDisposalDay)
        closed.append(cycle)
    }
}

/// Percentages: `part / base × 100`, or `nil` when the base is zero.
public enum Percent {
    public static func of(_ part: Decimal, _ base: Decimal) -> Decimal? {
        base.isZero ? nil : part / base * 100
    }

    /// The same for exact money: a ratio, so `Decimal`'s 38 digits are plenty.
    public static func of(_ part: Exact36, _ base: Exact36) -> Decimal? {
        of(part.decimal, base.decimal)
    }
}

/// A small table in front of a ledger's position index: the keys found last, by the bits of their two
/// strings. Equal bits are the same text (the same small string, or the same storage of a larger one),
/// so a record that names a position again finds it without hashing its names. The table keeps each
/// key it holds, so a storage it compares against stays alive, and shared, hence unchanged.
struct RecentPositions: Sendable {
    private static let size = 64
    /// Per entry: the four words of the key's strings, then the position's index + 1 (0: empty).
    private var words = [UInt64](repeating: 0, count: 5 * RecentPositions.size)
    /// The keys of the entries, kept alive (never read to find one).
    private var keys = [PositionKey?](repeating: nil, count: RecentPositions.size)

    /// A string's two words (its length and flags, and its text or storage), as stored.
    @inline(__always)
    private static func words(_ s: String) -> (UInt64, UInt64) {
        MemoryLayout<String>.size == 16 ? unsafeBitCast(s, to: (UInt64, UInt64).self) : (0, 0)
    }

    @inline(__always)
    private static func entry(_ a: (UInt64, UInt64), _ b: (UInt64, UInt64)) -> Int {
        let mixed = (a.0 &* 0x9E37_79B9_7F4A_7C15) ^ (a.1 &* 0xC2B2_AE3D_27D4_EB4F) ^ (b.0 &* 0x1656_67B1_9E37_79F9) ^ (b.1 &* 0x27D4_EB2F_1656_67C5)
        return Int(truncatingIfNeeded: mixed >> 58) & (size - 1)
    }

    /// The index remembered for a key with the very bits of `key`, or `nil`.
    func find(_ key: PositionKey) -> Int? {
        guard MemoryLayout<String>.size == 16 else { return nil }
        let a = Self.words(key.portfolio), b = Self.words(key.assetId)
        let e = 5 * Self.entry(a, b)
        return words.withUnsafeBufferPointer { w in
            guard w[e + 4] != 0, w[e] == a.0, w[e + 1] == a.1, w[e + 2] == b.0, w[e + 3] == b.1 else { return nil }
            return Int(w[e + 4]) - 1
        }
    }

    /// Remembers that `key` is at `index` (replacing the entry it falls on).
    mutating func remember(_ key: PositionKey, at index: Int) {
        guard MemoryLayout<String>.size == 16 else { return }
        let a = Self.words(key.portfolio), b = Self.words(key.assetId)
        let slot = Self.entry(a, b), e = 5 * slot
        keys[slot] = key
        words[e] = a.0
        words[e + 1] = a.1
        words[e + 2] = b.0
        words[e + 3] = b.1
        words[e + 4] = UInt64(index + 1)
    }
}
