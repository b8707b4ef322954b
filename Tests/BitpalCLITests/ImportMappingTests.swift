import Foundation
import PortfolioCore
import XCTest

/// `import FILE --map MAPPING.json`: any CSV, its columns named by a mapping (the issue's German example).
final class ImportMappingTests: XCTestCase {
    static let mapping = #"""
    {"delimiter": ";", "decimalMark": ",",
     "date": {"column": "Datum", "format": "dd.MM.yyyy", "timeZone": "Europe/Berlin"},
     "kind": {"column": "Vorgang", "values": {"Kauf": "buy", "Verkauf": "sell", "Dividende": "dividend"}},
     "asset": {"column": "Titel"}, "amount": {"column": "Menge"},
     "price": {"column": "Kurs"}, "total": {"column": "Betrag"},
     "fee": {"column": "Gebühren"}, "currency": {"column": "Währung"},
     "note": {"column": "Notiz"}, "id": {"column": "Buchungsnr"}}
    """#

    static let file = """
    Buchungsnr;Datum;Vorgang;Titel;Menge;Kurs;Betrag;Gebühren;Währung;Notiz;Extra
    A-1;02.01.2024;Kauf;AAPL;10;185,20;;1,50;USD;erste;x
    A-2;15.02.2024;Dividende;AAPL;2,40;;;0,36;USD;;x
    A-3;01.03.2024;Verkauf;AAPL;-4;1.234,50;;0;USD;;x

    """

    func sandbox() -> (Sandbox, String, String) {
        let s = Sandbox()
        s.ok(["asset", "add", "AAPL", "--name", "Apple", "--type", "stock"])
        return (s, s.write("mapping.json", Self.mapping), s.write("konto.csv", Self.file))
    }

    func testAMappedCSVImportsAsBitpalsOwnRows() throws {
        let (s, mapping, file) = sandbox()
        let r = s.ok(["import", file, "--map", mapping])
        XCTAssertTrue(r.out.contains("Imported 3 transactions"), r.out)
        let txs = try s.loadPortfolio().transactions
        // Decimal commas, thousands dots, a negative sale made a magnitude; days are days.
        XCTAssertEqual(txs.map(\.type), [.buy, .dividend, .sell])
        XCTAssertEqual(txs.map(\.amountValue.text), ["10", "2.4", "4"])
        XCTAssertEqual(txs.map { $0.priceValue?.text }, ["185.2", nil, "1234.5"])
        XCTAssertEqual(txs.map { $0.feeValue?.text }, ["1.5", "0.36", "0"])
        XCTAssertEqual(txs.map { $0.day.map(ISODate.dayText) }, ["2024-01-02", "2024-02-15", "2024-03-01"])
        XCTAssertEqual(txs.first?.notes, "erste")
        // The file's own ids keep a second import from adding anything.
        XCTAssertTrue(s.ok(["import", file, "--map", mapping]).out.contains("Imported 0 transactions"))
        XCTAssertEqual(try s.loadPortfolio().transactions.count, 3)
    }

    func testAMappingItCannotFollowIsRefusedNamingWhat() throws {
        let (s, mapping, _) = sandbox()
        // A column the file lacks, named; nothing written.
        let wrong = s.write("other.csv", "Datum;Vorgang;Titel;Menge\n02.01.2024;Kauf;AAPL;1\n")
        let missing = s.run(["import", wrong, "--map", mapping])
        XCTAssertEqual(missing.code, .failure)
        XCTAssertTrue(missing.err.contains("no column 'Kurs'"), missing.err)
        // A word the mapping does not know, and a date not written as the format says.
        let odd = s.write("odd.csv", "Buchungsnr;Datum;Vorgang;Titel;Menge;Kurs;Betrag;Gebühren;Währung;Notiz\n"
            + "B-1;2024-01-02;Kauf;AAPL;1;1;;;USD;\nB-2;03.01.2024;Tausch;AAPL;1;1;;;USD;\n")
        let r = s.run(["import", odd, "--map", mapping])
        XCTAssertTrue(r.err.contains("line 2: date '2024-01-02' is not written as dd.MM.yyyy"), r.err)
        XCTAssertTrue(r.err.contains("line 3: kind 'Tausch' is not among the mapping's values"), r.err)
        XCTAssertEqual(try s.loadPortfolio().transactions.count, 0)
        // A mapping with an unknown key or kind, or without a needed column, is refused whole.
        let bad = s.write("bad.json", #"{"date": {"column": "D"}, "kind": {"column": "K", "values": {"X": "purchase"}}, "amount": {"column": "A"}, "colour": 1}"#)
        let refused = s.run(["import", s.write("x.csv", "D\n"), "--map", bad])
        XCTAssertEqual(refused.code, .failure)
        for words in ["unknown key 'colour'", "kind 'purchase' (for 'X') is not one of", "names no column for asset"] {
            XCTAssertTrue(refused.err.contains(words), refused.err)
        }
        XCTAssertEqual(s.run(["import", odd, "--map", mapping, "--format", "csv"]).code, .usage)
    }

    func testTimesInTheMappingsZoneAreInstants() throws {
        let s = Sandbox()
        let mapping = s.write("m.json", #"{"date": {"column": "When", "format": "yyyy-MM-dd HH:mm", "timeZone": "Asia/Tokyo"}, "kind": {"column": "Side"}, "asset": {"column": "Coin"}, "amount": {"column": "Qty"}, "price": {"column": "Px"}}"#)
        let file = s.write("t.csv", "When,Side,Coin,Qty,Px\n2024-01-15 09:00,BUY,btc,0.5,\"42,000.00\"\n")
        s.ok(["import", file, "--map", mapping])
        let t = try XCTUnwrap(try s.loadPortfolio().transactions.first)
        XCTAssertEqual(ISODate.format(t.date), "2024-01-15T00:00:00Z")
        XCTAssertNil(t.day)
        XCTAssertEqual(t.priceValue?.text, "42000")
    }

    func testRowsOfOneEventAreGroupedByTheirOrderID() throws {
        let s = Sandbox()
        s.ok(["asset", "add", "AAPL", "--name", "Apple", "--type", "stock"])
        let mapping = s.write("grouped.json", #"""
        {"delimiter": ";", "decimalMark": ",", "date": {"column": "Datum", "format": "dd.MM.yyyy"},
         "kind": {"column": "Vorgang", "values": {"Kauf": "buy", "Gebühr": "expense", "Dividende": "dividend", "Quellensteuer": "expense"}},
         "asset": {"column": "Titel"}, "amount": {"column": "Menge"}, "price": {"column": "Kurs"}, "currency": {"column": "Währung"},
         "group": {"column": "Auftrag"}}
        """#)
        // Two fills and a fee row of one order; a dividend and its tax row; a row of no order stays alone.
        let file = s.write("orders.csv", """
        Auftrag;Datum;Vorgang;Titel;Menge;Kurs;Währung
        O-1;02.01.2024;Kauf;AAPL;5;100;USD
        O-1;02.01.2024;Gebühr;;-2,00;;USD
        O-1;02.01.2024;Kauf;AAPL;5;101,50;USD
        D-1;15.02.2024;Dividende;AAPL;2,40;;USD
        D-1;15.02.2024;Quellensteuer;;-0,36;;USD
        ;01.03.2024;Kauf;AAPL;1;110;USD

        """)
        XCTAssertTrue(s.ok(["import", file, "--map", mapping]).out.contains("Imported 3 transactions"))
        let txs = try s.loadPortfolio().transactions
        XCTAssertEqual(txs.map(\.type), [.buy, .dividend, .buy])
        // 5 × 100 + 5 × 101.50 = 1007.50 for 10 units, the fee row its fee; the tax row the dividend's tax.
        XCTAssertEqual(txs.map(\.amountValue.text), ["10", "2.4", "1"])
        XCTAssertEqual(txs.first?.totalValue?.text, "1007.5")
        XCTAssertEqual(txs.first?.priceValue?.text, "100.75")
        XCTAssertEqual(txs.map { $0.feeValue?.text }, ["2", "0.36", "0"])
        // The order id makes the event's id: a second import adds nothing.
        XCTAssertTrue(s.ok(["import", file, "--map", mapping]).out.contains("Imported 0 transactions"))
    }

    func testANegativeDividendIsNeverMadePositiveAndAZoneNeedsAFormat() throws {
        let s = Sandbox()
        s.ok(["asset", "add", "AAPL", "--name", "Apple", "--type", "stock"])
        let mapping = s.write("m.json", #"{"date": {"column": "D"}, "kind": {"column": "K"}, "asset": {"column": "A"}, "amount": {"column": "N"}}"#)
        let file = s.write("d.csv", "D,K,A,N\n2024-02-01,dividend,AAPL,2.40\n2024-02-05,dividend,AAPL,-2.40\n")
        let r = s.run(["import", file, "--map", mapping])
        XCTAssertEqual(r.code, .failure)
        XCTAssertTrue(r.err.contains("line 3: a dividend row of -2.40 (negative: a reversal) is not one bitpal imports"), r.err)
        XCTAssertEqual(try s.loadPortfolio().transactions.count, 0)
        let zoned = s.write("z.json", #"{"date": {"column": "D", "timeZone": "Europe/Berlin"}, "kind": {"column": "K"}, "asset": {"column": "A"}, "amount": {"column": "N"}}"#)
        let z = s.run(["import", file, "--map", zoned])
        XCTAssertTrue(z.err.contains("'date.timeZone' needs 'date.format'"), z.err)
    }
}
