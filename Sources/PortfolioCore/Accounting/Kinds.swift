import Foundation

/// What one kind of transaction is and does: the one table the replay, the checks and every
/// codec read. A new kind is a new row.
///
/// The replay knows a few steps only (beancount's postings, hledger's amounts): **acquire**
/// (units and basis in), **dispose** (units out at the method's basis, realizing a gain or only
/// moving basis), **income**, **cash** (what a portfolio that tracks cash spends or receives),
/// and **scale** (a split).
public struct KindRule: Sendable {
    /// What the price field holds, and whether it is needed.
    public enum PriceRule: Sendable, Equatable {
        /// No price (dividend, interest, transfer-out, adjustment).
        case none
        /// A price greater than zero (buy, sell; `total` may stand in for it).
        case positive
        /// A price of zero or more (a transfer-in's basis per unit, a reward's fair value); a
        /// move's transfer-in leg has none and takes its basis from the transfer-out leg.
        case nonNegative
        /// The OLD of a NEW:OLD split, when given (greater than zero).
        case splitDivisor
    }

    /// What the fee field holds.
    public enum FeeRule: Sendable, Equatable {
        case none
        /// Money added to the basis (buy, transfer-in) or taken from proceeds (sell).
        case money
        /// Units sent along to the network (transfer-out): a realized loss of their basis.
        case units
        /// Tax withheld from a dividend or interest payment.
        case taxWithheld
    }

    /// Where an acquisition's basis comes from.
    public enum Cost: Sendable, Equatable {
        /// `total` (else amount × price), plus the fee.
        case grossPlusFee
        /// amount × price, no fee (a reward's fair value).
        case gross
        /// Nothing (a positive adjustment).
        case zero
    }

    /// What a disposal does with the basis it takes.
    public enum Disposal: Sendable, Equatable {
        /// A sale: proceeds = (total, else amount × price) − fee; realized = proceeds − basis.
        case sale
        /// Basis leaves without a gain (a transfer-out; its fee in units is a realized loss).
        case transfer
        /// Units gone for nothing (a negative adjustment): the basis is a realized loss.
        case loss
        /// Units paid for goods or services (a spend): a sale whose proceeds leave the portfolio (its
        /// net deposits fall by them, and it is a flow out), with no cash received.
        case spend
    }

    /// What income a transaction earns.
    public enum Income: Sendable, Equatable {
        /// amount × price (a reward).
        case value
        /// amount − fee, the fee being tax withheld (a dividend, interest).
        case netOfTax
    }

    /// What a transaction does to the cash of a portfolio that tracks it, in its currency.
    public enum CashFlow: Sendable, Equatable {
        /// −(total, else amount × price) − fee: a buy.
        case spendGrossPlusFee
        /// +(total, else amount × price) − fee: a sale.
        case receiveGrossMinusFee
        /// +amount − fee (tax withheld): a dividend, interest.
        case receiveNetOfTax
        /// +amount, paid in from outside (a net deposit).
        case deposit
        /// −amount, taken out (a net withdrawal).
        case withdrawal
        /// −fee: a swap's sell leg (its two legs trade one asset for another, cash aside).
        case spendFee
        /// −amount, paid out as a cost (an expense): never a flow.
        case spendAmount
    }

    public enum Step: Sendable, Equatable {
        case acquire(Cost)
        case dispose(Disposal)
        case income(Income)
        case cash(CashFlow)
        case scale
        /// The record's amount, in money, is a realized loss (an expense paid from cash).
        case expense
    }

    /// Whether a record of the kind names an asset.
    public enum AssetRule: Sendable, Equatable {
        case required
        /// Cash alone (a deposit, a withdrawal).
        case none
        /// Interest: on an asset (a bond's coupon) or on cash.
        case optional
    }

    public var type: TransactionType
    public var asset: AssetRule = .required
    public var price: PriceRule
    /// Whether the kind may store an exact `total` (buy, sell).
    public var takesTotal: Bool
    public var fee: FeeRule
    /// Whether the money fields have a currency (kinds without money have `null`).
    public var hasCurrency: Bool
    /// The amount is money (dividend, interest), not units.
    public var amountIsMoney: Bool
    /// Only an adjustment's amount may be negative.
    public var signed: Bool
    /// The replay's steps, in order; `negativeSteps` for a negative adjustment. A cash step comes
    /// first, so that a record that would overdraw is refused before any lot has changed.
    public var steps: [Step]
    public var negativeSteps: [Step]
    /// What the kind does to cash as a leg of a swap (linked buy and sell), in place of its own cash step.
    public var swapLegCash: CashFlow?
    /// A short description for help: what AMOUNT and PRICE mean.
    public var arguments: String
    public var summary: String

    public func steps(negative: Bool) -> [Step] { negative ? negativeSteps : steps }

    /// The kind's cash step, if any (as a swap's leg: `swapLegCash`); `swapLeg` says whether a linked
    /// buy or sell is a swap's (a saving plan's buy is linked to its deposit and pays as any buy).
    public func cash(of t: Transaction, swapLeg: Bool? = nil) -> CashFlow? {
        if swapLeg ?? (t.linkedId != nil) && (type == .buy || type == .sell) { return swapLegCash }
        for case let .cash(flow) in steps { return flow }
        return nil
    }

    /// The money a record of the kind moved, by its first step that moves money: what its cash step
    /// spends or receives (a buy: gross plus fee; a sale: gross less fee; income: net of tax; cash: the
    /// amount), else what it acquires at (a transfer-in: gross plus fee; a reward: gross), else what a
    /// spend disposes at (gross less fee); zero for kinds without money.
    public func moneyMoved(_ t: Transaction) -> Exact36 {
        let fee = Exact36(t.feeValue ?? .zero)
        let gross = t.gross, amount = Exact36(t.amountValue)
        for step in steps {
            switch step {
            case let .cash(flow):
                switch flow {
                case .spendGrossPlusFee: return (try? gross + fee) ?? gross
                case .receiveGrossMinusFee: return (try? gross - fee) ?? gross
                case .receiveNetOfTax: return (try? amount - fee) ?? amount
                case .deposit, .withdrawal, .spendAmount: return amount
                case .spendFee: return fee
                }
            case .acquire(.grossPlusFee): return (try? gross + fee) ?? gross
            case .acquire(.gross): return gross
            case .dispose(.spend): return (try? gross - fee) ?? gross
            case .acquire(.zero), .dispose, .income, .scale, .expense: continue
            }
        }
        return .zero
    }

    /// The kind touches cash only (no asset: a deposit, a withdrawal, interest on cash).
    public func isCashOnly(_ t: Transaction) -> Bool { asset != .required && t.assetId.isEmpty }

    /// Every kind, in the order help lists them.
    public static let table: [KindRule] = [
        KindRule(type: .buy, price: .positive, takesTotal: true, fee: .money, hasCurrency: true, amountIsMoney: false,
                 signed: false, steps: [.cash(.spendGrossPlusFee), .acquire(.grossPlusFee)], negativeSteps: [],
                 arguments: "ASSET AMOUNT PRICE", summary: "units bought at a price per unit (or --total); the fee adds to the basis"),
        KindRule(type: .sell, price: .positive, takesTotal: true, fee: .money, hasCurrency: true, amountIsMoney: false,
                 signed: false, steps: [.cash(.receiveGrossMinusFee), .dispose(.sale)], negativeSteps: [], swapLegCash: .spendFee,
                 arguments: "ASSET AMOUNT PRICE", summary: "units sold at a price per unit (or --total); realizes a gain or a loss"),
        KindRule(type: .transferIn, price: .nonNegative, takesTotal: false, fee: .money, hasCurrency: true, amountIsMoney: false,
                 signed: false, steps: [.acquire(.grossPlusFee)], negativeSteps: [],
                 arguments: "ASSET AMOUNT COST", summary: "units received from elsewhere, with their cost basis per unit"),
        KindRule(type: .transferOut, price: .none, takesTotal: false, fee: .units, hasCurrency: false, amountIsMoney: false,
                 signed: false, steps: [.dispose(.transfer)], negativeSteps: [],
                 arguments: "ASSET AMOUNT", summary: "units sent elsewhere; the fee is in units (a network fee)"),
        KindRule(type: .reward, price: .nonNegative, takesTotal: false, fee: .none, hasCurrency: true, amountIsMoney: false,
                 signed: false, steps: [.acquire(.gross), .income(.value)], negativeSteps: [],
                 arguments: "ASSET AMOUNT PRICE", summary: "units earned (staking, airdrop), income at their fair value per unit"),
        KindRule(type: .dividend, price: .none, takesTotal: false, fee: .taxWithheld, hasCurrency: true, amountIsMoney: true,
                 signed: false, steps: [.cash(.receiveNetOfTax), .income(.netOfTax)], negativeSteps: [],
                 arguments: "ASSET AMOUNT", summary: "money paid out, gross; --fee is the tax withheld"),
        KindRule(type: .interest, asset: .optional, price: .none, takesTotal: false, fee: .taxWithheld, hasCurrency: true,
                 amountIsMoney: true, signed: false, steps: [.cash(.receiveNetOfTax), .income(.netOfTax)], negativeSteps: [],
                 arguments: "ASSET AMOUNT", summary: "interest or a coupon paid, gross; --fee is the tax withheld"),
        KindRule(type: .adjustment, price: .none, takesTotal: false, fee: .none, hasCurrency: false, amountIsMoney: false,
                 signed: true, steps: [.acquire(.zero)], negativeSteps: [.dispose(.loss)],
                 arguments: "ASSET QUANTITY", summary: "units found (+) at zero cost or lost (-) as a realized loss"),
        KindRule(type: .split, price: .splitDivisor, takesTotal: false, fee: .none, hasCurrency: false, amountIsMoney: false,
                 signed: false, steps: [.scale], negativeSteps: [],
                 arguments: "ASSET RATIO", summary: "new units per old unit (4, 0.5 or NEW:OLD like 1:3); the basis stays"),
        KindRule(type: .deposit, asset: .none, price: .none, takesTotal: false, fee: .none, hasCurrency: true, amountIsMoney: true,
                 signed: false, steps: [.cash(.deposit)], negativeSteps: [],
                 arguments: "AMOUNT", summary: "money paid into a portfolio that tracks cash"),
        KindRule(type: .withdrawal, asset: .none, price: .none, takesTotal: false, fee: .none, hasCurrency: true, amountIsMoney: true,
                 signed: false, steps: [.cash(.withdrawal)], negativeSteps: [],
                 arguments: "AMOUNT", summary: "money taken out of a portfolio that tracks cash"),
        KindRule(type: .spend, price: .positive, takesTotal: true, fee: .money, hasCurrency: true, amountIsMoney: false,
                 signed: false, steps: [.dispose(.spend)], negativeSteps: [],
                 arguments: "ASSET AMOUNT PRICE", summary: "units paid for goods or services at their value; realizes a gain or a loss, no cash"),
        KindRule(type: .fee, price: .none, takesTotal: false, fee: .none, hasCurrency: false, amountIsMoney: false,
                 signed: false, steps: [.dispose(.loss)], negativeSteps: [],
                 arguments: "ASSET AMOUNT", summary: "units paid as a fee on their own; their basis is a realized loss"),
        KindRule(type: .expense, asset: .none, price: .none, takesTotal: false, fee: .none, hasCurrency: true, amountIsMoney: true,
                 signed: false, steps: [.cash(.spendAmount), .expense], negativeSteps: [],
                 arguments: "AMOUNT", summary: "money paid from a portfolio's cash as a cost (an account fee): never a flow"),
    ]

    public static func of(_ type: TransactionType) -> KindRule {
        switch type {
        case .buy: table[0]
        case .sell: table[1]
        case .transferIn: table[2]
        case .transferOut: table[3]
        case .reward: table[4]
        case .dividend: table[5]
        case .interest: table[6]
        case .adjustment: table[7]
        case .split: table[8]
        case .deposit: table[9]
        case .withdrawal: table[10]
        case .spend: table[11]
        case .fee: table[12]
        case .expense: table[13]
        }
    }

    /// Whether the kind changes what is held (a dividend, interest and cash do not).
    public var movesUnits: Bool {
        steps.contains { switch $0 { case .acquire, .dispose, .scale: true; case .income, .cash, .expense: false } }
    }

    /// The first rule of a transaction's own fields it breaks, or `nil` (no replay needed).
    public func brokenRule(_ t: Transaction) -> StoreProblem.Rule? {
        switch asset {
        case .required: if t.assetId.isEmpty { return .assetMissing }
        case .none: if !t.assetId.isEmpty { return .assetGiven }
        case .optional: break
        }
        if t.amountValue.units == 0 { return .amountNotPositive }
        if t.negative && !signed { return .amountNotPositive }
        switch price {
        case .positive:
            if let p = t.priceValue { if p.units == 0 { return .priceNotPositive } } else if t.totalValue == nil { return .priceMissing }
            if let total = t.totalValue, total.units == 0 { return .priceNotPositive }
        case .nonNegative:
            if t.priceValue == nil && t.linkedId == nil { return .priceMissing }
        case .splitDivisor:
            if let p = t.priceValue, p.units == 0 { return .priceNotPositive }
        case .none: break
        }
        if fee == .taxWithheld, let f = t.feeValue, f > t.amountValue { return .taxAboveGross }
        return nil
    }
}
