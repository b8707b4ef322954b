import Foundation

/// Which basis leaves on a disposal (cost-basis.md): one pool per portfolio and asset, or lots
/// taken in an order.
public enum CostBasisMethod: String, CaseIterable, Sendable, Hashable {
    /// Weighted average: one pool; a disposal takes basis × taken ÷ quantity.
    case average
    /// Oldest acquisition first.
    case fifo
    /// Newest acquisition first.
    case lifo
    /// Highest unit cost first, ties by older acquisition.
    case hifo

    /// A method named in any case (`FIFO`, `Fifo`).
    public init?(name: String) { self.init(rawValue: name.lowercased()) }

    public var summary: String {
        switch self {
        case .average: "weighted average cost: one pool per asset"
        case .fifo: "first in, first out: the oldest lots leave first"
        case .lifo: "last in, first out: the newest lots leave first"
        case .hifo: "highest in, first out: the lots of highest unit cost leave first"
        }
    }
}

/// Units acquired together: what they cost (in the portfolio's base, fees included), when, and by
/// which record. Under `average` the pool is one lot without a date or a source.
public struct Lot: Sendable, Equatable {
    public var quantity: Fixed18
    public var basis: Exact36
    /// The acquisition date (`nil`: the average pool).
    public var acquired: Date?
    /// The transaction that made the lot (`nil`: the average pool).
    public var source: UUID?
    /// The replay position of that transaction: the recording order that breaks every tie left.
    public var order: Int
    /// basis ÷ quantity when the lot joined a HIFO position or was last split there: HIFO's key (a
    /// part taken later leaves it as it was, so rounding in the 36th decimal never reorders lots).
    /// Zero elsewhere (only HIFO orders by it).
    var unitCost = Exact36.zero

    public init(quantity: Fixed18, basis: Exact36, acquired: Date?, source: UUID?, order: Int) {
        self.quantity = quantity
        self.basis = basis
        self.acquired = acquired
        self.source = source
        self.order = order
    }

    /// basis ÷ quantity; the largest value when it does not fit (a huge basis on a dust quantity).
    public static func costPerUnit(_ basis: Exact36, _ quantity: Fixed18) -> Exact36 {
        guard quantity.units > 0 else { return .zero }
        return (try? basis.divided(by: quantity)) ?? Exact36(negative: false, high: .max, low: .max)
    }

    /// What one unit cost (rounded at the 36th decimal).
    public var costPerUnit: Exact36 { Lot.costPerUnit(basis, quantity) }
}

/// What is held of one asset in one portfolio and what it cost, kept by the portfolio's method.
///
/// Under `average` only the totals exist. Under the lot methods every lot is kept, in the order the
/// method takes them: FIFO and LIFO by (acquisition date, recording order), FIFO taking from the
/// front and LIFO from the back; HIFO by (unit cost descending, date, recording order), from the
/// front. The totals are always the exact sums of the lots, so a history holds the same quantities
/// under every method.
///
/// FIFO and LIFO keep a sorted array (acquisitions nearly always arrive in date order, so a new lot
/// is appended). HIFO's lots arrive in any order of unit cost, so it keeps them in a binary heap
/// instead: a lot joins and the first one leaves in O(log n), where keeping them sorted moved half
/// of the array on every acquisition (quadratic in a long history of buys). Lots equal in HIFO's
/// order leave in the order they arrived, as they did from the sorted array.
public struct Lots: Sendable {
    public let method: CostBasisMethod
    /// Units held.
    public internal(set) var quantity: Fixed18 = .zero
    /// Cost of the units held.
    public internal(set) var costBasis: Exact36 = .zero
    /// FIFO and LIFO: the lots, sorted by acquisition.
    var lots: [Lot] = []
    /// Lots before `head` are used up (FIFO takes from the front without moving the rest).
    var head = 0
    /// HIFO: the lots as a binary heap, the first to leave at index 0.
    var heap: [Ranked] = []
    /// HIFO: lots that have joined so far (the tie-break between lots equal in HIFO's order).
    var arrivals = 0

    /// A HIFO lot with its place among equals.
    struct Ranked: Sendable {
        var lot: Lot
        var arrival: Int

        /// `a` leaves before `b`: HIFO's order, then the order of arrival.
        static func first(_ a: Ranked, _ b: Ranked) -> Bool {
            if Lots.hifoFirst(a.lot, b.lot) { return true }
            if Lots.hifoFirst(b.lot, a.lot) { return false }
            return a.arrival < b.arrival
        }
    }

    public init(method: CostBasisMethod = .average) { self.method = method }

    /// The open lots, in the order the method takes them (LIFO: from the end); under `average`, the
    /// pool as one lot when anything is held.
    public var open: [Lot] {
        switch method {
        case .average:
            return quantity.units > 0 ? [Lot(quantity: quantity, basis: costBasis, acquired: nil, source: nil, order: 0)] : []
        case .hifo:
            return heap.sorted(by: Ranked.first).map(\.lot)
        case .fifo, .lifo:
            return Array(lots[head...])
        }
    }

    /// The open lots from the oldest acquisition (recording order on a tie).
    public var byAcquisition: [Lot] {
        method == .hifo ? open.sorted(by: Lots.earlier) : open
    }

    /// Adds units acquired for `cost` (fees included) on `date` by the record `source` at replay position `order`.
    public mutating func acquire(quantity amount: Fixed18, cost: Exact36, date: Date, source: UUID, order: Int) throws(PortfolioError) {
        if method == .average {
            // The pool keeps totals only: no lot to make.
            let q = try quantity.adding(amount)
            costBasis = try costBasis + cost
            quantity = q
            return
        }
        try receive(Lot(quantity: amount, basis: cost, acquired: date, source: source, order: order))
    }

    /// Adds a lot as it is (a lot that a move brings keeps its date, basis, source and order).
    public mutating func receive(_ lot: Lot) throws(PortfolioError) {
        let q = try quantity.adding(lot.quantity)
        let b = try costBasis + lot.basis
        switch method {
        case .average: break
        case .hifo: push(lot)
        case .fifo, .lifo: insert(lot)
        }
        quantity = q
        costBasis = b
    }

    /// Removes `amount` units (at most what is held) and returns the basis they carried; with
    /// `keepingParts`, also the lot parts they came from (under `average`, one part of the pool).
    public mutating func dispose(quantity amount: Fixed18, keepingParts: Bool = false) throws(PortfolioError) -> (basis: Exact36, parts: [Lot]) {
        guard amount <= quantity else { throw .quantityTooLarge }
        guard amount.units > 0 else { return (.zero, []) }
        if method == .average {
            let taken: Exact36
            if amount == quantity {
                // The cycle closes at exactly zero: release the whole basis, leave no dust.
                taken = costBasis
            } else {
                taken = try costBasis.multiplied(by: amount, dividedBy: quantity)
            }
            let parts = keepingParts ? [Lot(quantity: amount, basis: taken, acquired: nil, source: nil, order: 0)] : []
            quantity = Fixed18(units: quantity.units - amount.units)
            costBasis = quantity.units == 0 ? .zero : try costBasis - taken
            return (taken, parts)
        }
        var left = amount
        var taken = Exact36.zero
        var parts: [Lot] = []
        while left.units > 0 {
            guard var lot = next else { throw .quantityTooLarge }  // the lots always add up to the quantity
            if lot.quantity <= left {
                left = Fixed18(units: left.units - lot.quantity.units)
                taken = try taken + lot.basis
                if keepingParts { parts.append(lot) }
                removeNext()
            } else {
                let part = try lot.basis.multiplied(by: left, dividedBy: lot.quantity)
                taken = try taken + part
                if keepingParts {
                    var p = lot
                    p.quantity = left
                    p.basis = part
                    parts.append(p)
                }
                lot.quantity = Fixed18(units: lot.quantity.units - left.units)
                lot.basis = try lot.basis - part
                // HIFO's key stays as it was (`unitCost`), so the lot keeps its place.
                replaceNext(with: lot)
                left = .zero
            }
        }
        if head > 32 && head * 2 > lots.count {
            lots.removeFirst(head)
            head = 0
        }
        quantity = Fixed18(units: quantity.units - amount.units)
        costBasis = quantity.units == 0 ? .zero : try costBasis - taken
        return (taken, parts)
    }

    /// Multiplies what is held by `numerator / denominator` (a split); the bases stay.
    ///
    /// The quantity rounds (half up, 18 decimals) exactly as the pool does under `average`; the
    /// lots share that rounding by their running sums, so they still add up to it. A lot that
    /// rounds to nothing gives its basis to its neighbour.
    public mutating func scale(by numerator: Fixed18, over denominator: Fixed18) throws(PortfolioError) {
        let scaled = try quantity.scaled(by: numerator, over: denominator)
        let current = method == .average ? [] : open
        if !current.isEmpty {
            var kept: [Lot] = []
            kept.reserveCapacity(current.count)
            var before = Fixed18.zero, scaledBefore = Fixed18.zero
            var orphanBasis = Exact36.zero
            for var lot in current {
                before = try before.adding(lot.quantity)
                let cumulative = try before.scaled(by: numerator, over: denominator)
                lot.quantity = Fixed18(units: cumulative.units - scaledBefore.units)
                scaledBefore = cumulative
                if lot.quantity.units == 0 {
                    orphanBasis = try orphanBasis + lot.basis
                    continue
                }
                lot.basis = try lot.basis + orphanBasis
                orphanBasis = .zero
                if method == .hifo { lot.unitCost = Lot.costPerUnit(lot.basis, lot.quantity) }
                kept.append(lot)
            }
            if orphanBasis != .zero, let last = kept.indices.last {
                kept[last].basis = try kept[last].basis + orphanBasis
                if method == .hifo { kept[last].unitCost = Lot.costPerUnit(kept[last].basis, kept[last].quantity) }
            }
            if method == .hifo {
                kept.sort(by: Lots.hifoFirst)
                // A sorted array is a heap; arrivals in this order keep equal lots where the sort put them.
                heap = kept.enumerated().map { Ranked(lot: $1, arrival: $0) }
                arrivals = kept.count
            } else {
                lots = kept
                head = 0
            }
        }
        quantity = scaled
    }

    // MARK: Order

    /// Acquisition order: older date first, then recording order.
    static func earlier(_ a: Lot, _ b: Lot) -> Bool {
        let x = a.acquired ?? .distantPast, y = b.acquired ?? .distantPast
        return x != y ? x < y : a.order < b.order
    }

    /// HIFO's order: higher unit cost first, then older, then recording order.
    static func hifoFirst(_ a: Lot, _ b: Lot) -> Bool {
        a.unitCost != b.unitCost ? a.unitCost > b.unitCost : earlier(a, b)
    }

    /// The lot the method takes next (`nil`: none is open).
    private var next: Lot? {
        switch method {
        case .average: return nil
        case .hifo: return heap.first?.lot
        case .fifo: return head < lots.count ? lots[head] : nil
        case .lifo: return head < lots.count ? lots[lots.count - 1] : nil
        }
    }

    /// Removes the lot `next` returned.
    private mutating func removeNext() {
        switch method {
        case .average: break
        case .hifo: popFirst()
        case .fifo: head += 1
        case .lifo: lots.removeLast()
        }
    }

    /// Puts back the lot `next` returned, changed but in the same place of the method's order.
    private mutating func replaceNext(with lot: Lot) {
        switch method {
        case .average: break
        case .hifo: heap[0].lot = lot
        case .fifo: lots[head] = lot
        case .lifo: lots[lots.count - 1] = lot
        }
    }

    /// FIFO and LIFO: puts a lot in its place by acquisition, after any lot equal to it.
    private mutating func insert(_ lot: Lot) {
        // Acquisitions mostly come in date order: appending is the common case.
        guard let last = lots.last, head < lots.count, Lots.earlier(lot, last) else {
            lots.append(lot)
            return
        }
        var lo = head, hi = lots.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if Lots.earlier(lot, lots[mid]) { hi = mid } else { lo = mid + 1 }
        }
        lots.insert(lot, at: lo)
    }

    /// HIFO: adds a lot to the heap, keyed by its unit cost as it arrives.
    private mutating func push(_ arriving: Lot) {
        var lot = arriving
        lot.unitCost = Lot.costPerUnit(lot.basis, lot.quantity)
        let entry = Ranked(lot: lot, arrival: arrivals)
        arrivals += 1
        heap.append(entry)
        // Sift up: move parents down until the new lot's place is found.
        var i = heap.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard Ranked.first(entry, heap[parent]) else { break }
            heap[i] = heap[parent]
            i = parent
        }
        heap[i] = entry
    }

    /// HIFO: removes the first lot of the heap.
    private mutating func popFirst() {
        guard let last = heap.popLast() else { return }
        guard !heap.isEmpty else { return }
        // Sift down: move the first of the children up until the last lot's place is found.
        let count = heap.count
        var i = 0
        while true {
            let left = 2 * i + 1
            guard left < count else { break }
            let right = left + 1
            let child = right < count && Ranked.first(heap[right], heap[left]) ? right : left
            guard Ranked.first(heap[child], last) else { break }
            heap[i] = heap[child]
            i = child
        }
        heap[i] = last
    }
}

extension Fixed18 {
    /// `self + other`, or `quantityTooLarge` past 128 bits (about 3.4 × 10^20 units).
    public func adding(_ other: Fixed18) throws(PortfolioError) -> Fixed18 {
        let (sum, overflow) = units.addingReportingOverflow(other.units)
        if overflow { throw .quantityTooLarge }
        return Fixed18(units: sum)
    }

    /// `self × numerator / denominator`, rounded half up to 18 decimals (a split's new quantity).
    public func scaled(by numerator: Fixed18, over denominator: Fixed18) throws(PortfolioError) -> Fixed18 {
        do {
            return try Exact36(self).multiplied(by: numerator, dividedBy: denominator).roundedToFixed18()
        } catch .valueTooLarge {
            throw .quantityTooLarge
        }
    }
}
