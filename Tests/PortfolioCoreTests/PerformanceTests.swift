import Foundation
import Testing
@testable import PortfolioCore

/// Value over time and performance (`history-performance.md`): worked example M to the cent and
/// to 0.01 percentage points, the flows of each kind of portfolio, periods, partial rows, and the
/// IRR against hledger's published cases and an independent solver.
@Suite struct PerformanceTests {
    static let utc = TimeZone(identifier: "UTC")!

    static func quote(_ asset: String, _ price: String, on date: String, currency: String = "USD") -> Quote {
        Quote(coinId: asset, price: dec(price), time: day(date), source: .manual, currency: currency)
    }

    /// A timeline of `records` in `portfolios` (all chosen), with `quotes` and `rates`, at `now`.
    static func timeline(_ records: [Transaction], portfolios: [Portfolio] = [Portfolio(name: "main")], quotes: [Quote],
                         rates: [FXRate] = [], assets: [Asset] = [], currency: String = "USD", now: String,
                         chosen: Set<String>? = nil) -> ValueTimeline {
        var book = Book(transactions: records, portfolios: portfolios, assets: assets, defaultPortfolio: portfolios[0].name)
        book.fxRates = rates
        var options = book.ledgerOptions
        options.keepingChanges = true
        let checked = book.checked(now: day(now), options: options)
        #expect(checked.problems.isEmpty, "\(checked.problems)")
        var info: [String: ValueTimeline.PortfolioInfo] = [:]
        for p in portfolios where chosen?.contains(p.name) ?? true {
            info[p.name] = ValueTimeline.PortfolioInfo(baseCurrency: p.baseCurrency, tracksCash: p.trackCash)
        }
        return ValueTimeline(changes: checked.ledger.changes, portfolios: info, prices: PriceBook(manual: quotes), fxRates: rates,
                             currency: currency, timeZone: utc, now: day(now))
    }

    static func money(_ v: Exact36?) -> String? { v.map { $0.fixed(scale: 2) } }

    /// Within 0.01 percentage points of `expected` (a percentage).
    static func close(_ fraction: Double?, _ expected: Double, within points: Double = 0.01) -> Bool {
        guard let fraction else { return false }
        return abs(fraction * 100 - expected) < points
    }

    static func d(_ text: String) -> LocalDay { LocalDay(day(text), in: utc) }

    // MARK: Worked example M

    static let exampleM = [
        record(.buy, "bitcoin", "1", price: "40000", fee: "0", on: "2024-01-01"),
        record(.buy, "bitcoin", "1", price: "50000", fee: "0", on: "2024-07-01"),
    ]
    static let exampleMQuotes = [
        quote("bitcoin", "40000", on: "2024-01-01"), quote("bitcoin", "45000", on: "2024-06-30"),
        quote("bitcoin", "50000", on: "2024-07-01"), quote("bitcoin", "60000", on: "2024-12-31"),
    ]

    @Test func exampleM() {
        let t = Self.timeline(Self.exampleM, quotes: Self.exampleMQuotes, now: "2025-02-01T12:00:00Z")
        let p = t.performance(since: Self.d("2024-01-01"), until: Self.d("2024-12-31"))
        #expect(p.days == 366)
        #expect(Self.money(p.startValue) == "0.00")
        #expect(Self.money(p.endValue) == "120000.00")
        #expect(Self.money(p.netFlows) == "90000.00")
        #expect(Self.money(p.gain) == "30000.00")
        // 1.125 × 100000/95000 × 1.2 − 1
        #expect(Self.close(p.twr, 42.1053), "\(String(describing: p.twr))")
        #expect(Self.close(p.irr, 47.69), "\(String(describing: p.irr))")
        #expect(p.twrAnnualized == nil, "366 days is not more than 366")
        #expect(p.flows.map(\.date.description) == ["2024-01-01", "2024-07-01"])
        #expect(p.flows.map { Self.money($0.amount) } == ["40000.00", "50000.00"])
        #expect(p.flows.map(\.kind) == [.buy, .buy])
        #expect(p.partialDays == 0)
        // The same by its calendar year, and by max (the first transaction's day to today).
        #expect(Self.close(t.performance(.year(2024)).twr, 42.1053))
        let max = t.performance(.max)
        #expect(max.since.description == "2024-01-01" && max.until.description == "2025-02-01")
        #expect(max.days == 398)
        #expect(max.twrAnnualized != nil)
        #expect(t.calendarYears == [2024, 2025])
    }

    @Test func exampleMHistory() {
        let t = Self.timeline(Self.exampleM, quotes: Self.exampleMQuotes, now: "2025-01-15T12:00:00Z")
        let h = t.history(interval: .month)
        #expect(h.rows.map(\.date.description) == [
            "2024-01-31", "2024-02-29", "2024-03-31", "2024-04-30", "2024-05-31", "2024-06-30", "2024-07-31", "2024-08-31",
            "2024-09-30", "2024-10-31", "2024-11-30", "2024-12-31", "2025-01-15",
        ])
        #expect(h.rows.map { Self.money($0.totalValue) ?? "" } == [
            "40000.00", "40000.00", "40000.00", "40000.00", "40000.00", "45000.00", "100000.00", "100000.00", "100000.00",
            "100000.00", "100000.00", "120000.00", "120000.00",
        ])
        #expect(h.rows.map { Self.money($0.netInvested) ?? "" }.prefix(7) == ["40000.00", "40000.00", "40000.00", "40000.00",
                                                                            "40000.00", "40000.00", "90000.00"])
        #expect(h.rows.last.map { Self.money($0.pnl) } == "30000.00")
        #expect(h.rows.allSatisfy { $0.cash == nil && !$0.partial })
    }

    // MARK: TWR

    @Test func sellingEverythingIsNotAHundredPercentLoss() {
        let records = [
            record(.buy, "bitcoin", "1", price: "100", fee: "0", on: "2024-01-01"),
            record(.sell, "bitcoin", "1", price: "110", fee: "0", on: "2024-01-02"),
        ]
        let t = Self.timeline(records, quotes: [Self.quote("bitcoin", "100", on: "2024-01-01"), Self.quote("bitcoin", "110", on: "2024-01-02")],
                              now: "2024-01-10T00:00:00Z")
        let p = t.performance(since: Self.d("2024-01-01"), until: Self.d("2024-01-10"))
        #expect(Self.close(p.twr, 10), "\(String(describing: p.twr))")
        #expect(Self.money(p.endValue) == "0.00")
        #expect(Self.money(p.gain) == "10.00")
        #expect(p.flows.map { Self.money($0.amount) } == ["100.00", "-110.00"])
        #expect(p.flows.map(\.kind) == [.buy, .sell])
    }

    @Test func twrAnnualizedBeyond366Days() {
        let days = [ReturnMath.Day(value: 100, inflow: 100, outflow: 0)] + Array(repeating: ReturnMath.Day(value: 100, inflow: 0, outflow: 0), count: 400)
            + [ReturnMath.Day(value: 121, inflow: 0, outflow: 0)]
        let twr = ReturnMath.timeWeighted(start: 0, days: days)
        #expect(Self.close(twr, 21))
        #expect(ReturnMath.annualized(0.21, days: 366) == nil)
        #expect(Self.close(ReturnMath.annualized(0.21, days: 730), (pow(1.21, 365.0 / 730) - 1) * 100, within: 1e-9))
    }

    // MARK: Flows

    @Test func aCashPortfolioCountsDepositsWithdrawalsAndTransfers() {
        let p = [Portfolio(name: "brokerage", trackCash: true)]
        func r(_ type: TransactionType, _ asset: String, _ amount: String, price: String? = nil, fee: String? = nil, on date: String) -> Transaction {
            record(type, asset, amount, price: price, fee: fee, on: date, portfolio: "brokerage")
        }
        var records = [
            r(.deposit, "", "10000", on: "2024-01-01"),
            r(.buy, "AAPL", "10", price: "180", fee: "1", on: "2024-01-02"),
            r(.dividend, "AAPL", "2.40", fee: "0.36", on: "2024-02-15"),
            r(.withdrawal, "", "1000", on: "2024-03-01"),
            r(.interest, "", "12.50", fee: "0", on: "2024-03-02"),
            r(.sell, "AAPL", "5", price: "190", fee: "1", on: "2024-04-01"),
            r(.transferIn, "bitcoin", "1", price: "30000", fee: "0", on: "2024-05-01"),
            r(.transferOut, "bitcoin", "0.5", fee: "0", on: "2024-05-02"),
        ]
        records[6].currency = "USD"
        let apple = Asset(id: "AAPL", name: "Apple", type: .stock, createdDate: day("2023-01-01"))
        let t = Self.timeline(records, portfolios: p, quotes: [
            Self.quote("AAPL", "200", on: "2024-01-02"), Self.quote("bitcoin", "60000", on: "2024-04-30"),
            Self.quote("bitcoin", "62000", on: "2024-05-02"),
        ], assets: [apple], now: "2024-06-01T12:00:00Z")
        let flows = t.flows()
        #expect(flows.map(\.kind) == [.deposit, .withdrawal, .transferIn, .transferOut])
        #expect(flows.map { Self.money($0.amount) } == ["10000.00", "-1000.00", "60000.00", "-31000.00"])
        let last = t.history(interval: .month).rows.last
        // Cash: 10000 − 1801 + 2.04 − 1000 + 12.50 + 949 = 8162.54; 5 AAPL at 200; 0.5 BTC at 62000.
        #expect(Self.money(last?.cash) == "8162.54")
        #expect(Self.money(last?.holdingsValue) == "32000.00")
        #expect(Self.money(last?.totalValue) == "40162.54")
        #expect(Self.money(last?.netInvested) == "38000.00")
        #expect(Self.money(last?.pnl) == "2162.54")
    }

    @Test func aPortfolioWithoutCashCountsTradesIncomeAndSwapFees() {
        var records = [
            record(.buy, "bitcoin", "1", price: "100", fee: "2", on: "2024-01-01"),
            record(.dividend, "AAPL", "10", fee: "1", on: "2024-01-03"),
            record(.reward, "bitcoin", "0.1", price: "100", on: "2024-01-04"),
            record(.sell, "bitcoin", "0.5", price: "120", fee: "1", on: "2024-01-05"),
            record(.transferIn, "ethereum", "2", price: "10", fee: "0", on: "2024-01-06"),
        ]
        records.insert(record(.buy, "AAPL", "1", price: "50", fee: "0", on: "2024-01-02"), at: 1)
        records += swapLegs("bitcoin", "0.1", "solana", "3", value: "12", fee: "0.5", on: "2024-01-07")
        let apple = Asset(id: "AAPL", name: "Apple", type: .stock, createdDate: day("2023-01-01"))
        let t = Self.timeline(records, quotes: [Self.quote("bitcoin", "100", on: "2024-01-01")], assets: [apple],
                              now: "2024-01-10T00:00:00Z")
        let flows = t.flows()
        #expect(flows.map(\.kind) == [.buy, .buy, .dividend, .sell, .transferIn, .swapFee])
        // The transfer-in has no quote: its basis (2 × 10).
        #expect(flows.map { Self.money($0.amount) } == ["102.00", "50.00", "-9.00", "-59.00", "20.00", "0.50"])
        #expect(flows.map(\.atBasis) == [false, false, false, false, true, false])
        // ETH, SOL and AAPL have no quote: the rows are partial.
        let rows = t.history(interval: .day).rows
        #expect(rows.first?.partial == false)
        #expect(rows.last?.partial == true)
        #expect(t.history(interval: .day).unpriced == ["AAPL", "ethereum", "solana"])
    }

    @Test func aMoveBetweenTwoChosenPortfoliosNetsToNothing() {
        let records = [record(.buy, "bitcoin", "1", price: "100", fee: "0", on: "2024-01-01")]
            + moveLegs("bitcoin", "0.4", from: "main", to: "trading", on: "2024-01-02")
        let portfolios = [Portfolio(name: "main"), Portfolio(name: "trading")]
        let quotes = [Self.quote("bitcoin", "100", on: "2024-01-01"), Self.quote("bitcoin", "150", on: "2024-01-02")]
        let all = Self.timeline(records, portfolios: portfolios, quotes: quotes, now: "2024-01-05T00:00:00Z")
        #expect(all.flows().map { Self.money($0.amount) } == ["100.00", "-60.00", "60.00"])
        #expect(Self.money(all.history(interval: .day).rows.last?.netInvested) == "100.00")
        let trading = Self.timeline(records, portfolios: portfolios, quotes: quotes, now: "2024-01-05T00:00:00Z", chosen: ["trading"])
        #expect(trading.flows().map { Self.money($0.amount) } == ["60.00"])
        #expect(trading.firstDay?.description == "2024-01-02")
    }

    @Test func valuesConvertAtEachDaysRate() {
        // A EUR portfolio holding a coin priced in USD: each day's value at that day's USD→EUR rate.
        var buy = record(.buy, "bitcoin", "1", price: "100", fee: "0", on: "2024-01-01", portfolio: "eu")
        buy.currency = "USD"
        buy.fxRateValue = fixed("0.9")
        let rates = [FXRate(from: "USD", to: "EUR", rate: fixed("0.9"), date: day("2024-01-01")),
                     FXRate(from: "EUR", to: "USD", rate: fixed("1.25"), date: day("2024-01-03"))]
        let t = Self.timeline([buy], portfolios: [Portfolio(name: "eu", baseCurrency: "EUR")],
                              quotes: [Self.quote("bitcoin", "100", on: "2024-01-01")], rates: rates, currency: "EUR",
                              now: "2024-01-04T00:00:00Z", chosen: nil)
        let rows = t.history(interval: .day).rows
        #expect(rows.map { Self.money($0.totalValue) ?? "" } == ["90.00", "90.00", "80.00", "80.00"])
        #expect(rows.map { Self.money($0.netInvested) ?? "" } == ["90.00", "90.00", "90.00", "90.00"])
    }

    @Test func aFlowWithoutARateMakesTheRowsPartial() {
        // A EUR portfolio shown in USD with no EUR→USD rate until day 3: its buy cannot be counted
        // in USD, so net invested lacks it and every row says so.
        let eu = Portfolio(name: "eu", baseCurrency: "EUR")
        var buy = record(.buy, "bitcoin", "1", price: "100", fee: "0", on: "2024-01-01", portfolio: "eu")
        buy.currency = "EUR"
        let t = Self.timeline([buy], portfolios: [Portfolio(name: "main"), eu],
                              quotes: [Self.quote("bitcoin", "110", on: "2024-01-01")],
                              rates: [FXRate(from: "EUR", to: "USD", rate: fixed("1.1"), date: day("2024-01-03"))], currency: "USD",
                              now: "2024-01-04T00:00:00Z")
        let rows = t.history(interval: .day).rows
        #expect(rows.map(\.partial) == [true, true, true, true])
        #expect(rows.map { Self.money($0.netInvested) ?? "" } == ["0.00", "0.00", "0.00", "0.00"])
        #expect(rows.map { Self.money($0.totalValue) ?? "" } == ["110.00", "110.00", "110.00", "110.00"])
        #expect(t.history(interval: .day).unpriced == ["EUR→USD"])
    }

    // MARK: Rows and periods

    @Test func weeksEndOnSundayAndMonthsOnTheirLastDay() {
        // 2024-06-01 is a Saturday.
        #expect(HistoryInterval.week.periodEnds(from: Self.d("2024-06-01"), through: Self.d("2024-06-20")).map(\.description)
            == ["2024-06-02", "2024-06-09", "2024-06-16", "2024-06-20"])
        #expect(HistoryInterval.week.periodEnds(from: Self.d("2024-06-02"), through: Self.d("2024-06-09")).map(\.description)
            == ["2024-06-02", "2024-06-09"])
        #expect(HistoryInterval.month.periodEnds(from: Self.d("2023-12-15"), through: Self.d("2024-03-31")).map(\.description)
            == ["2023-12-31", "2024-01-31", "2024-02-29", "2024-03-31"])
        #expect(HistoryInterval.month.periodEnds(from: Self.d("2100-02-01"), through: Self.d("2100-03-02")).map(\.description)
            == ["2100-02-28", "2100-03-02"])
        #expect(HistoryInterval.day.periodEnds(from: Self.d("2024-02-28"), through: Self.d("2024-03-01")).count == 3)
        #expect(Self.d("2024-06-02").weekday == 7)
        #expect(Self.d("1970-01-01").weekday == 4)
        #expect(Self.d("1969-12-28").weekday == 7)
    }

    @Test func periods() {
        let today = Self.d("2024-06-01"), first = Self.d("2021-03-15")
        func days(_ p: PerformancePeriod) -> String {
            let (s, u) = p.days(today: today, firstTransaction: first)
            return "\(s) \(u)"
        }
        #expect(days(.ytd) == "2024-01-01 2024-06-01")
        #expect(days(.years(1)) == "2023-06-02 2024-06-01")
        #expect(days(.years(3)) == "2021-06-02 2024-06-01")
        #expect(days(.max) == "2021-03-15 2024-06-01")
        #expect(days(.year(2023)) == "2023-01-01 2023-12-31")
        #expect(days(.year(2024)) == "2024-01-01 2024-06-01")
        #expect(days(.range(since: Self.d("2022-01-01"), until: Self.d("2030-01-01"))) == "2022-01-01 2024-06-01")
        #expect(days(.range(since: nil, until: Self.d("2022-01-01"))) == "2021-03-15 2022-01-01")
        // One year back from a leap day.
        #expect(PerformancePeriod.years(1).days(today: Self.d("2024-02-29"), firstTransaction: nil).since.description == "2023-03-01")
        #expect(PerformancePeriod.max.days(today: today, firstTransaction: nil).since == today)
    }

    @Test func netInvestedCountsFlowsBeforeSinceAndRowsEndAtUntil() {
        let t = Self.timeline(Self.exampleM, quotes: Self.exampleMQuotes, now: "2025-01-15T12:00:00Z")
        let h = t.history(interval: .month, since: Self.d("2024-08-10"), until: Self.d("2024-10-15"))
        #expect(h.rows.map(\.date.description) == ["2024-08-31", "2024-09-30", "2024-10-15"])
        #expect(h.rows.allSatisfy { Self.money($0.netInvested) == "90000.00" })
        #expect(t.history(interval: .week, until: Self.d("2023-12-31")).rows.isEmpty, "before the first transaction")
        #expect(t.history(interval: .day, since: Self.d("2023-12-30"), until: Self.d("2024-01-02")).rows.map(\.date.description)
            == ["2024-01-01", "2024-01-02"])
    }

    @Test func partialRowsLeaveOutWhatHasNoQuoteYet() {
        let records = [
            record(.buy, "bitcoin", "1", price: "100", fee: "0", on: "2024-01-01"),
            record(.buy, "ethereum", "2", price: "10", fee: "0", on: "2024-01-02"),
        ]
        let t = Self.timeline(records, quotes: [Self.quote("bitcoin", "100", on: "2024-01-01"), Self.quote("ethereum", "11", on: "2024-01-04")],
                              now: "2024-01-05T00:00:00Z")
        let rows = t.history(interval: .day).rows
        #expect(rows.map(\.partial) == [false, true, true, false, false])
        #expect(rows.map { Self.money($0.holdingsValue) ?? "" } == ["100.00", "100.00", "100.00", "122.00", "122.00"])
        let p = t.performance(.max)
        #expect(p.partialDays == 2)
        #expect(p.unpriced == ["ethereum"])
    }

    @Test func daysWithoutAPriceAreBridgedInTheTWR() {
        // Cash pays for ETH that has no price until day 4, money comes in on day 3; nothing moves:
        // the return is 0%, not a −40% day and a +25% one.
        let p = [Portfolio(name: "brokerage", trackCash: true)]
        let records = [
            record(.deposit, "", "100", on: "2024-01-01", portfolio: "brokerage"),
            record(.buy, "ethereum", "1", price: "40", fee: "0", on: "2024-01-02", portfolio: "brokerage"),
            record(.deposit, "", "100", on: "2024-01-03", portfolio: "brokerage"),
        ]
        let t = Self.timeline(records, portfolios: p, quotes: [Self.quote("ethereum", "40", on: "2024-01-04")], now: "2024-01-05T00:00:00Z")
        let r = t.performance(.max)
        #expect(r.partialDays == 2)
        #expect(Self.close(r.twr, 0), "\(String(describing: r.twr))")
        #expect(Self.close(r.irr, 0))
        #expect(Self.money(r.gain) == "0.00")
    }

    @Test func emptyPortfolio() {
        let t = Self.timeline([], quotes: [], now: "2024-01-05T00:00:00Z")
        #expect(t.history(interval: .month).rows.isEmpty)
        let p = t.performance(.max)
        #expect(p.days == 1 && p.twr == 0 && p.irr == 0 && p.flows.isEmpty)
    }

    // MARK: IRR

    /// hledger's published `roi` cases (test/roi.test): a start value, flows (day, amount), an end value after `endDays`.
    @Test(arguments: [
        ("12% over 2017", 0.0, [(0, 100.0)], 112.0, 365, 12.00),
        ("100 + 100 become 220", 0.0, [(0, 100.0), (151, 100.0)], 220.0, 365, 12.72),
        ("100 + 100 become 20", 0.0, [(0, 100.0), (151, 100.0)], 20.0, 365, -95.73),
        ("second quarter", 100.0, [], 110.0, 91, 46.56),
        ("fourth quarter with a withdrawal", 210.0, [(0, -50.0)], 155.0, 92, -11.83),
        ("June to December", 100.0, [(30, 100.0), (122, -50.0)], 155.0, 214, 5.24),
        ("no return", 0.0, [(0, 100.0), (151, 100.0)], 200.0, 365, 0.00),
    ] as [(String, Double, [(Int, Double)], Double, Int, Double)])
    func hledgerRoiCases(name: String, start: Double, flows: [(Int, Double)], end: Double, endDays: Int, percent: Double) {
        let irr = ReturnMath.internalRate(start: start, flows: flows.map { (days: $0.0, amount: $0.1) }, end: end, endDays: endDays)
        #expect(Self.close(irr, percent, within: 0.005), "\(name): \(String(describing: irr))")
    }

    @Test func hledgerCaseTwoThroughTheTimeline() {
        let t = Self.timeline([record(.buy, "bitcoin", "1", price: "100", fee: "0", on: "2017-01-01")],
                              quotes: [Self.quote("bitcoin", "100", on: "2017-01-01"), Self.quote("bitcoin", "112", on: "2017-12-31")],
                              now: "2018-03-01T00:00:00Z")
        let p = t.performance(.year(2017))
        #expect(Self.close(p.irr, 12.00))
        #expect(Self.close(p.twr, 12.00))
    }

    /// A deliberately plain solver: bisection on r over [-0.99, 100] with `pow`, 200 halvings.
    static func plainIRR(start: Double, flows: [(days: Int, amount: Double)], end: Double, endDays: Int) -> Double? {
        func npv(_ r: Double) -> Double {
            var v = -start
            for f in flows { v -= f.amount / pow(1 + r, Double(f.days) / 365) }
            return v + end / pow(1 + r, Double(endDays) / 365)
        }
        var lo = -0.99, hi = 100.0
        var flo = npv(lo)
        guard (flo < 0) != (npv(hi) < 0) else { return nil }
        for _ in 0..<200 {
            let mid = (lo + hi) / 2
            let fm = npv(mid)
            if (fm < 0) == (flo < 0) { lo = mid; flo = fm } else { hi = mid }
        }
        return (lo + hi) / 2
    }

    @Test func irrAgreesWithAPlainBisectionOnRandomFlows() {
        var g = SplitMix64(seed: 20_241_124)
        var compared = 0, rooted = 0
        for round in 0..<400 {
            let endDays = 30 + g.below(2000)
            let start = g.below(3) == 0 ? 0 : Double(g.below(100_000))
            // An end value from a plausible yearly return between −60% and +150%.
            let rate = Double(g.below(2100)) / 1000 - 0.6
            func grown(_ amount: Double, from day: Int) -> Double { amount * pow(1 + rate, Double(endDays - day) / 365) }
            var days = (0..<(1 + g.below(12))).map { _ in g.below(endDays) }
            days.sort()
            // Every other round only money in (one sign change: exactly one rate solves it); else some out
            // too, never more than the portfolio holds at that rate.
            let conventional = round % 2 == 0
            var flows: [(days: Int, amount: Double)] = []
            for d in days {
                let held = grown(start, from: 0) / pow(1 + rate, Double(endDays - d) / 365)
                    + flows.reduce(0) { $0 + grown($1.amount, from: $1.days) } / pow(1 + rate, Double(endDays - d) / 365)
                let out = !conventional && g.below(3) == 0 && held > 2
                flows.append((d, out ? -Double(g.below(Int(held / 2)) + 1) : Double(g.below(50_000) + 1)))
            }
            let end = max(0, grown(start, from: 0) + flows.reduce(0) { $0 + grown($1.amount, from: $1.days) })
            guard let mine = ReturnMath.internalRate(start: start, flows: flows, end: end, endDays: endDays) else {
                Issue.record("no rate for start \(start) flows \(flows) end \(end) over \(endDays)")
                continue
            }
            // Whatever the flows, what it returns solves the equation.
            var npv = -start + end / pow(1 + mine, Double(endDays) / 365)
            for f in flows { npv -= f.amount / pow(1 + mine, Double(f.days) / 365) }
            let scale = start + end + flows.reduce(0) { $0 + abs($1.amount) }
            #expect(abs(npv) <= 1e-7 * scale, "npv \(npv) at \(mine)")
            rooted += 1
            guard conventional, let plain = Self.plainIRR(start: start, flows: flows, end: end, endDays: endDays) else { continue }
            compared += 1
            #expect(Self.close(mine, plain * 100), "start \(start) flows \(flows) end \(end) over \(endDays): \(mine) vs \(plain)")
            #expect(Self.close(mine, rate * 100), "the rate the end value was grown at")
        }
        #expect(compared > 150 && rooted > 350)
    }

    @Test func irrWithoutASolutionIsNil() {
        // Money in, nothing ever back, a value that only grows from nothing: no rate makes it zero.
        #expect(ReturnMath.internalRate(start: 0, flows: [(0, -100)], end: 50, endDays: 365) == nil)
        #expect(ReturnMath.internalRate(start: 0, flows: [], end: 0, endDays: 10) == 0)
        // A day's loss of 99.5%, as a year's rate: as near −100% as a Double gets, not "none".
        #expect(Self.close(ReturnMath.internalRate(start: 0, flows: [(0, 100)], end: 0.5, endDays: 1), -100))
        // A day's gain of 1%: (1.01)^365 − 1.
        #expect(Self.close(ReturnMath.internalRate(start: 0, flows: [(0, 100)], end: 101, endDays: 1), (pow(1.01, 365) - 1) * 100, within: 1e-6 * pow(1.01, 365) * 100))
    }

    @Test func exactDecimalsBecomeFixedWithoutText() {
        for text in ["42000", "0.00001234", "97250.5", "1", "123456789012345678.123456789012345678", "0.000000000000000001"] {
            #expect(Fixed18.exactly(dec(text)) == fixed(text), "\(text)")
        }
        #expect(Fixed18.exactly(dec("0.0000000000000000001")) == nil, "19 decimals")
        #expect(Fixed18.exactly(-dec("5")) == nil)
        #expect(Fixed18.exactly(Decimal(0)) == .zero)
    }
}

/// The price history's fast reader reads every file to the very quotes `PriceCache.load()` does,
/// and leaves every file it does not take to it.
@Suite struct PriceHistoryReaderTests {
    func written(_ quotes: [Quote]) throws -> PriceCache {
        let cache = PriceCache(directory: scratchDirectory())
        try FileSystem.writeAtomically(PriceCache.encode(quotes), to: cache.path)
        return cache
    }

    @Test func readsWhatTheCanonicalReaderReads() throws {
        var g = SplitMix64(seed: 7)
        var quotes: [Quote] = []
        for i in 0..<500 {
            let coin = ["bitcoin", "ethereum", "fx:USD/EUR", "AAPL"][g.below(4)]
            let price = dec("\(g.below(100_000) + 1).\(g.below(100))")
            quotes.append(Quote(coinId: coin, price: price, change24h: g.below(2) == 0 ? nil : -dec("1.5"),
                                marketCap: g.below(2) == 0 ? nil : dec("123456789012"), time: day("2024-01-01").addingTimeInterval(Double(i) * 3600),
                                sourceUpdatedAt: g.below(2) == 0 ? nil : day("2024-01-01"), source: g.below(3) == 0 ? .manual : .coingecko,
                                currency: ["USD", "EUR", "JPY"][g.below(3)]))
        }
        let cache = try written(quotes)
        defer { try? FileManager.default.removeItem(atPath: cache.directory) }
        let fast = try cache.loadHistory(), canonical = try cache.load()
        #expect(fast == canonical)
        #expect(fast.count == 500)
        #expect(PriceHistoryReader.read(try #require(try FileSystem.readBuffer(cache.path))) != nil, "the fast path took it")
    }

    @Test func leavesTheUnusualToTheCanonicalReader() throws {
        // A price with more than 18 decimals: the canonical reader keeps it exactly.
        let tiny = Quote(coinId: "shiba-inu", price: dec("0.0000000000000000001234"), time: day("2024-01-01"), source: .coingecko)
        let cache = try written([tiny])
        defer { try? FileManager.default.removeItem(atPath: cache.directory) }
        #expect(PriceHistoryReader.read(try #require(try FileSystem.readBuffer(cache.path))) == nil)
        #expect(try cache.loadHistory() == [tiny])
        // A broken file fails with the canonical reader's error.
        try FileSystem.writeAtomically(Array(#"{"format": "bitpal-prices", "version": 1, "quotes": [{"coinId": "x", "price": "0", "time": "2024-01-01T00:00:00Z"}]}"#.utf8),
                                       to: cache.path)
        var fastError: StoreError?, canonicalError: StoreError?
        do { _ = try cache.loadHistory() } catch { fastError = error }
        do { _ = try cache.load() } catch { canonicalError = error }
        #expect(fastError != nil && fastError == canonicalError)
        // A newer version is refused by the canonical reader, not read here.
        try FileSystem.writeAtomically(Array(#"{"format": "bitpal-prices", "version": 9, "quotes": []}"#.utf8), to: cache.path)
        #expect(throws: StoreError.self) { _ = try cache.loadHistory() }
    }
}
