import Foundation
@testable import PortfolioCore
import Testing

/// The store's shortcuts give what the plain way gives: `loadSettings` reading only the start of
/// the file gives what decoding the whole file gives (values and errors alike).
@Suite struct StoreFastPathTests {
    static func store(with bytes: [UInt8]) -> PortfolioStore {
        let store = PortfolioStore(directory: scratchDirectory())
        _ = FileManager.default.createFile(atPath: store.path, contents: Data(bytes))
        return store
    }

    static func remove(_ store: PortfolioStore) { try? FileManager.default.removeItem(atPath: store.directory) }

    /// A book with `assets` registered assets (each ~150 bytes of settings) and `count` records.
    static func book(assets: Int, count: Int) -> Book {
        var book = Book(portfolios: [Portfolio(name: "main"), Portfolio(name: "trading", description: "x")])
        book.assets = (0..<assets).map { Asset(id: "A\($0)", name: "Asset number \($0) with a longer name", type: .stock, createdDate: day("2024-01-01")) }
        book.transactions = (0..<count).map { i in
            record(.buy, "bitcoin", "1.5", price: "\(100 + i)", on: "2024-02-01", portfolio: i % 2 == 0 ? "main" : "trading")
        }
        book.defaultPortfolio = "trading"
        return book
    }

    /// What reading the whole file the old way gives: the book, or the error's description.
    static func settingsTheWholeWay(_ bytes: [UInt8]) -> Result<Book, StoreError> {
        do { return .success(try PortfolioCodec.decode(ByteBuffer(copying: bytes), path: "p", settingsOnly: true)) } catch { return .failure(error) }
    }

    static func settingsByPrefix(_ bytes: [UInt8]) -> Result<Book, StoreError> {
        let store = Self.store(with: bytes)
        defer { Self.remove(store) }
        do { return .success(try store.loadSettings()) } catch {
            // The message names the store's path; compare the reason.
            return .failure(StoreError(path: "p", reason: error.reason))
        }
    }

    static func expectSame(_ bytes: [UInt8], _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        switch (settingsTheWholeWay(bytes), settingsByPrefix(bytes)) {
        case let (.success(a), .success(b)):
            #expect(a == b, "\(what)", sourceLocation: sourceLocation)
            #expect(a.readVersion == b.readVersion && b.transactions.isEmpty, "\(what)", sourceLocation: sourceLocation)
        case let (.failure(a), .failure(b)):
            #expect(a == b, "\(what)", sourceLocation: sourceLocation)
        case let (a, b):
            Issue.record("\(what): \(a) against \(b)", sourceLocation: sourceLocation)
        }
    }

    @Test func settingsFromAPrefixAreTheSettingsOfTheWholeFile() {
        // Settings shorter and longer than the first piece read (64 KiB), and growing past it several times.
        for assets in [0, 3, 400, 2_000, 9_000] {
            let bytes = PortfolioCodec.encode(Self.book(assets: assets, count: 300))
            Self.expectSame(bytes, "\(assets) assets")
            // Cut anywhere: the same error, or the same settings when the cut is past the transactions key.
            for cut in [10, bytes.count / 3, bytes.count / 2, bytes.count - 2] {
                Self.expectSame(Array(bytes[0..<cut]), "\(assets) assets cut at \(cut)")
            }
        }
    }

    @Test func settingsOfHandMadeLayoutsAndBrokenFiles() throws {
        let big = String(repeating: "x", count: 100_000)
        let docs = [
            // The version after the transactions: the whole file is read.
            #"{"format": "bitpal-portfolio", "portfolios": [{"name": "main"}], "transactions": [], "version": 2}"#,
            #"{"transactions": [{"id": 1}], "format": "bitpal-portfolio", "version": 2, "portfolios": [{"name": "main"}]}"#,
            // A newer version, a broken document, an unknown key that is larger than the first piece.
            #"{"format": "bitpal-portfolio", "version": 9, "portfolios": [{"name": "main"}], "transactions": []}"#,
            #"{"format": "bitpal-portfolio", "version": 2, "portfolios": [{"name": "main"}], "x": "\#(big)", "transactions": [}"#,
            #"{"format": "bitpal-portfolio", "version": 2, "portfolios": [{"name": "main"}], "x": "\#(big)"#,
            #"{"format": "bitpal-portfolio", "version": 2, "defaultPortfolio": "nope", "portfolios": [{"name": "main"}], "transactions": []}"#,
            // Garbage after the transactions key, as before, does not matter to the settings.
            #"{"format": "bitpal-portfolio", "version": 2, "portfolios": [{"name": "main"}], "transactions": [garbage"#,
            #"{"format": "bitpal-portfolio", "version": 1, "transactions": []}"#,
            "", "{", "\u{FEFF}{}",
        ]
        for doc in docs { Self.expectSame(Array(doc.utf8), String(doc.prefix(120))) }
        let missing = PortfolioStore(directory: scratchDirectory() + "/none")
        #expect(try missing.loadSettings() == Book())
    }
}
