import Foundation

/// What two records sharing a `linkedId` are together: the one table of link kinds that the
/// check, every write and `edit` read. A new link kind is a new row.
///
/// Two legs share one `linkedId`, the id of one of them; their kinds, in either order, say which
/// link they are, and the row says what must hold between them.
public struct LinkKind: Sendable {
    /// How people call it: `swap`, `move`, `cash transfer`, `cash exchange`.
    public var name: String
    /// The two kinds, in either order.
    public var kinds: (TransactionType, TransactionType)
    /// Whether both legs are in one portfolio (`true`), in two (`false`).
    public var samePortfolio: Bool
    /// Both legs name the same asset (`true`), two different ones (`false`), or it is not compared (`nil`).
    public var sameAsset: Bool?
    /// Both legs are in the same currency (`true`), in two (`false`), or it does not matter (`nil`).
    public var sameCurrency: Bool?
    /// Both legs carry the same amount: what leaves one portfolio arrives in the other.
    public var sameAmount: Bool
    /// The receiving leg's kind, when it takes everything from the sending leg (no price, no fee of its own).
    public var receivingTakesNothing: TransactionType?

    public static let cashExchange = "cash exchange"
    public static let savingPlan = "saving plan"

    public static let table: [LinkKind] = [
        LinkKind(name: "swap", kinds: (.sell, .buy), samePortfolio: true, sameAsset: false, sameCurrency: nil, sameAmount: false),
        LinkKind(name: "move", kinds: (.transferOut, .transferIn), samePortfolio: false, sameAsset: true, sameCurrency: nil,
                 sameAmount: true, receivingTakesNothing: .transferIn),
        LinkKind(name: "cash transfer", kinds: (.withdrawal, .deposit), samePortfolio: false, sameAsset: nil, sameCurrency: true,
                 sameAmount: true),
        LinkKind(name: cashExchange, kinds: (.withdrawal, .deposit), samePortfolio: true, sameAsset: nil, sameCurrency: false,
                 sameAmount: false),
        // A saving plan's due date in a cash-tracking portfolio: the money paid in, and the buy it pays for.
        LinkKind(name: savingPlan, kinds: (.deposit, .buy), samePortfolio: true, sameAsset: nil, sameCurrency: true, sameAmount: false),
    ]

    /// The link two legs make by their kinds and portfolios, or `nil` when no row pairs them.
    public static func of(_ a: borrowing Transaction, _ b: borrowing Transaction) -> LinkKind? {
        table.first { k in
            ((a.type, b.type) == k.kinds || (b.type, a.type) == k.kinds) && (a.portfolio == b.portfolio) == k.samePortfolio
        }
    }

    /// What is wrong with the records sharing one `linkedId` (`link`), in words, or `nil` when they
    /// make a whole link of a row of the table.
    public static func fault(of legs: [Transaction], link: UUID, names: MessageNames = .plain) -> String? {
        let linkText = UUIDText.lowercased(link)
        guard legs.count == 2 else {
            return legs.count < 2 ? "its linked leg (linkedId \(linkText)) is missing: a link joins two records"
                : "\(legs.count) records share linkedId \(linkText): a link joins two records"
        }
        guard legs.contains(where: { $0.id == link }) else {
            return "linkedId \(linkText) is the id of neither leg: a link carries the id of one of its two records"
        }
        let (a, b) = (legs[0], legs[1])
        guard let kind = of(a, b) else {
            if a.type == b.type || !table.contains(where: { ($0.kinds == (a.type, b.type) || $0.kinds == (b.type, a.type)) }) {
                return "a \(a.type.rawValue) and a \(b.type.rawValue) cannot be linked (a swap is a sell and a buy, a move a "
                    + "transfer-out and a transfer-in, a cash transfer or exchange a withdrawal and a deposit, a saving plan's due date "
                    + "a deposit and a buy)"
            }
            switch a.type {
            case .sell, .buy: return "a swap's two legs are in two portfolios ('\(TextEscaping.escaped(a.portfolio))' and '\(TextEscaping.escaped(b.portfolio))')"
            default: return "a move's two legs are both in '\(TextEscaping.escaped(a.portfolio))': a move goes from one portfolio to another"
            }
        }
        return kind.fault(a, b, names: names)
    }

    /// What breaks this row's rules in a pair of legs of its kinds, or `nil`.
    func fault(_ a: borrowing Transaction, _ b: borrowing Transaction, names: MessageNames = .plain) -> String? {
        let kind = self
        if a.date != b.date { return "a \(kind.name)'s two legs have different dates" }
        switch kind.sameAsset {
        case true?: if a.assetId != b.assetId { return "a \(kind.name)'s two legs name different assets (\(names.coin(a.assetId)) and \(names.coin(b.assetId)))" }
        case false?: if a.assetId == b.assetId { return "a \(kind.name) of \(names.coin(a.assetId)) into itself" }
        case nil: break
        }
        switch kind.sameCurrency {
        case true?: if a.currency != b.currency { return "a \(kind.name)'s two legs are in different currencies (\(a.currency ?? "none") and \(b.currency ?? "none"))" }
        case false?: if a.currency == b.currency { return "a \(kind.name) of \(a.currency ?? "cash") into itself" }
        case nil: break
        }
        if kind.sameAmount && (a.amountValue != b.amountValue || a.negative != b.negative) {
            return "a \(kind.name)'s two legs differ in amount (\(a.amountValue.text) and \(b.amountValue.text)): what leaves arrives"
        }
        if let receiving = kind.receivingTakesNothing {
            func takesSomething(_ leg: borrowing Transaction) -> Bool {
                leg.type == receiving && (leg.priceValue != nil || leg.totalValue != nil || (leg.feeValue.map { $0.units != 0 } ?? false))
            }
            if takesSomething(a) || takesSomething(b) {
                return "the receiving leg of a \(kind.name) takes no price or fee of its own (its basis comes from the leg that sends)"
            }
        }
        return nil
    }
}

extension Book {
    /// The records whose link is broken (see `LinkKind.fault`), in file order, each with the legs of its
    /// link and the link. Only records with a `linkedId` are looked at; a link with a leg in `excluded`
    /// (a leg breaking a rule of its own) is left to that rule, and a lone transfer-in to the replay,
    /// which names it (`unlinkedTransferIn`).
    ///
    /// Every read checks this, so the common case is cheap: each link's first two legs are kept by
    /// index (no array per link), and a whole pair is checked without gathering its legs.
    func linkFaults(excluding excluded: Set<Int> = []) -> [(index: Int, legs: [Transaction], link: UUID)] {
        var linked = 0
        for i in transactions.indices where transactions[i].linkedId != nil { linked += 1 }
        if linked == 0 { return [] }
        // Each link's first record, its second (`partner`), and the links of three or more records.
        var table = IDTable(capacity: linked)
        var partner = [Int](repeating: -1, count: transactions.count)
        var crowded = Set<Int>()
        var firsts: [Int] = []
        firsts.reserveCapacity(linked / 2 + 1)
        for i in transactions.indices {
            guard let link = transactions[i].linkedId else { continue }
            if let first = table.insert(link: link, at: i, in: transactions) {
                if partner[first] < 0 { partner[first] = i } else { crowded.insert(first) }
            } else {
                firsts.append(i)
            }
        }
        var faults: [(index: Int, legs: [Transaction], link: UUID)] = []
        for first in firsts {
            guard let link = transactions[first].linkedId else { continue }
            let second = partner[first]
            if second >= 0 && !crowded.contains(first) {
                if excluded.contains(first) || excluded.contains(second) { continue }
                if transactions[first].id == link || transactions[second].id == link,
                   let kind = LinkKind.of(transactions[first], transactions[second]),
                   kind.fault(transactions[first], transactions[second]) == nil { continue }
            }
            // A broken link (rare): its legs gathered, in file order.
            let indices = second < 0 ? [first] : crowded.contains(first)
                ? transactions.indices.filter { transactions[$0].linkedId == link } : [first, second]
            if indices.contains(where: excluded.contains) { continue }
            let legs = indices.map { transactions[$0] }
            if legs.count == 1 && legs[0].type == .transferIn { continue }
            if LinkKind.fault(of: legs, link: link) != nil {
                for i in indices { faults.append((i, legs, link)) }
            }
        }
        return faults.sorted { $0.index < $1.index }
    }
}
