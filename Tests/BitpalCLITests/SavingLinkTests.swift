import Foundation
import PortfolioCore
import XCTest

/// A saving plan's due date in a cash-tracking portfolio is a link of `LinkKind.table` (a deposit and
/// the buy it pays for): the buy pays cash as any buy does, `list` shows both, `delete` takes both.
final class SavingLinkTests: XCTestCase {
    func testASavingPlansDepositAndBuyAreOneLink() throws {
        let s = Sandbox()  // 2024-06-01 12:00 UTC
        s.ok(["portfolio", "edit", "main", "--cash"])
        s.ok(["price", "set", "btc", "50", "--date", "2024-06-01"])
        s.ok(["saving", "add", "daily", "--asset", "btc", "--amount", "100", "--fee", "1", "--every", "day", "--start", "2024-06-01"])
        s.ok(["saving", "run"])
        let book = try s.loadPortfolio()
        let deposit = try XCTUnwrap(book.transactions.first { $0.type == .deposit })
        let buy = try XCTUnwrap(book.transactions.first { $0.type == .buy })
        XCTAssertEqual(deposit.linkedId, deposit.id)
        XCTAssertEqual(buy.linkedId, deposit.id)
        XCTAssertEqual(LinkKind.of(deposit, buy)?.name, LinkKind.savingPlan)
        // The buy spends what was paid in (total + fee): no cash is left, none is missing.
        XCTAssertTrue(s.ok(["cash", "--json"]).out.contains(#""amount": "0.00""#))
        s.ok(["check"])
        let list = s.ok(["list"]).out
        XCTAssertTrue(list.contains("deposit") && list.contains("buy"), list)
        // Deleting the buy takes its deposit (a deposit without its buy would leave cash no one paid in).
        let deleted = s.ok(["delete", String(UUIDText.lowercased(buy.id).prefix(8))]).out
        XCTAssertTrue(deleted.contains("deposit $100.00") && deleted.contains("buy 1.98 BTC"), deleted)
        XCTAssertEqual(try s.loadPortfolio().transactions.count, 0)
    }
}
