import Foundation
import PortfolioCore
import Testing

/// The store, version 2 (`assets.md`): version-1 files read as they are and migrate once on the
/// first write, keys a newer bitpal wrote survive, a newer version is never written, null keys
/// may be left out, and every kind survives a round trip.
@Suite struct StoreV2Tests {
    let now = day("2024-12-31")

    /// The hand-written version-1 file (`Fixtures/portfolio-v1.json`): a buy of bitcoin, a sell of
    /// ethereum with none held (a problem the store already has), a watched coin, a manual price.
    static func v1Bytes() throws -> [UInt8] {
        Array(try #require(FileManager.default.contents(atPath: fixtures.appendingPathComponent("portfolio-v1.json").path)))
    }

    /// A scratch store whose `portfolio.json` holds `bytes`.
    static func store(with bytes: [UInt8]) -> PortfolioStore {
        let store = PortfolioStore(directory: scratchDirectory())
        _ = FileManager.default.createFile(atPath: store.path, contents: Data(bytes))
        return store
    }

    static func contents(_ path: String) -> [UInt8]? { FileManager.default.contents(atPath: path).map(Array.init) }

    static func backupPath(_ store: PortfolioStore) -> String { store.directory + "/portfolio.v1.json" }

    static func remove(_ store: PortfolioStore) { try? FileManager.default.removeItem(atPath: store.directory) }

    // MARK: Version 1

    @Test func versionOneReadsAsVersionTwo() throws {
        let book = try PortfolioCodec.decode(try Self.v1Bytes(), path: "fixture")
        #expect(book.readVersion == 1)
        #expect(book.portfolios == [Portfolio(name: "main")])
        #expect(book.defaultPortfolio == "main")
        #expect(book.assets.isEmpty)
        #expect(book.unknownKeys.isEmpty)
        #expect(book.transactions.count == 2)
        let buy = book.transactions[0]
        #expect(buy.id == UUID(uuidString: "0a4f8e2c-1b3d-4e5f-8a9b-0c1d2e3f4a5b"))
        #expect(buy.portfolio == "main" && buy.type == .buy && buy.assetId == "bitcoin")
        #expect(buy.amountValue == fixed("0.5") && buy.priceValue == fixed("30000") && buy.feeValue == fixed("10"))
        #expect(buy.totalValue == nil && buy.linkedId == nil && !buy.negative)
        #expect(buy.currency == "USD")
        #expect(buy.notes == "first \"stack\"")
        let sell = book.transactions[1]
        #expect(sell.portfolio == "main" && sell.type == .sell && sell.assetId == "ethereum" && sell.currency == "USD")
        #expect(sell.priceValue == fixed("1234.56789") && sell.feeValue == .zero && sell.notes == nil)
        #expect(book.watchlist == [WatchEntry(coinId: "solana", dateAdded: day("2024-03-01"))])
        #expect(book.manualPrices.map(\.coinId) == ["bitcoin"])
        #expect(book.manualPrices.first?.price == dec("60000.5"))
        #expect(book.manualPrices.first?.currency == "USD")
        // The store loads it the same way.
        let store = Self.store(with: try Self.v1Bytes())
        defer { Self.remove(store) }
        #expect(try store.load() == book)
    }

    @Test func firstWriteMigratesAndKeepsTheVersionOneFileOnce() throws {
        let original = try Self.v1Bytes()
        var store = Self.store(with: original)
        store.timeZone = try #require(TimeZone(identifier: "UTC"))
        defer { Self.remove(store) }
        let v1 = try store.load()

        // The first write (it also mends the fixture's oversold ethereum with an earlier buy).
        let ethBuy = record(.buy, "ethereum", "1", price: "2000", on: "2024-01-15")
        try store.update(now: now) { book in
            book.add([ethBuy])
            return (true, ())
        }
        let written = try #require(Self.contents(store.path))
        let text = String(decoding: written, as: UTF8.self)
        #expect(text.contains("\"version\": 3,"))
        #expect(!text.contains("\"version\": 1"))
        #expect(!text.contains("pricePerCoin"))
        #expect(text.contains("{\"id\": \"0a4f8e2c-1b3d-4e5f-8a9b-0c1d2e3f4a5b\", \"portfolio\": \"main\", \"type\": \"buy\", \"assetId\": \"bitcoin\", "
            + "\"amount\": \"0.5\", \"price\": \"30000\", \"fee\": \"10\", \"currency\": \"USD\", \"date\": \"2024-01-01\", "
            + "\"notes\": \"first \\\"stack\\\"\"}"))
        #expect(text.contains("{\"name\": \"main\", \"baseCurrency\": \"USD\""))
        #expect(text.contains("{\"assetId\": \"bitcoin\", \"price\": \"60000.5\", \"currency\": \"USD\""))
        let migrated = try store.load()
        #expect(migrated.readVersion == 3)
        #expect(migrated.portfolios == v1.portfolios && migrated.defaultPortfolio == "main")
        // The buy at midnight UTC (how versions 1 and 2 kept a bare date) is now that day; the others stay instants.
        var dated = v1.transactions
        #expect(dated.dateMidnightsAsDays(in: store.timeZone) == 1 && dated[0].day == ISODate.dayNumber(ofDay: "2024-01-01"))
        #expect(migrated.transactions == dated + [ethBuy])
        #expect(migrated.watchlist == v1.watchlist && migrated.manualPrices == v1.manualPrices)
        #expect(migrated.checked(now: now).problems.isEmpty)
        // The version-1 file, byte for byte, beside it.
        #expect(Self.contents(Self.backupPath(store)) == original)

        // A second write leaves it alone.
        try store.update(now: now) { book in
            book.add([record(.buy, "bitcoin", "0.1", price: "50000", on: "2024-04-01")])
            return (true, ())
        }
        #expect(Self.contents(Self.backupPath(store)) == original)
        #expect(try store.load().transactions.count == 4)

        // Even another version-1 file put back in place never replaces the kept copy.
        var other = original
        let marker = Array("60000.5".utf8)
        let at = try #require((0...(other.count - marker.count)).first { Array(other[$0..<($0 + marker.count)]) == marker })
        other.replaceSubrange(at..<(at + marker.count), with: Array("60001.5".utf8))
        _ = FileManager.default.createFile(atPath: store.path, contents: Data(other))
        try store.update(now: now) { book in
            book.add([ethBuy])
            return (true, ())
        }
        #expect(Self.contents(Self.backupPath(store)) == original)
        #expect(try store.load().manualPrices.first?.price == dec("60001.5"))
    }

    @Test func aRefusedWriteNeitherMigratesNorKeepsACopy() throws {
        let original = try Self.v1Bytes()
        let store = Self.store(with: original)
        defer { Self.remove(store) }
        // The change throws: nothing is written.
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try store.update(now: now) { (book: inout Book) throws -> (write: Bool, result: Void) in
                book.add([record(.buy, "bitcoin", "1", price: "1", on: "2024-04-01")])
                throw Stop()
            }
        }
        // A change that leaves the fixture's oversold ethereum as it is: refused, listing it.
        do {
            try store.update(now: now) { book in
                book.watchlist.append(WatchEntry(coinId: "cardano", dateAdded: day("2024-04-01")))
                return (true, ())
            }
            Issue.record("a write was admitted over a store that breaks a rule")
        } catch let error as StoreError {
            guard case let .brokenRules(lines) = error.reason else { Issue.record("wrong reason \(error)"); return }
            #expect(lines.count == 1)
            #expect(lines.first?.contains("sell of 0.000000000000000001 ethereum") ?? false, "\(lines)")
        }
        #expect(Self.contents(store.path) == original)
        #expect(!FileManager.default.fileExists(atPath: Self.backupPath(store)))
    }

    // MARK: Keys a newer bitpal wrote, and a newer version

    static let v2WithUnknownKeys = """
        {
          "format": "bitpal-portfolio",
          "version": 2,
          "defaultPortfolio": "main",
          "futureThing": {"a": [1, 2]},
          "portfolios": [
            {"name": "main", "baseCurrency": "USD", "description": null, "active": true, "createdDate": "2024-01-01T00:00:00Z"}
          ],
          "assets": [],
          "transactions": [
            {"id": "0a4f8e2c-1b3d-4e5f-8a9b-0c1d2e3f4a5b", "portfolio": "main", "type": "buy", "assetId": "bitcoin", "amount": "0.5", "price": "42000", "fee": "0", "currency": "USD", "date": "2024-01-15T00:00:00Z"}
          ],
          "watchlist": [],
          "manualPrices": [],
          "cashAccounts": [ {"name": "broker", "balance": "12.50", "nested": {"deep": [null, true, -1.5e3]}} ]
        }

        """

    @Test func unknownTopLevelKeysOfAVersionOneFileSurviveTheMigration() throws {
        let v1 = String(decoding: try Self.v1Bytes(), as: UTF8.self)
            .replacingOccurrences(of: "\"baseCurrency\": \"USD\",", with: "\"baseCurrency\": \"USD\",\n  \"myNotes\": {\"broker\": \"x\"},")
        #expect(v1.contains("myNotes"))
        let store = Self.store(with: Array(v1.utf8))
        defer { Self.remove(store) }
        try store.update(now: now) { book in
            book.add([record(.buy, "ethereum", "1", price: "2000", on: "2024-01-15")])  // mends the fixture's oversell
            return (true, ())
        }
        let migrated = try store.load()
        #expect(migrated.readVersion == Book.formatVersion)
        #expect(migrated.unknownKeys.map(\.key) == ["myNotes"])
        #expect(migrated.unknownKeys.map { String(decoding: $0.json, as: UTF8.self) } == ["{\"broker\": \"x\"}"])
    }

    @Test func unknownTopLevelKeysSurviveAWriteUnchanged() throws {
        let store = Self.store(with: Array(Self.v2WithUnknownKeys.utf8))
        defer { Self.remove(store) }
        let before = try store.load()
        #expect(before.unknownKeys.map(\.key) == ["futureThing", "cashAccounts"])
        #expect(before.unknownKeys.map { String(decoding: $0.json, as: UTF8.self) }
            == ["{\"a\": [1, 2]}", "[ {\"name\": \"broker\", \"balance\": \"12.50\", \"nested\": {\"deep\": [null, true, -1.5e3]}} ]"])
        try store.update(now: now) { book in
            book.add([record(.sell, "bitcoin", "0.25", price: "50000", on: "2024-02-01")])
            return (true, ())
        }
        let text = String(decoding: try #require(Self.contents(store.path)), as: UTF8.self)
        #expect(text.contains("\"futureThing\": {\"a\": [1, 2]}"))
        #expect(text.contains("\"cashAccounts\": [ {\"name\": \"broker\", \"balance\": \"12.50\", \"nested\": {\"deep\": [null, true, -1.5e3]}} ]"))
        let after = try store.load()
        #expect(after.unknownKeys.map(\.key) == before.unknownKeys.map(\.key))
        #expect(after.unknownKeys.map(\.json) == before.unknownKeys.map(\.json))
        #expect(after.transactions.count == 2)
        // No version-1 copy for a version-2 file.
        #expect(!FileManager.default.fileExists(atPath: Self.backupPath(store)))
        // And once more: still the same.
        try store.update(now: now) { book in
            book.watchlist.append(WatchEntry(coinId: "solana", dateAdded: day("2024-03-01")))
            return (true, ())
        }
        #expect(try store.load().unknownKeys.map(\.json) == before.unknownKeys.map(\.json))
    }

    @Test func aNewerVersionIsRefusedAndNeverOverwritten() throws {
        let newer = Array(Self.v2WithUnknownKeys.replacingOccurrences(of: "\"version\": 2", with: "\"version\": 4").utf8)
        let store = Self.store(with: newer)
        defer { Self.remove(store) }
        let expected = StoreError.Reason.unsupportedVersion(4, highestSupported: 3)
        do {
            _ = try store.load()
            Issue.record("a version-4 file loaded")
        } catch {
            #expect(error.reason == expected)
        }
        do {
            try store.update(now: now) { book in
                book.add([record(.buy, "bitcoin", "1", price: "1", on: "2024-04-01")])
                return (true, ())
            }
            Issue.record("a version-4 file was written")
        } catch let error as StoreError {
            #expect(error.reason == expected)
        }
        #expect(Self.contents(store.path) == newer)
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.directory).filter { !$0.hasPrefix(".") } == ["portfolio.json"])
    }

    // MARK: Null keys

    static func document(_ lines: [String]) -> [UInt8] {
        Array("""
        {
          "format": "bitpal-portfolio",
          "version": 2,
          "defaultPortfolio": "main",
          "portfolios": [
            {"name": "main", "baseCurrency": "USD", "description": null, "active": true, "createdDate": "2024-01-01T00:00:00Z"},
            {"name": "cold", "baseCurrency": "USD", "description": "hardware wallet", "active": true, "createdDate": "2024-01-01T00:00:00Z"}
          ],
          "assets": [],
          "transactions": [
            \(lines.joined(separator: ",\n    "))
          ],
          "watchlist": [],
          "manualPrices": []
        }

        """.utf8)
    }

    @Test func nullKeysMayBeLeftOutAndBothFormsRead() throws {
        let withNulls = [
            #"{"id": "11111111-0000-4000-8000-000000000001", "portfolio": "main", "type": "buy", "assetId": "bitcoin", "amount": "2", "price": "100", "total": null, "fee": "1", "currency": "USD", "date": "2024-01-01T00:00:00Z", "notes": null, "linkedId": null}"#,
            #"{"id": "11111111-0000-4000-8000-000000000002", "portfolio": "main", "type": "transfer-out", "assetId": "bitcoin", "amount": "0.5", "price": null, "total": null, "fee": "0.01", "currency": null, "date": "2024-02-01T00:00:00Z", "notes": null, "linkedId": "11111111-0000-4000-8000-000000000002"}"#,
            #"{"id": "11111111-0000-4000-8000-000000000003", "portfolio": "cold", "type": "transfer-in", "assetId": "bitcoin", "amount": "0.5", "price": null, "total": null, "fee": null, "currency": null, "date": "2024-02-01T00:00:00Z", "notes": null, "linkedId": "11111111-0000-4000-8000-000000000002"}"#,
            #"{"id": "11111111-0000-4000-8000-000000000004", "portfolio": "main", "type": "reward", "assetId": "bitcoin", "amount": "0.01", "price": "3000", "total": null, "fee": null, "currency": "USD", "date": "2024-03-01T00:00:00Z", "notes": "staking", "linkedId": null}"#,
            #"{"id": "11111111-0000-4000-8000-000000000005", "portfolio": "main", "type": "split", "assetId": "bitcoin", "amount": "1", "price": "3", "total": null, "fee": null, "currency": null, "date": "2024-04-01T00:00:00Z", "notes": null, "linkedId": null}"#,
            #"{"id": "11111111-0000-4000-8000-000000000006", "portfolio": "main", "type": "adjustment", "assetId": "bitcoin", "amount": "-0.1", "price": null, "total": null, "fee": null, "currency": null, "date": "2024-05-01T00:00:00Z", "notes": null, "linkedId": null}"#,
        ]
        let withoutNulls = [
            #"{"id": "11111111-0000-4000-8000-000000000001", "portfolio": "main", "type": "buy", "assetId": "bitcoin", "amount": "2", "price": "100", "fee": "1", "currency": "USD", "date": "2024-01-01T00:00:00Z"}"#,
            #"{"id": "11111111-0000-4000-8000-000000000002", "portfolio": "main", "type": "transfer-out", "assetId": "bitcoin", "amount": "0.5", "fee": "0.01", "date": "2024-02-01T00:00:00Z", "linkedId": "11111111-0000-4000-8000-000000000002"}"#,
            #"{"id": "11111111-0000-4000-8000-000000000003", "portfolio": "cold", "type": "transfer-in", "assetId": "bitcoin", "amount": "0.5", "date": "2024-02-01T00:00:00Z", "linkedId": "11111111-0000-4000-8000-000000000002"}"#,
            #"{"id": "11111111-0000-4000-8000-000000000004", "portfolio": "main", "type": "reward", "assetId": "bitcoin", "amount": "0.01", "price": "3000", "currency": "USD", "date": "2024-03-01T00:00:00Z", "notes": "staking"}"#,
            #"{"id": "11111111-0000-4000-8000-000000000005", "portfolio": "main", "type": "split", "assetId": "bitcoin", "amount": "1", "price": "3", "date": "2024-04-01T00:00:00Z"}"#,
            #"{"id": "11111111-0000-4000-8000-000000000006", "portfolio": "main", "type": "adjustment", "assetId": "bitcoin", "amount": "-0.1", "date": "2024-05-01T00:00:00Z"}"#,
        ]
        let a = try PortfolioCodec.decode(Self.document(withNulls), path: "with nulls")
        let b = try PortfolioCodec.decode(Self.document(withoutNulls), path: "without nulls")
        #expect(a == b)
        #expect(a.transactions.count == 6)
        #expect(a.transactions.map(\.type) == [.buy, .transferOut, .transferIn, .reward, .split, .adjustment])
        #expect(a.transactions[1].currency == nil && a.transactions[1].priceValue == nil && a.transactions[1].feeValue == fixed("0.01"))
        #expect(a.transactions[2].feeValue == nil && a.transactions[2].linkedId == a.transactions[1].id)
        #expect(a.transactions[3].feeValue == nil && a.transactions[3].notes == "staking")
        #expect(a.transactions[5].negative && a.transactions[5].amount == dec("-0.1"))
        #expect(a.checked(now: now).problems.isEmpty)
        // The writer leaves the null keys out, and reads what it wrote as it was.
        let encoded = PortfolioCodec.encode(a)
        let lines = String(decoding: encoded, as: UTF8.self).split(separator: "\n").filter { $0.contains("\"type\": ") }
        #expect(lines.count == 6)
        #expect(lines.allSatisfy { !$0.contains("null") })
        #expect(try PortfolioCodec.decode(encoded, path: "encoded") == a)
        #expect(PortfolioCodec.encode(b) == encoded)
    }

    // MARK: Every kind, round trip

    static func everyKind() -> Book {
        let apple = Asset(id: "AAPL", name: "Apple Inc.", type: .stock, currency: "USD", market: "NASDAQ", notes: "a \"note\"",
                          createdDate: day("2024-01-01T09:30:00Z"))
        let gold = Asset(id: "GOLD", name: "Gold bar", type: .commodity, createdDate: day("2024-01-02"))
        var txs = [
            record(.buy, "bitcoin", "1.5", price: "40000.123456789012345678", fee: "12.5", on: "2024-01-01", notes: "ünïcödé\t\"quoted\""),
            record(.buy, "AAPL", "3", total: "541.20", on: "2024-01-02"),
            record(.buy, "GOLD", "0.000000000000000001", price: "99999999999999999999.999999999999999999", on: "2024-01-02"),
            record(.sell, "bitcoin", "0.25", price: "50000", fee: "5", on: "2024-01-03T10:11:12.345Z"),
            record(.sell, "AAPL", "1", price: "190", total: "189.99", on: "2024-01-04"),
            record(.transferIn, "ethereum", "2", price: "0", fee: "1.25", on: "2024-01-05"),
            record(.transferOut, "ethereum", "0.5", fee: "0.001", on: "2024-01-06"),
            record(.reward, "ethereum", "0.01", price: "3000", on: "2024-01-07"),
            record(.dividend, "AAPL", "2.40", fee: "0.36", on: "2024-01-08"),
            record(.interest, "GOLD", "1", on: "2024-01-09"),
            record(.adjustment, "bitcoin", "0.001", on: "2024-01-10"),
            record(.adjustment, "ethereum", "-0.01", on: "2024-01-11"),
            record(.split, "AAPL", "4", on: "2024-01-12"),
            record(.split, "bitcoin", "1", price: "3", on: "2024-01-13"),
        ]
        txs += swapLegs("ethereum", "0.5", "bitcoin", "0.05", value: "1500", fee: "3", on: "2024-01-14")
        txs += moveLegs("bitcoin", "0.1", from: "main", to: "cold", on: "2024-01-15")
        txs += [record(.deposit, "", "1000", on: "2024-01-16", portfolio: "broker", notes: "initial capital"),
                record(.withdrawal, "", "100.5", on: "2024-01-17", portfolio: "broker"),
                record(.interest, "", "1.5", fee: "0.2", on: "2024-01-18", portfolio: "broker"),
                record(.expense, "", "2.5", on: "2024-01-19", portfolio: "broker", notes: "account fee"),
                record(.spend, "ethereum", "0.1", price: "3100", fee: "0.5", on: "2024-01-20"),
                record(.fee, "ethereum", "0.001", on: "2024-01-21")]
        var book = Book(transactions: txs, watchlist: [WatchEntry(coinId: "solana", dateAdded: day("2024-01-01T00:00:00.001Z"))],
                        manualPrices: [Quote(coinId: "AAPL", price: dec("187.5"), time: day("2024-01-16"), source: .manual),
                                       Quote(coinId: "GOLD", price: dec("2000.000000000000000001"), time: day("2024-01-16"), source: .manual)],
                        portfolios: [Portfolio(name: "main"),
                                     Portfolio(name: "cold", description: "hardware wallet", active: false, createdDate: day("2024-01-03")),
                                     Portfolio(name: "broker", trackCash: true)],
                        assets: [apple, gold], defaultPortfolio: "cold")
        book.unknownKeys = [("futureThing", Array("{\"a\": [1, 2]}".utf8))]
        return book
    }

    @Test func everyKindSurvivesARoundTrip() throws {
        let book = Self.everyKind()
        #expect(book.checked(now: now).problems.isEmpty)
        #expect(Set(book.transactions.map(\.type)) == Set(TransactionType.allCases))
        let encoded = PortfolioCodec.encode(book)
        let decoded = try PortfolioCodec.decode(encoded, path: "every kind")
        #expect(decoded == book)
        for (a, b) in zip(decoded.transactions, book.transactions) { #expect(a == b, "\(b.type.rawValue) \(b.assetId)") }
        #expect(decoded.readVersion == Book.formatVersion)
        #expect(PortfolioCodec.encode(decoded) == encoded)
    }

    @Test func everyKindSurvivesTheStore() throws {
        let store = PortfolioStore(directory: scratchDirectory())
        defer { Self.remove(store) }
        let book = Self.everyKind()
        try store.update(now: now) { stored in
            stored = book
            return (true, ())
        }
        #expect(try store.load() == book)
        #expect(!FileManager.default.fileExists(atPath: Self.backupPath(store)))
    }
}

/// A swap or a move in a hand-edited store stands or falls whole.
@Suite struct LinkedLegsCheckTests {
    @Test func aSwapWhoseSellOversellsLeavesOutItsBuyToo() {
        var history = [record(.buy, "ethereum", "1", price: "2000", on: "2024-01-01")]
        history += swapLegs("ethereum", "2", "bitcoin", "0.1", value: "4000", on: "2024-02-01")
        let checked = Book(transactions: history).checked(now: day("2024-06-01"))
        #expect(checked.problems.map(\.rule) == [.oversell, .partnerLeftOut])
        #expect(checked.problems.map(\.index) == [1, 2])
        #expect(checked.ledger.positions[key("bitcoin")] == nil)
        #expect(checked.ledger.positions[key("ethereum")]?.quantity == 1)
    }

    @Test func aMoveWhoseTransferOutBreaksARuleLeavesOutItsTransferIn() {
        var book = Book(transactions: [record(.buy, "ethereum", "1", price: "2000", on: "2024-01-01")])
        book.portfolios.append(Portfolio(name: "cold"))
        var legs = moveLegs("ethereum", "0.5", from: "main", to: "cold", on: "2024-02-01")
        legs[0].date = day("2030-01-01")  // a hand edit: the transfer-out is in the future
        book.transactions += legs
        let checked = book.checked(now: day("2024-06-01"))
        #expect(checked.problems.map(\.rule) == [.futureDate, .partnerLeftOut])
        #expect(checked.ledger.positions[key("ethereum", in: "cold")] == nil)
        #expect(checked.ledger.positions[key("ethereum")]?.quantity == 1)
    }
}
