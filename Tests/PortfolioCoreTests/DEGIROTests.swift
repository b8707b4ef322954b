import Foundation
import PortfolioCore
import XCTest

/// `import --format degiro`: DEGIRO's Account.csv and Transactions.csv, from the real rows quoted in
/// the import-formats research (section 3.2).
final class DEGIROTests: XCTestCase {
    /// Dutch headers, decimal commas: a cash sweep pair, an iDEAL deposit and its reservation, a USD
    /// dividend with its tax, and a USD buy (trade, fee and two currency legs, one order id wrapped
    /// onto a line of its own) (Export-To-Ghostfolio's samples/degiro-export.csv); a sale with French
    /// transaction tax and a dividend converted by AutoFX at the same minute (wealthfolio-degiro-importer).
    static let accountNL = """
    Datum,Tijd,Valutadatum,Product,ISIN,Omschrijving,FX,Mutatie,,Saldo,,Order Id
    19-12-2022,18:33,19-12-2022,,,"Overboeking van uw geldrekening bij flatexDEGIRO Bank 26,45 EUR",,,,EUR,"1,35",
    19-12-2022,18:33,19-12-2022,FLATEX EURO BANKACCOUNT,NLFLATEXACNT,Degiro Cash Sweep Transfer,,EUR,"26,45",EUR,"27,80",
    17-12-2022,09:51,16-12-2022,,,iDEAL Deposit,,EUR,"27,80",EUR,"1,35",
    17-12-2022,09:51,16-12-2022,,,Reservation iDEAL / Sofort Deposit,,EUR,"-27,80",EUR,"-26,45",
    16-12-2022,09:05,15-12-2022,COCA-COLA COMPANY (THE,US1912161007,Dividend,,USD,"0,44",USD,"1,36",
    16-12-2022,09:05,15-12-2022,COCA-COLA COMPANY (THE,US1912161007,Dividendbelasting,,USD,"-0,07",USD,"0,92",
    15-12-2022,16:55,15-12-2022,VICI PROPERTIES INC. C,US9256521090,Valuta Creditering,"1,0624",USD,"33,90",USD,"0,00",5925d76b-eb36-46e3-
    ,,,,,,,,,,,b017-a61a6d03c3e7
    15-12-2022,16:55,15-12-2022,VICI PROPERTIES INC. C,US9256521090,Valuta Debitering,,EUR,"-31,91",EUR,"0,07",5925d76b-eb36-46e3-b017-a61a6d03c3e7
    15-12-2022,16:55,15-12-2022,VICI PROPERTIES INC. C,US9256521090,DEGIRO Transactiekosten en/of kosten van derden,,EUR,"-1,00",EUR,"31,98",5925d76b-eb36-46e3-b017-a61a6d03c3e7
    15-12-2022,16:55,15-12-2022,VICI PROPERTIES INC. C,US9256521090,"Koop 1 @ 33,9 USD",,USD,"-33,90",USD,"-33,90",5925d76b-eb36-46e3-b017-a61a6d03c3e7

    """

    static let accountNL2026 = """
    19-11-2025,14:48,19-11-2025,LVMH MOET HENNESSY VUITTON SE,FR0000121014,Transactiebelasting,,EUR,"-1,29",EUR,"3.383,45",7bf17093-06b7-4eec-a871-edd5be3cb4a4
    19-11-2025,14:48,19-11-2025,LVMH MOET HENNESSY VUITTON SE,FR0000121014,DEGIRO Transactiekosten en/of kosten van derden,,EUR,"-4,00",EUR,"3.384,74",7bf17093-06b7-4eec-a871-edd5be3cb4a4
    19-11-2025,14:48,19-11-2025,LVMH MOET HENNESSY VUITTON SE,FR0000121014,"Verkoop 4 @ 645,3000 EUR",,EUR,"2.581,20",EUR,"3.388,74",7bf17093-06b7-4eec-a871-edd5be3cb4a4
    23-04-2026,12:31,22-04-2026,,,Valuta Creditering,,EUR,"11,36",EUR,"2.555,55",
    23-04-2026,12:31,22-04-2026,,,Valuta Debitering,"1,0951",USD,"-12,44",USD,"0,00",
    23-04-2026,12:31,22-04-2026,JOHNSON & JOHNSON,US4781601046,Dividendbelasting,,USD,"-2,19",USD,"12,44",
    23-04-2026,12:31,22-04-2026,JOHNSON & JOHNSON,US4781601046,Dividend,,USD,"14,63",USD,"14,63",

    """

    /// English headers, decimal points (GhostfolioSidekick's DeGiro fixtures): a USD buy paid from
    /// GBP with two fee rows, a dividend whose tax row comes first; rows from the mixed
    /// Export-To-Ghostfolio sample written with points: a connection fee and an AutoFX pair.
    static let accountEN = """
    Date,Time,Value date,Product,ISIN,Description,FX,Change,,Balance,,Order Id
    06-11-2023,15:33,06-11-2019,HP INC,US40434L1052,FX Credit,1.2868,USD,106.55,USD,0,dbe4ec4d-6a6e-4315-b661-820dd1f1d58d
    06-11-2023,15:33,06-11-2019,HP INC,US40434L1052,FX Debit,,GBP,-82.8,GBP,138.89,dbe4ec4d-6a6e-4315-b661-820dd1f1d58d
    06-11-2023,15:33,06-11-2019,HP INC,US40434L1052,DEGIRO Transaction and/or third party fees,,GBP,-0.43,GBP,221.69,dbe4ec4d-6a6e-4315-b661-820dd1f1d58d
    06-11-2023,15:33,06-11-2019,HP INC,US40434L1052,DEGIRO Transaction and/or third party fees,,GBP,-0.02,GBP,222.12,dbe4ec4d-6a6e-4315-b661-820dd1f1d58d
    06-11-2023,15:33,06-11-2019,HP INC,US40434L1052,Buy 5 HP Inc@21.31 USD (US40434L1052),,USD,-106.55,USD,-106.55,dbe4ec4d-6a6e-4315-b661-820dd1f1d58d
    04-07-2024,07:40,03-07-2024,HP INC,US40434L1052,Dividend Tax,,USD,-0.21,USD,1.17,
    04-07-2024,07:40,03-07-2024,HP INC,US40434L1052,Dividend,,USD,1.38,USD,1.38,
    05-02-2024,07:16,31-01-2024,,,DEGIRO Aansluitingskosten 2024 (Nasdaq - NDQ),,EUR,-2.50,EUR,-6.28,
    01-01-2025,06:46,31-12-2024,,,FX Credit,,EUR,12.28,EUR,217.01,
    01-01-2025,06:46,31-12-2024,,,FX Debit,1.0379,USD,-12.75,USD,0.00,
    14-09-2023,08:49,14-09-2023,PROSUS NV,NL0013654783,STOCK DIVIDEND: Koop 999 @ 0 EUR,,EUR,0.00,EUR,9999.99,

    """

    /// Portuguese headers after a byte-order mark (GhostfolioSidekick), and the Portuguese currency pair
    /// Export-To-Ghostfolio's sample has (one leg's name garbled by a Latin-1 reading, as there).
    static let accountPT = "\u{FEFF}" + """
    Data,Hora,Data Valor,Produto,ISIN,Descrição,T.,Mudança,,Saldo,,ID da Ordem
    06-07-2023,09:39,06-07-2023,VANGUARD S&P500,IE00B3XXRP09,Comissões de transação DEGIRO e/ou taxas de terceiros,,EUR,-1.00,EUR,21.70,b7ab0494-1b46-4e2f-9bd2-f79e6c87cb5a
    06-07-2023,09:39,06-07-2023,VANGUARD S&P500,IE00B3XXRP09,"Compra 1 VANGUARD S&P500@77,3 EUR (IE00B3XXRP09)",,EUR,-77.30,EUR,21.70,b7ab0494-1b46-4e2f-9bd2-f79e6c87cb5a
    03-01-2023,14:06,31-12-2022,,,Custo de Conectividade DEGIRO 2023 (Tradegate AG - TDG),,EUR,-2.50,EUR,102.18,
    19-09-2024,20:20,19-09-2024,APPLE INC,US0378331005,Levantamento de divisa,1.1191,USD,-457.52,USD,0.00,711b1ad7-a370-4c88-bc86-074aada4a278
    19-09-2024,20:20,19-09-2024,APPLE INC,US0378331005,CrÃ©dito de divisa,,EUR,408.83,EUR,638.81,711b1ad7-a370-4c88-bc86-074aada4a278

    """

    /// The AutoFX layout (decimal commas, an empty cell before the order id, a ragged sale).
    static let transactionsNew = """
    Date,Time,Product,ISIN,Reference exchange,Venue,Quantity,Price,,Local value,,Value EUR,Exchange rate,AutoFX Fee,Transaction and/or third party fees EUR,Total EUR,Order ID,
    07-01-2026,09:31,ISHARES MSCI EM ASIA UCITS ETF USD (ACC),IE00B5L8K969,XET,XETA,9,"213,4500",EUR,"-1921,05",EUR,"-1921,05",,"0,00","-3,00","-1924,05",,b93f205d-c38b-4a67-adb7-c9aa08626746
    15-09-2025,19:33,ADR ON JD.COM INC CLASS A,US47215P1066,NDQ,ARCX,18,"33,7500",USD,"-607,50",USD,"-516,32","1,1766","-1,29","-2,00","-518,32",,fda177bc-4080-4525-862e-f10aadfb4a4f
    29-10-2024,15:20,VOLKSWAGEN AG PREFERRED,DE0007664039,XET,XETA,-23,"89,5400",EUR,"2059,42",EUR,"2059,42",,"0,00","-4,90","2054,52",,269a6fcb

    """

    /// German headers, the older layout with a currency beside every amount, decimal points (degiro-pit's example).
    static let transactionsDE = """
    Datum,Uhrzeit,Produkt,ISIN,Referenzbörse,Anzahl,,Kurs,,Wert in Lokalwährun,,Wert,Wechselkurs,,Transaktionskost,,Gesamt,Order-ID
    20-12-2020,16:18,SAP SE,DE0007164600,XET,-30,EUR,106.0800,EUR,3182.40,EUR,3182.40,,EUR,-2.60,EUR,3181.8,1x23xxx1-x123-123x-x3x5-123xx123x2xx
    26-10-2020,15:30,SAP SE,DE0007164600,XET,30,EUR,97.3900,EUR,-2921.70,EUR,-2921.70,,EUR,-2.53,EUR,-2924.23,12x3bxx1-2xx3-1234-9x99-dxxx1b1234b1

    """

    func read(_ text: String, tracksCash: Bool = true) throws -> PresetRows {
        try StatementImport.rows(Array(text.utf8), format: .degiro, options: StatementOptions(tracksCash: tracksCash))
    }

    /// `type asset amount currency fee F total T date`, and ` linked` for a cash exchange's leg.
    func describe(_ rows: [ImportRow]) -> [String] {
        rows.map { r in
            let f = r.fields
            return [f[.type], f[.assetId], f[.amount], f[.currency]].map { $0 ?? "-" }.joined(separator: " ")
                + " fee \(f[.fee] ?? "0")" + (f[.total].map { " total \($0)" } ?? "") + " \(f[.date] ?? "?")"
                + (f[.linkedId] == nil ? "" : " linked")
        }
    }

    func dictionary(_ pairs: [(String, Int)]) -> [String: Int] { Dictionary(pairs, uniquingKeysWith: +) }

    func testAccountWithDecimalCommasJoinsTheWrappedOrderIdTaxAndLegs() throws {
        let result = try read(Self.accountNL + Self.accountNL2026)
        XCTAssertEqual(describe(result.rows).sorted(), [
            // Amsterdam in December is UTC+1, in April UTC+2.
            "deposit - 11.36 EUR fee 0 2026-04-23T10:31:00Z linked",
            "deposit - 27.8 EUR fee 0 2022-12-17T08:51:00Z",
            "deposit - 33.9 USD fee 0 2022-12-15T15:55:00Z linked",
            "dividend US1912161007 0.44 USD fee 0.07 2022-12-16T08:05:00Z",
            "dividend US4781601046 14.63 USD fee 2.19 2026-04-23T10:31:00Z",
            "expense - 1.29 EUR fee 0 2025-11-19T13:48:00Z",
            "withdrawal - 12.44 USD fee 0 2026-04-23T10:31:00Z linked",
            "withdrawal - 31.91 EUR fee 0 2022-12-15T15:55:00Z linked",
        ])
        XCTAssertEqual(dictionary(result.kinds), ["dividend": 2, "deposit": 1, "expense": 1, "cash exchange": 2])
        XCTAssertEqual(dictionary(result.skipped), [
            "cash sweep (a row without an amount)": 1, "cash sweep": 1, "deposit reservation (it reverses itself)": 1,
            "trade (import Transactions.csv for trades)": 2, "trade fee (import Transactions.csv for trades)": 2,
        ])
        // The dividends' assets are registered from their ISIN and product.
        XCTAssertEqual(result.assets.map(\.id), ["US1912161007", "US4781601046"])
        XCTAssertEqual(result.assets.map(\.name), ["COCA-COLA COMPANY (THE", "JOHNSON & JOHNSON"])
        XCTAssertEqual(result.assets.map(\.currency), ["USD", "USD"])
        // The two legs of a conversion are linked to each other.
        let legs = result.rows.filter { $0.fields[.linkedId] != nil && $0.fields[.currency] == "USD" && $0.fields[.type] == "deposit" }
        XCTAssertEqual(legs.count, 1)
        let pair = result.rows.filter { $0.fields[.linkedId] == legs.first?.fields[.linkedId] }
        XCTAssertEqual(pair.compactMap { $0.fields[.type] }.sorted(), ["deposit", "withdrawal"])
    }

    func testAccountWithDecimalPointsAndEnglishWords() throws {
        let result = try read(Self.accountEN)
        XCTAssertEqual(describe(result.rows).sorted(), [
            "deposit - 106.55 USD fee 0 2023-11-06T14:33:00Z linked",
            "deposit - 12.28 EUR fee 0 2025-01-01T05:46:00Z linked",
            "dividend US40434L1052 1.38 USD fee 0.21 2024-07-04T05:40:00Z",
            "expense - 2.5 EUR fee 0 2024-02-05T06:16:00Z",
            "withdrawal - 12.75 USD fee 0 2025-01-01T05:46:00Z linked",
            "withdrawal - 82.8 GBP fee 0 2023-11-06T14:33:00Z linked",
        ])
        XCTAssertEqual(dictionary(result.skipped), [
            "trade (import Transactions.csv for trades)": 1, "trade fee (import Transactions.csv for trades)": 2,
            "corporate action (not imported)": 1,
        ])
    }

    func testAccountInPortugueseWithAByteOrderMark() throws {
        XCTAssertEqual(StatementImport.recognise(Array(Self.accountPT.utf8)), .degiro)
        let result = try read(Self.accountPT)
        XCTAssertEqual(describe(result.rows).sorted(), [
            "deposit - 408.83 EUR fee 0 2024-09-19T18:20:00Z linked",
            "expense - 2.5 EUR fee 0 2023-01-03T13:06:00Z",
            "withdrawal - 457.52 USD fee 0 2024-09-19T18:20:00Z linked",
        ])
        XCTAssertEqual(dictionary(result.skipped), [
            "trade (import Transactions.csv for trades)": 1, "trade fee (import Transactions.csv for trades)": 1,
        ])
    }

    func testGermanAccountHeaderIsRecognisedAndALoneLegIsCounted() throws {
        let text = "Datum,Uhrze,Valutadatum,Produkt,ISIN,Beschreibung,FX,Änderung,,Saldo,,Order-ID\n"
            + "21-01-2022,07:39,20-01-2022,,,Währungswechsel (Ausbuchung),\"1,1340\",USD,\"-0,60\",USD,\"0,00\",\n"
        XCTAssertEqual(StatementImport.recognise(Array(text.utf8)), .degiro)
        let result = try read(text)
        XCTAssertTrue(result.rows.isEmpty)
        XCTAssertEqual(dictionary(result.skipped), ["currency conversion leg (no leg to pair with)": 1])
    }

    func testTwoConversionsInTheSameMinutePairByTheirRates() throws {
        // AutoFX converting USD and GBP dividends at 06:46: EUR 12.28 for USD 12.75 at 1.0379 (the real
        // pair) and EUR 5.93 for GBP 4.93 at 0.8320 (its second pair, synthetic); a lone USD leg is left.
        let text = """
        Date,Time,Value date,Product,ISIN,Description,FX,Change,,Balance,,Order Id
        01-01-2025,06:46,31-12-2024,,,FX Credit,,EUR,5.93,EUR,223.94,
        01-01-2025,06:46,31-12-2024,,,FX Credit,,EUR,12.28,EUR,217.01,
        01-01-2025,06:46,31-12-2024,,,FX Debit,1.0379,USD,-12.75,USD,0.00,
        01-01-2025,06:46,31-12-2024,,,FX Debit,0.8320,GBP,-4.93,GBP,0.00,
        01-01-2025,06:46,31-12-2024,,,FX Debit,1.0379,USD,-3.00,USD,0.00,

        """
        let result = try read(text)
        XCTAssertEqual(describe(result.rows), [
            "withdrawal - 12.75 USD fee 0 2025-01-01T05:46:00Z linked", "deposit - 12.28 EUR fee 0 2025-01-01T05:46:00Z linked",
            "withdrawal - 4.93 GBP fee 0 2025-01-01T05:46:00Z linked", "deposit - 5.93 EUR fee 0 2025-01-01T05:46:00Z linked",
        ])
        XCTAssertEqual(dictionary(result.skipped), ["currency conversion leg (no leg to pair with)": 1])
    }

    func testWithoutCashOnlyTheDividendsAreKept() throws {
        let result = try read(Self.accountNL + Self.accountNL2026, tracksCash: false)
        XCTAssertEqual(describe(result.rows).sorted(), [
            "dividend US1912161007 0.44 USD fee 0.07 2022-12-16T08:05:00Z",
            "dividend US4781601046 14.63 USD fee 2.19 2026-04-23T10:31:00Z",
        ])
        let skipped = dictionary(result.skipped)
        XCTAssertEqual(skipped["deposit (the portfolio does not track cash)"], 1)
        XCTAssertEqual(skipped["expense (the portfolio does not track cash)"], 1)
        XCTAssertEqual(skipped["currency conversion (the portfolio does not track cash)"], 2)
    }

    func testTransactionsInTheAutoFXLayout() throws {
        XCTAssertEqual(StatementImport.recognise(Array(Self.transactionsNew.utf8)), .degiro)
        let result = try read(Self.transactionsNew)
        XCTAssertEqual(describe(result.rows), [
            "buy IE00B5L8K969 9 EUR fee 3 total 1921.05 2026-01-07T08:31:00Z",
            // A USD trade's EUR costs (transaction costs and the AutoFX fee) are an expense of EUR cash.
            "buy US47215P1066 18 USD fee 0 total 607.5 2025-09-15T17:33:00Z",
            "expense - 3.29 EUR fee 0 2025-09-15T17:33:00Z",
            "sell DE0007664039 23 EUR fee 4.9 total 2059.42 2024-10-29T14:20:00Z",
        ])
        XCTAssertEqual(result.rows.compactMap { $0.fields[.price] }, ["213.45", "33.75", "89.54"])
        XCTAssertEqual(result.assets.map(\.id), ["DE0007664039", "IE00B5L8K969", "US47215P1066"])
        XCTAssertEqual(result.assets.map(\.type), [.stock, .etf, .stock])
        XCTAssertEqual(result.assets.map(\.currency), ["EUR", "EUR", "USD"])
        // The order id sits one cell right of its header; the ids come from it and are stable.
        XCTAssertTrue(result.rows.first?.fields[.notes]?.contains("b93f205d-c38b-4a67-adb7-c9aa08626746") ?? false)
        let again = try read(Self.transactionsNew)
        XCTAssertEqual(result.rows.map { $0.fields[.id] }, again.rows.map { $0.fields[.id] })
        XCTAssertEqual(Set(result.rows.compactMap { $0.fields[.id] }).count, 4)
    }

    func testTransactionsInTheOlderGermanLayout() throws {
        XCTAssertEqual(StatementImport.recognise(Array(Self.transactionsDE.utf8)), .degiro)
        let result = try read(Self.transactionsDE)
        XCTAssertEqual(describe(result.rows), [
            "sell DE0007164600 30 EUR fee 2.6 total 3182.4 2020-12-20T15:18:00Z",
            "buy DE0007164600 30 EUR fee 2.53 total 2921.7 2020-10-26T14:30:00Z",
        ])
        XCTAssertEqual(result.rows.compactMap { $0.fields[.price] }, ["106.08", "97.39"])
        XCTAssertTrue(result.skipped.isEmpty)
    }

    func testIdenticalFillsKeepTheirOwnIds() throws {
        // Two fills of one order at the same time, quantity and price are two trades (a row made from the
        // Ahold order of the research's Account.csv, one order filled in parts).
        let row = "10-11-2023,17:10,AHOLD DELHAIZE,NL0011794037,EAM,XAMS,4,\"26,8800\",EUR,\"-107,52\",EUR,\"-107,52\",,\"0,00\",\"0,00\",\"-107,52\",,35d4345a-467c-42bd-848c-f6087737dd36\n"
        let header = Self.transactionsNew.split(separator: "\n").first.map(String.init) ?? ""
        let result = try read(header + "\n" + row + row)
        XCTAssertEqual(result.rows.count, 2)
        XCTAssertEqual(Set(result.rows.compactMap { $0.fields[.id] }).count, 2)
    }

    func testAReversedAndRebookedDividendCountsOnce() throws {
        // Booked with its tax on 16-12, reversed on 19-12 and booked again on 20-12, all with the value
        // date 15-12 (newest first, as DEGIRO writes): one dividend of 0.44 with 0.07 tax, not 0.88.
        let text = """
        Datum,Tijd,Valutadatum,Product,ISIN,Omschrijving,FX,Mutatie,,Saldo,,Order Id
        20-12-2022,07:35,15-12-2022,HP INC,US40434L1052,Dividend,,USD,"0,44",USD,"0,81",
        19-12-2022,07:35,15-12-2022,HP INC,US40434L1052,Dividend,,USD,"-0,44",USD,"0,37",
        16-12-2022,07:40,15-12-2022,HP INC,US40434L1052,Dividendbelasting,,USD,"-0,07",USD,"0,81",
        16-12-2022,07:40,15-12-2022,HP INC,US40434L1052,Dividend,,USD,"0,44",USD,"0,88",

        """
        let result = try read(text)
        XCTAssertEqual(describe(result.rows), ["dividend US40434L1052 0.44 USD fee 0.07 2022-12-16T06:40:00Z"])
        XCTAssertTrue(result.skipped.isEmpty, "\(result.skipped)")
    }

    func testAFileOfNeitherKindIsRefused() {
        XCTAssertThrowsError(try read("Datum,Tijd,Product\n01-01-2024,10:00,X\n")) { error in
            XCTAssertTrue("\(error)".contains("no DEGIRO header found"), "\(error)")
        }
        XCTAssertThrowsError(try read(Self.accountEN.replacingOccurrences(of: "04-07-2024,07:40", with: "2024-07-04,07:40"))) { error in
            XCTAssertTrue("\(error)".contains("is not a DEGIRO date"), "\(error)")
        }
    }
}
