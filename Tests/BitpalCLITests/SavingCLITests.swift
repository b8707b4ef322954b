import BitpalCLI
import Foundation
import PortfolioCore
import XCTest

/// Saving plans (allocation-plans.md, "Regular saving plans"): due dates, `saving run` exactly once,
/// catch-up, waiting dates and their exit codes, manual plans, every refusal.
final class SavingCLITests: FakeServiceTestCase {
    private func day(_ text: String) -> Int64 { ISODate.dayNumber(ofDay: text) ?? -1 }

    private func json(_ r: CLIResult) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any], r.description)
    }

    private func plans(_ s: Sandbox) throws -> [[String: Any]] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(s.ok(["saving", "list", "--json"]).out.utf8)) as? [[String: Any]])
    }

    func testDueDatesClampMonthEndsFromTheStartDay() {
        let monthly = SavingPlan(name: "m", portfolio: "main", assetId: "bitcoin", amount: Fixed18(units: Fixed18.scale), frequency: .month,
                                 startDay: day("2024-01-31"))
        XCTAssertEqual((0..<6).map { ISODate.dayText(monthly.occurrence($0)) },
                       ["2024-01-31", "2024-02-29", "2024-03-31", "2024-04-30", "2024-05-31", "2024-06-30"])
        XCTAssertEqual(ISODate.dayText(monthly.due(after: day("2024-02-29"))), "2024-03-31")
        XCTAssertEqual(ISODate.dayText(monthly.firstDue(onOrAfter: day("2024-02-15"))), "2024-02-29")
        XCTAssertEqual(ISODate.dayText(monthly.firstDue(onOrAfter: day("2024-03-01"))), "2024-03-31")
        XCTAssertEqual(ISODate.dayText(monthly.firstDue(onOrAfter: day("2023-12-01"))), "2024-01-31")
        var leap = monthly
        leap.startDay = day("2023-12-31")
        XCTAssertEqual((0..<3).map { ISODate.dayText(leap.occurrence($0)) }, ["2023-12-31", "2024-01-31", "2024-02-29"])
        var weekly = monthly
        weekly.frequency = .week
        XCTAssertEqual(ISODate.dayText(weekly.firstDue(onOrAfter: day("2024-02-01"))), "2024-02-07")
        XCTAssertEqual(ISODate.dayText(weekly.firstDue(onOrAfter: day("2024-02-07"))), "2024-02-07")
        weekly.frequency = .twoWeeks
        XCTAssertEqual(ISODate.dayText(weekly.due(after: day("2024-01-31"))), "2024-02-14")
        XCTAssertEqual(ISODate.dayText(weekly.firstDue(onOrAfter: day("2024-02-15"))), "2024-02-28")
        weekly.frequency = .day
        XCTAssertEqual(weekly.openDays(through: day("2024-02-03")).map(ISODate.dayText), ["2024-01-31", "2024-02-01", "2024-02-02", "2024-02-03"])
    }

    func testUnitsAreTheTotalOverThePriceRoundedDown() throws {
        let plan = SavingPlan(name: "w", portfolio: "main", assetId: "bitcoin", amount: try XCTUnwrap(Fixed18.parse(utf8: "100".utf8)),
                              fee: try XCTUnwrap(Fixed18.parse(utf8: "1".utf8)), frequency: .week, startDay: 0)
        XCTAssertEqual(plan.total.text, "99")
        // 99 / 62900 = 0.001573926868044515|10…; and 2/3 = 0.666…6|66 (down, not half-up).
        XCTAssertEqual(plan.units(at: try XCTUnwrap(Fixed18.parse(utf8: "62900".utf8)))?.text, "0.001573926868044515")
        var two = plan
        two.amount = try XCTUnwrap(Fixed18.parse(utf8: "2".utf8))
        two.fee = .zero
        XCTAssertEqual(two.units(at: try XCTUnwrap(Fixed18.parse(utf8: "3".utf8)))?.text, "0.666666666666666666")
    }

    /// The machine was off for a month: every missed date is recorded at its own date's price, once.
    func testCatchUpRecordsEveryMissedDateAtItsOwnPriceOnce() throws {
        let s = Sandbox()  // 2024-06-01 12:00 UTC, offline
        s.ok(["saving", "add", "weekly-btc", "--asset", "btc", "--amount", "100", "--fee", "1", "--every", "week", "--start", "2024-05-04"])
        let prices = ["2024-05-04": "60000", "2024-05-11": "62000", "2024-05-18": "64000", "2024-05-25": "55000", "2024-06-01": "66000"]
        for (d, p) in prices { s.ok(["price", "set", "btc", p, "--date", d]) }
        let dry = s.run(["saving", "run", "--dry-run"])
        XCTAssertEqual(dry.code, .success, dry.description)
        XCTAssertTrue(dry.out.hasPrefix("Would record 2024-05-04 weekly-btc: bought 0.00165 BTC for $99.00 at $60,000.00 + fee $1.00"), dry.out)
        XCTAssertEqual(try s.run(["list", "--json"]).out.contains("saving plan"), false)
        let run = try json(s.run(["saving", "run", "--json"]))
        let recorded = try XCTUnwrap(run["recorded"] as? [[String: Any]])
        XCTAssertEqual(recorded.map { $0["date"] as? String }, ["2024-05-04", "2024-05-11", "2024-05-18", "2024-05-25", "2024-06-01"])
        XCTAssertEqual(recorded.map { $0["price"] as? String }, ["60000", "62000", "64000", "55000", "66000"])
        XCTAssertEqual(recorded.map { $0["amount"] as? String },
                       ["0.00165", "0.001596774193548387", "0.001546875", "0.0018", "0.0015"])
        XCTAssertEqual(Set(recorded.map { $0["total"] as? String }), ["99"])
        XCTAssertEqual((run["waiting"] as? [Any])?.count, 0)
        // Each buy is dated its due date at 00:00 local, with the plan's note.
        let book = try PortfolioStore(directory: s.dir).load()
        XCTAssertEqual(book.transactions.map { ISODate.format($0.date) }.sorted().first, "2024-05-04T00:00:00Z")
        XCTAssertEqual(Set(book.transactions.compactMap(\.notes)), ["saving plan weekly-btc"])
        XCTAssertEqual(Set(book.transactions.compactMap(\.feeValue?.text)), ["1"])
        // Repeated: nothing more.
        XCTAssertEqual(s.run(["saving", "run"], terminal: true).out, "Nothing is due.\n")
        XCTAssertEqual(try PortfolioStore(directory: s.dir).load().transactions.count, 5)
        let plan = try XCTUnwrap(try plans(s).first)
        XCTAssertEqual(plan["nextDueDate"] as? String, "2024-06-08")
        XCTAssertEqual(plan["lastExecuted"] as? String, "2024-06-01")
        XCTAssertEqual(plan["startDate"] as? String, "2024-05-04")
        XCTAssertEqual(plan["frequency"] as? String, "week")
        XCTAssertEqual(plan["method"] as? String, "automatic")
        XCTAssertEqual(plan["from"] as? String, "outside")
        XCTAssertEqual(plan["amount"] as? String, "100")
        XCTAssertEqual(plan["active"] as? Bool, true)
    }

    /// A date without a usable price waits (exit 1, the plan stays there) while other plans run; a
    /// later run records it once the price is known.
    func testADateWithoutAPriceWaitsAndALaterRunRecordsIt() throws {
        let s = Sandbox()
        s.ok(["asset", "add", "VWCE", "--name", "FTSE All-World", "--type", "etf", "--currency", "USD"])
        s.ok(["saving", "add", "etf", "--asset", "VWCE", "--amount", "500", "--every", "month", "--start", "2024-04-30"])
        s.ok(["saving", "add", "btc", "--asset", "bitcoin", "--amount", "50", "--every", "month", "--start", "2024-05-15"])
        s.ok(["price", "set", "btc", "60000", "--date", "2024-05-15"])
        s.ok(["price", "set", "VWCE", "100", "--date", "2024-04-30"])
        // 2024-05-30's newest price is 30 days old (more than 7): the etf waits at 05-30, btc goes on.
        var r = s.run(["saving", "run"])
        XCTAssertEqual(r.code, .failure, r.description)
        let lines = r.out.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 2, r.out)
        XCTAssertTrue(lines[0].hasPrefix("Recorded 2024-04-30 etf: bought 5 VWCE for $500.00 at $100.00 ["), r.out)
        XCTAssertTrue(lines[1].hasPrefix("Recorded 2024-05-15 btc: bought 0.000833333333333333 BTC for $50.00 at $60,000.00 ["), r.out)
        XCTAssertEqual(r.err, "warning: saving plan 'etf' waits at 2024-05-30 (no-price): no price of VWCE (FTSE All-World) in USD on 2024-05-30 or the 7 days before\n")
        let due = try json(s.ok(["saving", "due", "--json"]))
        XCTAssertEqual(due["due"] as? [[String: String]], [["plan": "etf", "date": "2024-05-30", "assetId": "VWCE", "amount": "500", "reason": "no-price"]])
        r = s.run(["saving", "run", "--json"])
        XCTAssertEqual(r.code, .failure)
        XCTAssertEqual(try json(r)["waiting"] as? [[String: String]], [["plan": "etf", "date": "2024-05-30", "reason": "no-price"]])
        s.ok(["price", "set", "VWCE", "104", "--date", "2024-05-29"])
        r = s.run(["saving", "run"])
        XCTAssertEqual(r.code, .success, r.description)
        XCTAssertTrue(r.out.hasPrefix("Recorded 2024-05-30 etf: bought 4.807692307692307692 VWCE for $500.00 at $104.00"), r.out)
        XCTAssertEqual(try PortfolioStore(directory: s.dir).load().transactions.count, 3)
        XCTAssertEqual(try json(s.ok(["saving", "due", "--json"]))["due"] as? [[String: String]], [])
    }

    /// `--from cash` spends the cash; a date that would overdraw waits (no-cash) and later plans run.
    /// `--from outside` in a cash-tracking portfolio brings the money in with a linked deposit.
    func testCashFundingWaitsWithoutCashAndOutsideFundingDeposits() throws {
        let s = Sandbox()
        s.ok(["portfolio", "add", "broker", "--cash"])
        s.ok(["cash", "deposit", "150", "--date", "2024-05-01", "--portfolio", "broker"])
        s.ok(["price", "set", "btc", "50000", "--date", "2024-05-20"])
        s.ok(["price", "set", "btc", "40000", "--date", "2024-05-27"])
        s.ok(["saving", "add", "spend", "--asset", "btc", "--amount", "100", "--every", "week", "--start", "2024-05-21", "--from", "cash",
              "--portfolio", "broker"])
        s.ok(["saving", "add", "bring", "--asset", "btc", "--amount", "100", "--every", "week", "--start", "2024-05-21", "--portfolio", "broker"])
        let r = s.run(["saving", "run", "--json"])
        XCTAssertEqual(r.code, .failure, r.description)
        let out = try json(r)
        XCTAssertEqual((out["recorded"] as? [[String: Any]])?.map { "\($0["plan"] ?? "") \($0["date"] ?? "")" },
                       ["spend 2024-05-21", "bring 2024-05-21", "bring 2024-05-28"])
        XCTAssertEqual(out["waiting"] as? [[String: String]], [["plan": "spend", "date": "2024-05-28", "reason": "no-cash"]])
        XCTAssertTrue(r.err.contains("warning: saving plan 'spend' waits at 2024-05-28 (no-cash):"), r.err)
        // 150 − 100 (spend) + 100 − 100 (bring, twice) = 50.
        let cash = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(s.ok(["cash", "balance", "--json", "--portfolio", "broker"]).out.utf8)) as? [String: Any])
        XCTAssertTrue("\(cash)".contains("50"), "\(cash)")
        let book = try PortfolioStore(directory: s.dir).load()
        XCTAssertEqual(book.transactions.filter { $0.type == .deposit && $0.notes == "saving plan bring" }.map(\.amountValue.text), ["100", "100"])
        XCTAssertEqual(try json(s.ok(["saving", "due", "--json"]))["due"] as? [[String: String]],
                       [["plan": "spend", "date": "2024-05-28", "assetId": "bitcoin", "amount": "100", "reason": "no-cash"]])
        s.ok(["cash", "deposit", "100", "--date", "2024-05-27", "--portfolio", "broker"])
        XCTAssertEqual(s.run(["saving", "run"]).code, .success)
    }

    func testRefusals() {
        let s = Sandbox()
        s.ok(["saving", "add", "Weekly", "--asset", "btc", "--amount", "10", "--every", "week"])
        var r = s.run(["saving", "add", "weekly", "--asset", "eth", "--amount", "10", "--every", "week"])
        XCTAssertEqual(r.code, .failure)
        XCTAssertEqual(r.err, "error: A saving plan named 'weekly' exists already\n")
        r = s.run(["saving", "add", "c", "--asset", "btc", "--amount", "10", "--every", "week", "--from", "cash"])
        XCTAssertEqual(r.code, .failure)
        XCTAssertTrue(r.err.hasPrefix("error: Portfolio 'main' does not track cash"), r.err)
        r = s.run(["saving", "add", "x", "--asset", "btc", "--amount", "10", "--every", "fortnight"])
        XCTAssertEqual(r.code, .usage)
        XCTAssertTrue(r.err.contains("day, week, 2weeks, month") || r.err.contains("2weeks"), r.err)
        r = s.run(["saving", "add", "x", "--asset", "btc", "--amount", "10", "--every", "week", "--fee", "10"])
        XCTAssertEqual(r.code, .failure)
        XCTAssertEqual(r.err, "error: The fee (10) must be below the amount (10)\n")
        XCTAssertEqual(s.run(["saving", "add", "x", "--asset", "btc", "--amount", "0", "--every", "week"]).code, .failure)
        XCTAssertEqual(s.run(["saving", "add", "x", "--asset", "btc", "--amount", "1e3", "--every", "week"]).code, .usage)
        XCTAssertEqual(s.run(["saving", "add", "x", "--asset", "nosuchcoin", "--amount", "10", "--every", "week"]).code, .failure)
        XCTAssertEqual(s.run(["saving", "add", "x", "--amount", "10", "--every", "week"]).code, .usage)
        XCTAssertEqual(s.run(["saving", "edit", "nope", "--pause"]).code, .failure)
        XCTAssertEqual(s.run(["saving", "edit", "weekly"]).code, .usage)
        XCTAssertEqual(s.run(["saving", "edit", "weekly", "--pause", "--resume"]).code, .usage)
        XCTAssertEqual(s.run(["saving", "confirm", "weekly", "--price", "0"]).code, .failure)
        r = s.run(["saving", "remove", "nope"])
        XCTAssertEqual(r.code, .failure)
        XCTAssertEqual(r.err, "error: No saving plan is named 'nope'; 'bitpal saving list' shows them\n")
    }

    /// Manual plans are reminders: `run` leaves them, `due` lists them, `confirm` records the oldest.
    func testManualPlansAreConfirmedByHand() throws {
        let s = Sandbox()
        s.ok(["saving", "add", "gold", "--asset", "btc", "--amount", "200", "--every", "2weeks", "--start", "2024-05-10", "--manual"])
        XCTAssertEqual(s.run(["saving", "run"], terminal: true).out, "Nothing is due.\n")
        let due = try json(s.ok(["saving", "due", "--json"]))
        XCTAssertEqual((due["due"] as? [[String: String]])?.map { $0["date"] ?? "" }, ["2024-05-10", "2024-05-24"])
        XCTAssertEqual(Set((due["due"] as? [[String: String]])?.map { $0["reason"] ?? "" } ?? []), ["manual"])
        var r = s.run(["saving", "confirm", "gold"])
        XCTAssertEqual(r.code, .failure)
        XCTAssertTrue(r.err.hasPrefix("error: No price of bitcoin in USD on 2024-05-10"), r.err)
        r = s.ok(["saving", "confirm", "gold", "--price", "40000", "--date", "2024-05-12", "--json"])
        let confirmed = try json(r)
        XCTAssertEqual(confirmed["date"] as? String, "2024-05-10")
        XCTAssertEqual(confirmed["amount"] as? String, "0.005")
        let buy = try XCTUnwrap(try PortfolioStore(directory: s.dir).load().transactions.first)
        XCTAssertEqual(ISODate.format(buy.date), "2024-05-12T00:00:00Z")
        s.ok(["price", "set", "btc", "50000", "--date", "2024-05-24"])
        XCTAssertTrue(s.ok(["saving", "confirm", "gold"]).out.hasPrefix("Recorded 2024-05-24 gold: bought 0.004 BTC for $200.00 at $50,000.00"))
        r = s.run(["saving", "confirm", "gold"])
        XCTAssertEqual(r.code, .failure)
        XCTAssertEqual(r.err, "error: Saving plan 'gold' has nothing due: its next due date is 2024-06-07\n")
    }

    /// A pause skips dates; `--resume` does not catch them up; `--every` counts on from the next due date.
    func testPauseResumeAndEdit() throws {
        let s = Sandbox()
        s.ok(["saving", "add", "w", "--asset", "btc", "--amount", "10", "--every", "week", "--start", "2024-06-01"])
        s.ok(["saving", "edit", "w", "--pause"])
        s.now = ISODate.parseTimestamp(utf8: "2024-06-20T08:00:00Z".utf8) ?? s.now
        XCTAssertEqual(s.run(["saving", "run"], terminal: true).out, "Nothing is due.\n")
        XCTAssertEqual(try plans(s).first?["active"] as? Bool, false)
        XCTAssertEqual(s.ok(["saving", "edit", "w", "--resume"]).out, "Changed saving plan 'w': active, next due 2024-06-22.\n")
        s.ok(["saving", "edit", "w", "--every", "month", "--amount", "25", "--fee", "0.5", "--note", "more"])
        let p = try XCTUnwrap(try plans(s).first)
        XCTAssertEqual(p["startDate"] as? String, "2024-06-22")
        XCTAssertEqual(p["nextDueDate"] as? String, "2024-06-22")
        XCTAssertEqual(p["frequency"] as? String, "month")
        XCTAssertEqual(p["fee"] as? String, "0.5")
        XCTAssertEqual(p["notes"] as? String, "more")
        s.ok(["saving", "remove", "W"])
        XCTAssertEqual(try plans(s).count, 0)
    }

    /// Today's due date fetches a fresh price first; a failing service makes the date wait with exit 3.
    func testTodaysDateFetchesAndAFailingServiceIsExit3() throws {
        let s = online()
        s.ok(["saving", "add", "w", "--asset", "btc", "--amount", "100", "--every", "week"])
        var r = s.run(["saving", "run", "--json"])
        XCTAssertEqual(r.code, .success, r.description)
        XCTAssertEqual((try json(r)["recorded"] as? [[String: Any]])?.first?["price"] as? String, "67187.3358936566")
        XCTAssertTrue(server.requests.contains { $0.path.hasSuffix("/simple/price") })
        let s2 = online()
        s2.ok(["saving", "add", "w", "--asset", "btc", "--amount", "100", "--every", "week"])
        for _ in 0..<8 { server.enqueue(.init(status: 500, body: "{}")) }
        r = s2.run(["saving", "run"])
        XCTAssertEqual(r.code, .service, r.description)
        XCTAssertTrue(r.err.contains("waits at 2024-06-01 (no-price)"), r.err)
        XCTAssertEqual(try PortfolioStore(directory: s2.dir).load().transactions.count, 0)
    }

    /// A machine that was off: missed days of a coin without a quote fetch the coin's daily history
    /// (market_chart) first and are recorded at each day's own price; today's date fetches a fresh quote.
    func testMissedDaysFetchTheCoinsDailyHistory() throws {
        let s = online()
        s.ok(["saving", "add", "w", "--asset", "btc", "--amount", "100", "--every", "week", "--start", "2024-05-04"])
        let r = s.run(["saving", "run", "--json"])
        XCTAssertEqual(r.code, .success, r.description)
        let recorded = try XCTUnwrap(try json(r)["recorded"] as? [[String: Any]])
        XCTAssertEqual(recorded.map { $0["date"] as? String }, ["2024-05-04", "2024-05-11", "2024-05-18", "2024-05-25", "2024-06-01"])
        // The fake's daily points: 60000 − days before 2024-06-01.
        XCTAssertEqual(recorded.map { $0["price"] as? String }, ["59972", "59979", "59986", "59993", "67187.3358936566"])
        let chart = server.requests.filter { $0.path.hasSuffix("/coins/bitcoin/market_chart") }
        XCTAssertEqual(chart.count, 1)
        XCTAssertEqual(chart.first?.query["days"], "91")  // more than 90: daily points at any distance
        XCTAssertEqual(chart.first?.query["vs_currency"], "usd")
        // A second run asks nothing and records nothing.
        let asked = server.requests.count
        XCTAssertEqual(s.run(["saving", "run"], terminal: true).out, "Nothing is due.\n")
        XCTAssertEqual(server.requests.count, asked)
    }

    /// Four `saving run` processes at once, over a catch-up of several dates: each date is recorded once.
    func testConcurrentRunsRecordEachDateOnce() throws {
        let binary = try bitpalBinary()
        let s = Sandbox()
        s.ok(["saving", "add", "d", "--asset", "btc", "--amount", "10", "--every", "day", "--start", "2024-05-20"])
        s.ok(["saving", "add", "w", "--asset", "btc", "--amount", "70", "--every", "week", "--start", "2024-05-04"])
        s.ok(["price", "set", "btc", "60000", "--date", "2024-04-30"])
        for d in 1...31 { s.ok(["price", "set", "btc", "\(60000 + d)", "--date", "2024-05-\(d < 10 ? "0" : "")\(d)"]) }
        let env = s.variables.merging(["PATH": "/usr/bin:/bin", "SWIFT_BACKTRACE": "enable=no"]) { a, _ in a }
        let group = DispatchGroup()
        let failures = Failures()
        for _ in 0..<4 {
            group.enter()
            Thread.detachNewThread {
                // The processes' clock is the real one (today, well after 2024): the plans catch up to today
                // without prices after 2024-05-31 + 7 days, so each run ends with both plans waiting (exit 1).
                let r = try? runProcess(binary, ["saving", "run", "--quiet"], env: env)
                if r?.status != 1 { failures.add("exit \(r?.status ?? -1): \(r?.err ?? "")") }
                group.leave()
            }
        }
        group.wait()
        XCTAssertEqual(failures.all, [])
        let book = try PortfolioStore(directory: s.dir).load()
        let dates = book.transactions.map { "\($0.notes ?? "") \(ISODate.format($0.date))" }
        XCTAssertEqual(dates.count, Set(dates).count, "a date was recorded twice")
        // d: 2024-05-20 … 2024-06-07 (the last with a price within 7 days); w: 05-04 … 06-01.
        XCTAssertEqual(book.transactions.filter { $0.notes == "saving plan d" }.count, 19)
        XCTAssertEqual(book.transactions.filter { $0.notes == "saving plan w" }.count, 5)
        XCTAssertEqual(book.savingPlans.map { ISODate.dayText($0.nextDueDay) }, ["2024-06-08", "2024-06-08"])
    }

    /// Saving plans live in the store's head (`savingPlans`), survive a round trip, and a hand-edited
    /// plan that breaks a rule is refused with a clear error; renames follow, removals are refused.
    func testStoreRoundTripAndReferences() throws {
        let s = Sandbox()
        s.ok(["portfolio", "add", "broker", "--cash"])
        s.ok(["asset", "add", "VWCE", "--name", "All-World", "--type", "etf"])
        s.ok(["saving", "add", "etf", "--asset", "VWCE", "--amount", "500.25", "--fee", "1.5", "--every", "2weeks", "--start", "2024-05-01",
              "--from", "cash", "--manual", "--note", "ETF habit", "--portfolio", "broker"])
        let text = String(decoding: try XCTUnwrap(s.storeBytes), as: UTF8.self)
        XCTAssertTrue(text.contains("\"savingPlans\": [\n"), text)
        XCTAssertTrue(text.contains(#"    {"name": "etf", "portfolio": "broker", "assetId": "VWCE", "amount": "500.25", "fee": "1.5", "frequency": "2weeks", "startDate": "2024-05-01", "nextDueDate": "2024-05-01", "lastExecuted": null, "from": "cash", "method": "manual", "active": true, "notes": "ETF habit"}"#), text)
        XCTAssertLessThan(try XCTUnwrap(text.range(of: "savingPlans")).lowerBound, try XCTUnwrap(text.range(of: "\"transactions\"")).lowerBound)
        let book = try PortfolioStore(directory: s.dir).load()
        XCTAssertEqual(try PortfolioCodec.decode(PortfolioCodec.encode(book), path: "p"), book)
        var r = s.run(["asset", "remove", "VWCE"])
        XCTAssertEqual(r.code, .failure)
        XCTAssertEqual(r.err, "error: Saving plan 'etf' buys VWCE; remove it first ('bitpal saving remove')\n")
        XCTAssertEqual(s.run(["portfolio", "remove", "broker"]).code, .failure)
        s.ok(["portfolio", "edit", "broker", "--name", "depot"])
        XCTAssertEqual(try plans(s).first?["portfolio"] as? String, "depot")
        // A hand edit: a fee above the amount, a date that is not a day.
        for (bad, message) in [(#""fee": "1.5""#, #""fee": "900""#), (#""startDate": "2024-05-01""#, #""startDate": "May 1""#)] {
            let edited = String(decoding: try XCTUnwrap(s.storeBytes), as: UTF8.self).replacingOccurrences(of: bad, with: message)
            let copy = Sandbox()
            _ = copy.write("portfolio.json", edited)
            r = copy.run(["saving", "list"])
            XCTAssertEqual(r.code, .failure, r.description)
            XCTAssertTrue(r.err.contains("saving plan") || r.err.contains("startDate"), r.err)
        }
    }

    /// Cron hears nothing when nothing is due; a person at a terminal does.
    func testNothingDueIsSilentForCron() {
        let s = Sandbox()
        s.ok(["saving", "add", "w", "--asset", "btc", "--amount", "10", "--every", "week", "--start", "2024-06-05"])
        XCTAssertEqual(s.ok(["saving", "run"]).out, "")
        XCTAssertEqual(s.run(["saving", "run"], terminal: true).out, "Nothing is due.\n")
    }

    /// A price so small that the units would pass 20 digits before the point waits (and, confirmed by
    /// hand, is refused): nothing unreadable is ever written.
    func testUnitsBeyondTheStoreWait() throws {
        let s = Sandbox()
        s.ok(["saving", "add", "d", "--asset", "shiba-inu", "--amount", "100", "--every", "day", "--start", "2024-06-01"])
        s.ok(["price", "set", "shiba-inu", "0.000000000000000001", "--date", "2024-06-01"])
        var r = s.run(["saving", "run"])
        XCTAssertEqual(r.code, .failure, r.description)
        XCTAssertTrue(r.err.contains("(no-price): 100 at 0.000000000000000001 would buy a quantity bitpal cannot keep exactly"), r.err)
        s.ok(["saving", "add", "m", "--asset", "btc", "--amount", "1000000000", "--every", "month", "--start", "2024-06-01", "--manual"])
        r = s.run(["saving", "confirm", "m", "--price", "0.00000000001"])
        XCTAssertEqual(r.code, .failure, r.description)
        XCTAssertTrue(r.err.hasPrefix("error: Cannot record 'm': 1000000000 at 0.00000000001 would buy a quantity"), r.err)
        XCTAssertEqual(try PortfolioStore(directory: s.dir).load().transactions.count, 0)
        s.ok(["list"])
    }

    /// A failed fetch is said even with --quiet, and today's date waits (exit 3) instead of buying at an old price.
    func testAFailedFetchNeverBuysAtAnOldPrice() throws {
        let s = online()
        s.ok(["saving", "add", "w", "--asset", "btc", "--amount", "100", "--every", "week"])
        s.ok(["price", "set", "btc", "50000", "--date", "2024-05-28"])
        for _ in 0..<8 { server.enqueue(.init(status: 503, body: "{}")) }
        let r = s.run(["saving", "run", "--quiet"])
        XCTAssertEqual(r.code, .service, r.description)
        XCTAssertEqual(r.out, "")
        XCTAssertTrue(r.err.hasPrefix("warning: fetching prices failed:"), r.err)
        XCTAssertTrue(r.err.contains("waits at 2024-06-01 (no-price): fetching the price of BTC (Bitcoin) in USD failed"), r.err)
        XCTAssertEqual(try PortfolioStore(directory: s.dir).load().transactions.count, 0)
    }

    /// A start beyond the service's 365 days: a warning at `add`, and `edit --next` moves the plan on.
    func testAnOldStartWarnsAndNextMovesThePlanOn() throws {
        let s = Sandbox()
        var r = s.ok(["saving", "add", "d", "--asset", "btc", "--amount", "10", "--every", "day", "--start", "2020-01-01"])
        XCTAssertTrue(r.err.hasPrefix("warning: the price service's history reaches 365 days back: dates before 2023-06-03 need prices set by hand"), r.err)
        r = s.run(["saving", "run"])
        XCTAssertTrue(r.err.contains("waits at 2020-01-01 (no-price): no price of BTC (Bitcoin) in USD on 2020-01-01 or the 7 days before (the price service's history"), r.err)
        s.ok(["saving", "edit", "d", "--next", "2024-05-31"])
        XCTAssertEqual(try plans(s).first?["nextDueDate"] as? String, "2024-05-31")
        s.ok(["price", "set", "btc", "60000", "--date", "2024-05-30"])
        XCTAssertEqual(s.ok(["saving", "run", "--json"]).code, .success)
        XCTAssertEqual(try plans(s).first?["lastExecuted"] as? String, "2024-06-01")
    }

    /// A plan buying in another currency uses the rates known from every source (fx set, import, fetch).
    func testAForeignAssetUsesImportedRates() throws {
        let s = Sandbox()
        s.ok(["asset", "add", "SAP", "--name", "SAP SE", "--type", "stock", "--currency", "EUR"])
        s.ok(["saving", "add", "sap", "--asset", "SAP", "--amount", "200", "--every", "month", "--start", "2024-05-15"])
        s.ok(["price", "set", "SAP", "180", "--date", "2024-05-15"])
        var r = s.run(["saving", "run"])
        XCTAssertEqual(r.code, .failure)
        XCTAssertTrue(r.err.contains("(no-price): no EUR→USD rate is known on 2024-05-15"), r.err)
        s.ok(["fx", "import", "-"], stdin: "P 2024-05-14 EUR 1.08 USD\n")
        r = s.run(["saving", "run", "--json"])
        XCTAssertEqual(r.code, .success, r.description)
        let buy = try XCTUnwrap(try PortfolioStore(directory: s.dir).load().transactions.first)
        XCTAssertEqual(buy.currency, "EUR")
        XCTAssertEqual(buy.fxRateValue?.text, "1.08")
        XCTAssertEqual(buy.amountValue.text, "1.111111111111111111")
        // `add` finds the imported rate too (typed, fetched and imported rates alike).
        s.ok(["add", "buy", "SAP", "1", "181", "--date", "2024-05-20"])
        XCTAssertEqual(try PortfolioStore(directory: s.dir).load().transactions.last?.fxRateValue?.text, "1.08")
        s.ok(["import", "-"], stdin: "type,asset,amount,price,date\nbuy,SAP,2,182,2024-05-21\n")
        XCTAssertEqual(try PortfolioStore(directory: s.dir).load().transactions.last?.fxRateValue?.text, "1.08")
    }

    /// Two plans of one name (any case) in a hand-edited file are refused when read.
    func testDuplicateNamesInTheFileAreRefused() throws {
        let s = Sandbox()
        s.ok(["saving", "add", "a", "--asset", "btc", "--amount", "10", "--every", "week"])
        s.ok(["saving", "add", "b", "--asset", "btc", "--amount", "10", "--every", "week"])
        let text = String(decoding: try XCTUnwrap(s.storeBytes), as: UTF8.self).replacingOccurrences(of: #""name": "b""#, with: #""name": "A""#)
        _ = s.write("portfolio.json", text)
        let r = s.run(["saving", "list"])
        XCTAssertEqual(r.code, .failure)
        XCTAssertTrue(r.err.contains("two saving plans are named 'a'"), r.err)
    }

    /// Two plans spending one cash balance: dates in order, each plan stopping at its first date that
    /// would overdraw (found by bisection, with the same answer as date by date).
    func testTwoCashPlansStopEachAtItsFirstOverdraw() throws {
        let s = Sandbox()
        s.ok(["portfolio", "add", "broker", "--cash"])
        s.ok(["cash", "deposit", "1000", "--date", "2024-05-01", "--portfolio", "broker"])
        s.ok(["price", "set", "btc", "50000", "--date", "2024-05-19"])
        s.ok(["price", "set", "btc", "50000", "--date", "2024-05-27"])
        s.ok(["saving", "add", "a", "--asset", "btc", "--amount", "100", "--every", "day", "--start", "2024-05-20", "--from", "cash", "--portfolio", "broker"])
        s.ok(["saving", "add", "b", "--asset", "btc", "--amount", "150", "--every", "week", "--start", "2024-05-20", "--from", "cash", "--portfolio", "broker"])
        let r = s.run(["saving", "run", "--json"])
        XCTAssertEqual(r.code, .failure, r.description)
        let out = try json(r)
        let recorded = (out["recorded"] as? [[String: Any]])?.map { "\($0["plan"] ?? "") \($0["date"] ?? "")" }
        XCTAssertEqual(recorded, ["a 2024-05-20", "b 2024-05-20", "a 2024-05-21", "a 2024-05-22", "a 2024-05-23", "a 2024-05-24", "a 2024-05-25",
                                  "a 2024-05-26", "a 2024-05-27"])
        XCTAssertEqual(Set((out["waiting"] as? [[String: String]]) ?? []), [["plan": "b", "date": "2024-05-27", "reason": "no-cash"],
                                                                           ["plan": "a", "date": "2024-05-28", "reason": "no-cash"]])
        XCTAssertTrue(s.ok(["cash", "balance", "--portfolio", "broker"]).out.contains("$50.00"))
        XCTAssertEqual(try plans(s).map { $0["nextDueDate"] as? String }, ["2024-05-28", "2024-05-27"])
        let due = try json(s.ok(["saving", "due", "--json"]))["due"] as? [[String: String]]
        let lines: [String] = (due ?? []).map { d in [d["plan"] ?? "", d["date"] ?? "", d["reason"] ?? ""].joined(separator: " ") }
        // The first date waits for want of cash; the dates after it wait behind it.
        XCTAssertEqual(lines, ["b 2024-05-27 no-cash", "a 2024-05-28 no-cash", "a 2024-05-29 blocked", "a 2024-05-30 blocked",
                               "a 2024-05-31 blocked", "a 2024-06-01 blocked"])
    }

    /// A hand edit that nulls a field that must have a value is refused (never taken for a default), and
    /// a book that already breaks a rule is said to, not blamed on the plans' cash.
    func testNullFieldsAndABrokenBook() throws {
        let s = Sandbox()
        s.ok(["portfolio", "add", "p", "--cash"])
        s.ok(["cash", "deposit", "300", "--date", "2024-05-01", "--portfolio", "p"])
        s.ok(["cash", "withdraw", "150", "--date", "2024-05-02", "--portfolio", "p"])
        s.ok(["price", "set", "btc", "50000", "--date", "2024-05-30"])
        s.ok(["saving", "add", "a", "--asset", "btc", "--amount", "10", "--every", "week", "--start", "2024-05-31", "--from", "cash", "--portfolio", "p"])
        s.ok(["saving", "add", "o", "--asset", "btc", "--amount", "10", "--every", "week", "--start", "2024-05-31", "--portfolio", "p", "--manual"])
        let text = String(decoding: try XCTUnwrap(s.storeBytes), as: UTF8.self)
        _ = s.write("portfolio.json", text.replacingOccurrences(of: #""method": "manual""#, with: #""method": null"#))
        var r = s.run(["saving", "list"])
        XCTAssertEqual(r.code, .failure)
        XCTAssertTrue(r.err.contains("a saving plan's method cannot be null"), r.err)
        _ = s.write("portfolio.json", text.replacingOccurrences(of: #""amount": "150""#, with: #""amount": "900""#))
        r = s.run(["saving", "run"])
        XCTAssertEqual(r.code, .failure)
        XCTAssertEqual(r.err, "error: portfolio.json breaks a rule already, so no saving plan can be recorded; 'bitpal check' says which and how to fix it\n")
        XCTAssertEqual(s.run(["saving", "due"]).code, .failure)
    }
}
