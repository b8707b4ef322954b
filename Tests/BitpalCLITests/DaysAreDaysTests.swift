import Foundation
import PortfolioCore
import XCTest

/// A bare date is a calendar day (store version 3, cli.md "DATE"): stored as `YYYY-MM-DD`, shown and
/// counted on that day in every time zone; an instant stays an instant.
final class DaysAreDaysTests: XCTestCase {
    func storeText(_ s: Sandbox) throws -> String {
        try XCTUnwrap(String(data: try XCTUnwrap(s.storeBytes), encoding: .utf8))
    }

    /// `list` with runs of spaces made one.
    func listed(_ s: Sandbox) -> String {
        s.ok(["list"]).out.replacingOccurrences(of: " +", with: " ", options: .regularExpression)
    }

    func dates(_ s: Sandbox, _ args: [String]) throws -> [String] {
        let rows = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(s.ok(args).out.utf8)) as? [[String: Any]])
        return rows.compactMap { $0["date"] as? String }
    }

    /// Typed in Berlin, the day is the same day in Tokyo, in Los Angeles and in UTC: in the store, in
    /// `list`, in `--json`, and in a one-day filter.
    func testADayIsTheSameDayInEveryZone() throws {
        let s = Sandbox()
        s.variables["TZ"] = "Europe/Berlin"
        s.ok(["add", "buy", "btc", "1", "100", "--date", "2024-01-15"])
        s.ok(["add", "buy", "btc", "1", "100", "--date", "2024-01-15T10:00:00Z"])
        let text = try storeText(s)
        XCTAssertTrue(text.contains(#""date": "2024-01-15"}"#) && text.contains(#""date": "2024-01-15T10:00:00Z"}"#), text)
        for zone in ["Asia/Tokyo", "America/Los_Angeles", "UTC", "Pacific/Kiritimati", "Pacific/Pago_Pago"] {
            s.variables["TZ"] = zone
            XCTAssertEqual(try dates(s, ["list", "--json", "--since", "2024-01-15", "--until", "2024-01-15"]).last, "2024-01-15", zone)
            let list = listed(s)
            XCTAssertTrue(list.contains("2024-01-15 buy"), "\(zone)\n\(list)")
        }
        // The instant moves with the zone: in Los Angeles it is 02:00 of the same day, in Kiritimati (UTC+14) midnight of the 16th.
        s.variables["TZ"] = "America/Los_Angeles"
        XCTAssertTrue(s.ok(["list"]).out.contains("2024-01-15 02:00"))
        s.variables["TZ"] = "Pacific/Kiritimati"
        XCTAssertEqual(try dates(s, ["list", "--json", "--since", "2024-01-16"]), ["2024-01-15T10:00:00Z"])
        s.ok(["check"])
    }

    /// A day counts from its first moment where it is read: its records come before that day's instants.
    func testADaysRecordsComeBeforeItsInstants() throws {
        let s = Sandbox()
        s.variables["TZ"] = "Asia/Tokyo"
        s.ok(["add", "buy", "btc", "1", "100", "--date", "2024-03-10 09:00"])
        let refused = s.run(["add", "sell", "btc", "1", "120", "--date", "2024-03-10"])
        XCTAssertEqual(refused.code, .failure, refused.err)
        XCTAssertTrue(refused.err.contains("Cannot sell 1"), refused.err)
        s.ok(["add", "buy", "eth", "1", "100", "--date", "2024-03-11"])
        s.ok(["add", "sell", "eth", "1", "120", "--date", "2024-03-11 00:00"])
        XCTAssertTrue(s.ok(["closed"]).out.contains("2024-03-11  2024-03-11"))
    }

    /// `income --by year` puts a New Year's dividend in the new year wherever the book is read, and its
    /// JSON row, like the transaction's, carries the day.
    func testIncomeCountsADayOnItsDayInEveryZone() throws {
        let s = Sandbox(now: "2025-06-01T12:00:00Z")
        s.variables["TZ"] = "Asia/Tokyo"
        s.ok(["asset", "add", "AAPL", "--name", "Apple", "--type", "stock"])
        s.ok(["add", "buy", "AAPL", "1", "100", "--date", "2024-12-01"])
        s.ok(["add", "dividend", "AAPL", "5", "--date", "2025-01-01"])
        for zone in ["Asia/Tokyo", "UTC", "America/New_York"] {
            s.variables["TZ"] = zone
            let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(s.ok(["income", "--by", "year", "--json"]).out.utf8)) as? [String: Any])
            XCTAssertEqual((json["rows"] as? [[String: Any]])?.map { $0["group"] as? String }, ["2025"], zone)
            let rows = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(s.ok(["income", "--json"]).out.utf8)) as? [String: Any])
            XCTAssertEqual((rows["rows"] as? [[String: Any]])?.map { $0["date"] as? String }, ["2025-01-01"], zone)
        }
    }

    /// A saving plan run by cron in UTC dates its buy by the due day: read in Berlin it is that day, not 01:00.
    func testASavingPlansBuyIsDatedItsDueDay() throws {
        let s = Sandbox()  // 2024-06-01 12:00 UTC
        s.ok(["saving", "add", "d", "--asset", "btc", "--amount", "10", "--every", "day", "--start", "2024-05-31"])
        for day in ["2024-05-31", "2024-06-01"] { s.ok(["price", "set", "btc", "100", "--date", day]) }
        s.ok(["saving", "run"])
        let text = try storeText(s)
        XCTAssertTrue(text.contains(#""date": "2024-05-31""#) && text.contains(#""date": "2024-06-01""#), text)
        s.variables["TZ"] = "Europe/Berlin"
        let list = listed(s)
        XCTAssertTrue(list.contains("2024-05-31 buy") && !list.contains("01:00"), list)
        XCTAssertEqual(try dates(s, ["list", "--json"]), ["2024-06-01", "2024-05-31"])
    }

    /// The first write of a version-2 file dates its local midnights as days (in the writer's zone), keeps
    /// the file as it was once, and says how many records changed; later writes keep no other copy.
    func testAVersionTwoFileIsMigratedOnItsFirstWrite() throws {
        let s = Sandbox()
        s.variables["TZ"] = "Europe/Berlin"
        let v2 = """
        {
          "format": "bitpal-portfolio",
          "version": 2,
          "defaultPortfolio": "main",
          "portfolios": [
            {"name": "main", "baseCurrency": "USD", "description": null, "active": true, "createdDate": "2024-01-01T00:00:00Z"}
          ],
          "assets": [],
          "transactions": [
            {"id": "0a4f8e2c-1b3d-4e5f-8a9b-0c1d2e3f4a5b", "portfolio": "main", "type": "buy", "assetId": "bitcoin", "amount": "1", "price": "100", "fee": "0", "currency": "USD", "date": "2024-01-14T23:00:00Z"},
            {"id": "1b5a9f3d-2c4e-4f60-9bac-1d2e3f4a5b6c", "portfolio": "main", "type": "buy", "assetId": "bitcoin", "amount": "1", "price": "100", "fee": "0", "currency": "USD", "date": "2024-01-15T09:00:00Z"},
            {"id": "2c6b0a4e-3d5f-4a71-8cbd-2e3f4a5b6c7d", "portfolio": "main", "type": "buy", "assetId": "bitcoin", "amount": "1", "price": "100", "fee": "0", "currency": "USD", "date": "2024-01-15T00:00:00Z"}
          ],
          "watchlist": [],
          "manualPrices": []
        }

        """
        _ = s.write("portfolio.json", v2)
        // Reading changes nothing.
        XCTAssertTrue(listed(s).contains("2024-01-15 buy"))
        XCTAssertEqual(try storeText(s), v2)
        let r = s.ok(["add", "buy", "btc", "1", "100", "--date", "2024-02-01"])
        XCTAssertTrue(r.err.contains("kept as \(s.dir)/portfolio.v2.json. 1 record dated at midnight is now dated by day."), r.err)
        XCTAssertEqual(FileManager.default.contents(atPath: s.dir + "/portfolio.v2.json"), Data(v2.utf8))
        let text = try storeText(s)
        XCTAssertTrue(text.contains(#""version": 3,"#), text)
        XCTAssertEqual(try dates(s, ["list", "--json"]), ["2024-02-01", "2024-01-15T09:00:00Z", "2024-01-15T00:00:00Z", "2024-01-15"])
        // Read in Tokyo, the migrated day is still the 15th.
        s.variables["TZ"] = "Asia/Tokyo"
        XCTAssertTrue(listed(s).contains("2024-01-15 buy"))
        let again = s.ok(["add", "buy", "btc", "1", "100", "--date", "2024-02-02"])
        XCTAssertFalse(again.err.contains("Upgraded"), again.err)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: s.dir).filter { $0.hasPrefix("portfolio.v") }, ["portfolio.v2.json"])
    }

    /// Days survive the export: CSV and JSON, imported into an empty folder in another zone.
    func testDaysSurviveTheExport() throws {
        let s = Sandbox()
        s.variables["TZ"] = "America/New_York"
        s.ok(["add", "buy", "btc", "1", "100", "--date", "2024-01-15"])
        s.ok(["add", "buy", "btc", "1", "100", "--date", "2024-01-15T10:00:00Z"])
        for format in ["csv", "json"] {
            let file = s.dir + "/export.\(format)"
            s.ok(["export", "--format", format, "--output", file])
            let other = Sandbox()
            other.variables["TZ"] = "Asia/Tokyo"
            other.ok(["import", file])
            XCTAssertEqual(try dates(other, ["list", "--json"]), ["2024-01-15T10:00:00Z", "2024-01-15"], format)
        }
    }

    /// An edit from an instant at local midnight to that day (and back) is written: the two count at one
    /// moment but are stored differently. `closed --json` gives a cycle's days as days.
    func testAnEditBetweenMidnightAndTheDayIsWritten() throws {
        let s = Sandbox()
        s.variables["TZ"] = "Europe/Berlin"
        s.ok(["add", "buy", "btc", "1", "100", "--date", "2024-01-15 00:00"])
        let id = try XCTUnwrap(try s.loadPortfolio().transactions.first).id.uuidString.lowercased()
        XCTAssertTrue(try storeText(s).contains(#""date": "2024-01-14T23:00:00Z""#))
        s.ok(["edit", id, "--date", "2024-01-15"])
        let asDay = try storeText(s)
        XCTAssertTrue(asDay.contains(#""date": "2024-01-15"}"#), asDay)
        s.ok(["edit", id, "--date", "2024-01-16 00:00"])
        s.ok(["edit", id, "--date", "2024-01-15 00:00"])
        let asInstant = try storeText(s)
        XCTAssertTrue(asInstant.contains(#""date": "2024-01-14T23:00:00Z""#), asInstant)
        s.ok(["edit", id, "--date", "2024-01-15"])
        s.ok(["add", "sell", "btc", "1", "120", "--date", "2024-02-01"])
        for zone in ["Europe/Berlin", "UTC", "America/New_York"] {
            s.variables["TZ"] = zone
            let closed = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(s.ok(["closed", "--json"]).out.utf8)) as? [[String: Any]])
            XCTAssertEqual(closed.first?["openedDate"] as? String, "2024-01-15", zone)
            XCTAssertEqual(closed.first?["closedDate"] as? String, "2024-02-01", zone)
        }
    }
}
