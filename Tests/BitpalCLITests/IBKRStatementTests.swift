import Foundation
import PortfolioCore
import XCTest

/// `import --format ibkr`: an Activity Flex Query in CSV, built from the real rows in the research
/// (import-formats.md 3.1: Portfolio Performance's statement 18, ghostfolio's VTI buy, Export-To-
/// Ghostfolio's minimal queries). The deposits marked synthetic are added so that cash never goes
/// below zero; every other row is a real one, its columns cut to a query a user could pick.
final class IBKRStatementTests: XCTestCase {
    static let trades = #""ClientAccountID","CurrencyPrimary","AssetClass","SubCategory","Symbol","Description","ISIN","ListingExchange","TransactionID","DateTime","TradeDate","Quantity","TradePrice","TradeMoney","Proceeds","Taxes","IBCommission","IBCommissionCurrency","Buy/Sell","LevelOfDetail""#

    static let cash = #""ClientAccountID","CurrencyPrimary","AssetClass","Symbol","Description","ISIN","DateTime","SettleDate","Amount","Type","TransactionID","ActionID""#

    static let statement = """
    "BOF","U1234567","bitpal","1","20220101","20231231","20240102;041910","100","100"
    "MSG","Realized P/L is not ready and has been disabled for this statement."
    "BOS","TRNT","Trades; trade date basis"
    \(trades)
    "U1234567","USD","STK","COMMON","EXPO","EXPONENT INC","US30214U1025","NASDAQ","1160238864","20220526;144322","20220526","22","89.87","1977.14","-1977.14","0","-1","USD","BUY","EXECUTION"
    "U1234567","USD","STK","COMMON","EXPO","EXPONENT INC","US30214U1025","NASDAQ","","20220526;144322","20220526","22","89.87","1977.14","-1977.14","0","-1","USD","BUY","ORDER"
    "U1234567","USD","CASH","","EUR.USD","EUR.USD","","","1160254743","20220526;150054","20220526","-3634","1.0719","-3895.2846","3895.2846","0","-1.8726","EUR","SELL","EXECUTION"
    "U1234567","USD","STK","ETF","VTI","VANGUARD TOTAL STOCK MKT ETF","US9229087690","ARCA","1234567890","20230403;095853","20230403","17","204.3473","3473.9041","-3473.9041","0","-1","USD","BUY","EXECUTION"
    "U1234567","USD","OPT","","SPY 18MAR22 440.0 P","SPY 18MAR22 440.0 P","","CBOE","1234567891","20220301;110215","20220301","-2","14.66","-2932","2932","0","-1.4176132","USD","SELL","EXECUTION"
    "EOS","TRNT"
    "BOS","CTRN","Cash Transactions"
    \(cash)
    "U1234567","USD","","","SYNTHETIC DEPOSIT","","20220501","20220501","5000","Deposits/Withdrawals","900000001",""
    "U1234567","EUR","","","SYNTHETIC DEPOSIT","","20220503","20220503","4000","Deposits/Withdrawals","900000002",""
    "U1234567","EUR","","","CASH RECEIPTS / ELECTRONIC FUND TRANSFERS","","20220504","20220504","100","Deposits/Withdrawals","1112107901",""
    "U1234567","USD","STK","EXPO","EXPO(US30214U1025) CASH DIVIDEND USD 0.24 PER SHARE - US TAX","US30214U1025","20220624;202000","20220624","-1.58","Withholding Tax","1216874521","107711148"
    "U1234567","USD","STK","EXPO","EXPO(US30214U1025) CASH DIVIDEND USD 0.24 PER SHARE (Ordinary Dividend)","US30214U1025","20220624;202000","20220624","5.28","Dividends","1216874520","107711148"
    "U1234567","USD","STK","EXPO","EXPO(US30214U1025) CASH DIVIDEND USD 0.24 PER SHARE - US TAX","US30214U1025","20220624;202000","20220624","1.58","Withholding Tax","1216874530","107711148"
    "U1234567","USD","STK","EXPO","EXPO(US30214U1025) CASH DIVIDEND USD 0.24 PER SHARE - US TAX","US30214U1025","20220624;202000","20220624","-1.58","Withholding Tax","1216874531","107711148"
    "U1234567","USD","STK","EXPO","EXPO(US30214U1025) CASH DIVIDEND USD 0.24 PER SHARE - FEE","US30214U1025","20220624;202000","20220624","-0.10","Other Fees","1216874532","107711148"
    "U1234567","USD","","","USD CREDIT INT FOR JUL-2022","","20220805","20220805","2.15","Broker Interest Received","1300000001",""
    "U1234567","USD","STK","EXPO","EXPO(US30214U1025) CASH DIVIDEND USD 0.24 PER SHARE - US TAX","US30214U1025","20220901;202000","20220901","0.50","Withholding Tax","1400000001",""
    "U1234567","USD","","","MONTHLY MINIMUM FEE","","20221001","20221001","-10","Other Fees","1500000001",""
    "U1234567","USD","","","DISBURSEMENT","","20221101","20221101","-200","Deposits/Withdrawals","1600000001",""
    "U1234567","USD","","","BOND COUPON","","20221102","20221102","3","Price Adjustments","1600000002",""
    "EOS","CTRN"
    "EOF"

    """

    func sandbox(cash: Bool = true) -> (Sandbox, String) {
        let s = Sandbox(now: "2024-06-01T12:00:00Z")
        if cash { s.ok(["portfolio", "edit", "main", "--cash"]) }
        s.ok(["fx", "set", "EUR", "USD", "1.07", "--date", "2022-05-01"])
        return (s, s.write("flex.csv", Self.statement))
    }

    func testAFlexQueryImportsTradesDividendsAndCashToTheCent() throws {
        let (s, file) = sandbox()
        let r = s.ok(["import", file])
        XCTAssertTrue(s.run(["import", file]).err.contains("Recognised the Interactive Brokers Flex Query (as with --format ibkr)"))
        XCTAssertTrue(r.out.contains("From the Interactive Brokers Flex Query: 2 buys, 1 dividend, 1 interest payment, 3 deposits, 1 withdrawal, "
            + "2 expenses, 1 cash exchange; skipped: 1 OPT trade row (not a stock, ETF, fund or bond), 1 order row (a summary of executions), "
            + "1 price adjustments row."), r.out)
        XCTAssertTrue(r.out.contains("Added assets EXPO, VTI."), r.out)
        let book = try s.loadPortfolio()
        // Registered with what the file says: type, currency, and Yahoo for a known listing exchange.
        XCTAssertEqual(book.asset(id: "VTI")?.type, .etf)
        XCTAssertEqual(book.asset(id: "EXPO")?.type, .stock)
        XCTAssertEqual(book.asset(id: "EXPO")?.name, "EXPONENT INC")
        XCTAssertEqual(book.asset(id: "VTI")?.quoteSymbol, "VTI")

        // The commission is in the basis: 1977.14 + 1 and 3473.9041 + 1.
        let holdings = try JSONSerialization.jsonObject(with: Data(s.ok(["holdings", "--json", "--offline"]).out.utf8)) as? [String: Any]
        let rows = holdings?["holdings"] as? [[String: Any]] ?? []
        XCTAssertEqual(Set(rows.compactMap { $0["totalCost"] as? String }), ["1978.14", "3474.90"], "\(rows)")
        XCTAssertEqual(book.transactions.filter { $0.type == .buy }.map(\.totalValue?.text), ["1977.14", "3473.9041"])

        // The dividend: 5.28 gross; the tax booked, reversed and re-booked (1.58), the ADR fee (0.10),
        // less the refund of 0.50 on 2022-09-01: 1.18 withheld, 4.10 net.
        let dividend = try XCTUnwrap(book.transactions.first { $0.type == .dividend })
        XCTAssertEqual(dividend.amountValue.text, "5.28")
        XCTAssertEqual(dividend.feeValue?.text, "1.18")

        // Cash by hand. USD: 5000 − 1978.14 + 3895.2846 + 4.10 + 2.15 − 10 − 200 − 3474.9041 = 3238.4905.
        // EUR: 4000 + 100 − 3634 − 1.8726 (the conversion's commission) = 464.1274.
        let cash = rows.filter { $0["type"] as? String == "cash" }.map { "\($0["symbol"] ?? "") \($0["totalAmount"] ?? "")" }
        XCTAssertEqual(cash.sorted(), ["EUR 464.1274", "USD 3238.4905"])

        // The summary by hand. Net deposits: 5000 + (4000 + 100) × 1.07 − 200 = 9187.00. The conversion
        // got 3895.2846 USD for 3634 EUR worth 3888.38 at 1.07: an FX effect of 6.90. Realized: the
        // monthly fee 10 and the conversion's commission 1.8726 EUR × 1.07 = 2.0037, −12.00. Income
        // 4.10 + 2.15 = 6.25. Unrealized −2.00 (each buy's commission). Total −2.00 − 12.00 + 6.25 + 6.90 = −0.85,
        // which is also the value 9186.15 less the net deposits.
        let summary = try JSONSerialization.jsonObject(with: Data(s.ok(["summary", "--json", "--offline"]).out.utf8)) as? [String: Any]
        for (key, value) in [("netDeposits", "9187.00"), ("fxEffect", "6.90"), ("realizedPnL", "-12.00"), ("income", "6.25"),
                             ("taxWithheld", "1.18"), ("unrealizedPnL", "-2.00"), ("totalPnL", "-0.85"), ("totalValue", "9186.15")] {
            XCTAssertEqual(summary?[key] as? String, value, key)
        }
        let income = try JSONSerialization.jsonObject(with: Data(s.ok(["income", "--json"]).out.utf8)) as? [String: Any]
        XCTAssertEqual((income?["totals"] as? [String: String])?["net"], "6.25")

        // A second import adds nothing: every row has the file's own id.
        let again = s.ok(["import", file])
        XCTAssertTrue(again.out.contains("Imported 0 transactions; skipped 12 already recorded."), again.out)
        XCTAssertEqual(try s.loadPortfolio().transactions.count, book.transactions.count)
    }

    func testWithoutCashTrackingTheCashRowsAreCountedNotImported() throws {
        let (s, file) = sandbox(cash: false)
        let r = s.ok(["import", file, "--format", "ibkr", "--dry-run"])
        XCTAssertTrue(r.out.contains("From the Interactive Brokers Flex Query: 2 buys, 1 dividend; skipped: "), r.out)
        for words in ["3 deposit rows (the portfolio does not track cash)", "1 currency conversion row (the portfolio does not track cash)",
                      "2 expense rows (the portfolio does not track cash)", "1 interest row (the portfolio does not track cash)"] {
            XCTAssertTrue(r.out.contains(words), "\(words): \(r.out)")
        }
        XCTAssertTrue(r.out.contains("Dry run: would import 3"), r.out)
        XCTAssertEqual(try s.loadPortfolio().transactions.count, 0)
    }

    func testTheMinimalQueriesOfExportToGhostfolio() throws {
        // Trades and dividends without symbols: the ISIN is the code, in both files alike.
        let s = Sandbox(now: "2026-01-01T12:00:00Z")
        s.ok(["fx", "set", "CHF", "USD", "1.11", "--date", "2023-05-01"])
        s.ok(["fx", "set", "JPY", "USD", "0.0069", "--date", "2025-06-01"])
        let trades = s.write("trades.csv", """
        "Buy/Sell","TradeDate","ISIN","Quantity","TradePrice","TradeMoney","CurrencyPrimary","IBCommission","IBCommissionCurrency"
        "BUY","20230522","CH0111762537","7","282.7","1978.9","CHF","-5","CHF"
        "BUY","20230522","US9220427424","95","93.78","8909.1","USD","-1","USD"
        "SELL","20230522","","-8000","1.1173","-8938.4","USD","-1.79924","CHF"

        """)
        let dividends = s.write("dividends.csv", """
        "Type","SettleDate","ISIN","Description","Amount","CurrencyPrimary"
        "Dividends","20230623","US9220427424","VT(US9220427424) CASH DIVIDEND USD 0.6504 PER SHARE (Ordinary Dividend)","137.23","USD"
        "Withholding Tax","20230913","CH0111762537","SMMCHA(80486947) CASH DIVIDEND CHF 5.99 PER SHARE - CH TAX","-14.68","CHF"
        "Withholding Tax","20230623","US9220427424","VT(US9220427424) CASH DIVIDEND USD 0.6504 PER SHARE - US TAX","-20.58","USD"
        "Dividends","20230913","CH0111762537","SMMCHA(CH0111762537) CASH DIVIDEND CHF 0.69 PER SHARE (Return of Capital)","4.83","CHF"
        "Dividends","20230913","CH0111762537","SMMCHA(80486947) CASH DIVIDEND CHF 5.99 PER SHARE (Ordinary Dividend)","41.93","CHF"
        "Dividends","20231221","US9220427424","VT(US9220427424) CASH DIVIDEND USD 0.8008 PER SHARE (Ordinary Dividend)","169.77","USD"
        "Payment In Lieu Of Dividends","20250625","JP3546800008","4543.T(JP3546800008) PAYMENT IN LIEU OF DIVIDEND (Ordinary Dividend)","455","JPY"

        """)
        XCTAssertTrue(s.ok(["import", trades]).out.contains("2 buys; skipped: 1 trade row (no symbol or ISIN)"))
        let imported = s.ok(["import", dividends]).out
        // The return of capital is not income: counted, left out of the dividend of its day.
        XCTAssertTrue(imported.contains("From the Interactive Brokers Flex Query: 4 dividends; skipped: 1 dividend row (return of capital)."), imported)
        let book = try s.loadPortfolio()
        let swiss = book.transactions.filter { $0.assetId == "CH0111762537" }
        // The buy's fee is its commission in CHF; the ordinary dividend has the tax joined, the return
        // of capital (4.83) left out.
        XCTAssertEqual(swiss.map(\.type), [.buy, .dividend])
        XCTAssertEqual(swiss.map { $0.feeValue?.text }, ["5", "14.68"])
        XCTAssertEqual(swiss.last?.amountValue.text, "41.93")
        XCTAssertEqual(swiss.last?.currency, "CHF")
        XCTAssertEqual(book.transactions.filter { $0.assetId == "US9220427424" && $0.type == .dividend }.map { $0.feeValue?.text }, ["20.58", "0"])
        XCTAssertEqual(book.asset(id: "JP3546800008")?.currency, "JPY")
    }

    func testATaxCorrectionJoinsTheDividendOfItsActionID() throws {
        // Two EXPO dividends; a tax refund months later carries the first one's ActionID: it lowers the
        // first dividend's tax, not the latest one's (which it did when joined by asset alone).
        let text = """
        \(Self.cash)
        "U1","USD","STK","EXPO","EXPO(US30214U1025) CASH DIVIDEND USD 0.24 PER SHARE (Ordinary Dividend)","US30214U1025","20220624;202000","20220624","5.28","Dividends","1216874520","107711148"
        "U1","USD","STK","EXPO","EXPO(US30214U1025) CASH DIVIDEND USD 0.24 PER SHARE - US TAX","US30214U1025","20220624;202000","20220624","-1.58","Withholding Tax","1216874521","107711148"
        "U1","USD","STK","EXPO","EXPO(US30214U1025) CASH DIVIDEND USD 0.26 PER SHARE (Ordinary Dividend)","US30214U1025","20220923;202000","20220923","5.72","Dividends","1316874520","117711148"
        "U1","USD","STK","EXPO","EXPO(US30214U1025) CASH DIVIDEND USD 0.26 PER SHARE - US TAX","US30214U1025","20220923;202000","20220923","-1.72","Withholding Tax","1316874521","117711148"
        "U1","USD","STK","EXPO","EXPO(US30214U1025) CASH DIVIDEND USD 0.24 PER SHARE - US TAX","US30214U1025","20221115;202000","20221115","0.50","Withholding Tax","1416874521","107711148"
        "U1","USD","STK","VTI","VTI(US9229087690) CASH DIVIDEND USD 0.80 PER SHARE - US TAX","US9229087690","20221115;202000","20221115","1.00","Withholding Tax","1416874522","127711148"

        """
        let rows = try StatementImport.rows(Array(text.utf8), format: .ibkr, options: StatementOptions(tracksCash: true))
        XCTAssertEqual(rows.rows.map { "\($0.fields[.date] ?? "") \($0.fields[.amount] ?? "") fee \($0.fields[.fee] ?? "0")" },
                       ["2022-06-24 5.28 fee 1.08", "2022-09-23 5.72 fee 1.72"])
        // The VTI refund's dividend (its ActionID) is not in the file: counted, never a deposit.
        XCTAssertEqual(Dictionary(rows.skipped, uniquingKeysWith: +), ["dividend tax refund (its dividend is not in the file)": 1])
    }

    func testACommissionRebateIsInTheTradesMoneyAndAPositiveFeeIsADepositOnlyAsARefund() throws {
        let text = """
        "CurrencyPrimary","AssetClass","Symbol","ISIN","TransactionID","DateTime","Quantity","TradePrice","TradeMoney","Taxes","IBCommission","IBCommissionCurrency","Buy/Sell","LevelOfDetail"
        "USD","STK","EXPO","US30214U1025","1","20220526;144322","22","89.87","1977.14","-0.50","0.20","USD","BUY","EXECUTION"
        "USD","STK","EXPO","US30214U1025","2","20220527;144322","10","90","900","-0.10","0.35","USD","BUY","EXECUTION"
        "USD","CASH","EUR.USD","","3","20220526;150054","-100","1.07","-107","0","0.40","USD","SELL","EXECUTION"
        \(Self.cash)
        "U1","USD","","","FEE REFUND","","20221001","20221001","10","Other Fees","11",""
        "U1","USD","","","SNAPSHOT MARKET DATA","","20221001","20221001","3","Other Fees","12",""
        "U1","USD","STK","EXPO","EXPO(US30214U1025) CASH DIVIDEND USD 0.69 PER SHARE (Return of Capital)","US30214U1025","20220624","20220624","4.83","Dividends","13","1"

        """
        let rows = try StatementImport.rows(Array(text.utf8), format: .ibkr, options: StatementOptions(tracksCash: true))
        XCTAssertEqual(rows.rows.map { [$0.fields[.type], $0.fields[.amount], $0.fields[.currency], $0.fields[.fee], $0.fields[.total]].map { $0 ?? "-" }.joined(separator: " ") }, [
            // The rebate is in the trade's money (a buy's less), never a deposit: 1977.14 − 0.20, 900 − 0.35.
            "buy 22 USD 0.5 1976.94",
            "buy 10 USD 0.1 899.65",
            // A conversion has no fee: its rebate is money in.
            "withdrawal 100 EUR - -", "deposit 107 USD - -", "deposit 0.4 USD - -",
            "deposit 10 USD - -",
        ])
        XCTAssertEqual(Dictionary(rows.skipped, uniquingKeysWith: +),
                       ["other fees (positive, not a refund)": 1, "dividend (return of capital)": 1])
    }

    /// The rows as `type asset amount total` (`-` for none).
    static func trades(_ text: String) throws -> PresetRows {
        try StatementImport.rows(Array(text.utf8), format: .ibkr, options: StatementOptions(tracksCash: true))
    }

    static func lines(_ rows: PresetRows) -> [String] {
        rows.rows.map { [$0.fields[.type], $0.fields[.assetId], $0.fields[.amount], $0.fields[.fee], $0.fields[.total], $0.fields[.date]].map { $0 ?? "-" }.joined(separator: " ") }
    }

    func testACancelledTradeAndItsCancellationAreBothDropped() throws {
        // IBKR keeps a cancelled fill and adds a reversing row: by OrigTransactionID when the query has
        // it, else the execution of the same symbol, quantity and price.
        let rows = try Self.trades("""
        "CurrencyPrimary","AssetClass","Symbol","ISIN","TransactionID","OrigTransactionID","TransactionType","DateTime","Quantity","TradePrice","TradeMoney","IBCommission","Buy/Sell","LevelOfDetail"
        "USD","STK","EXPO","US30214U1025","1","","ExchTrade","20220526;144322","22","89.87","1977.14","-1","BUY","EXECUTION"
        "USD","STK","EXPO","US30214U1025","2","1","TradeCancel","20220526;150000","-22","89.87","-1977.14","1","BUY (Ca.)","EXECUTION"
        "USD","STK","VTI","US9229087690","3","","ExchTrade","20230403;095853","17","204.3473","3473.9041","-1","BUY","EXECUTION"
        "USD","STK","VTI","US9229087690","4","","ExchTrade","20230403;100000","5","200","1000","-1","BUY","EXECUTION"
        "USD","STK","VTI","US9229087690","5","","","20230403;110000","-5","200","-1000","1","BUY (Ca.)","EXECUTION"

        """)
        XCTAssertEqual(Self.lines(rows), ["buy VTI 17 1 3473.9041 2023-04-03T13:58:53Z"])
        XCTAssertEqual(Dictionary(rows.skipped, uniquingKeysWith: +), ["trade (cancelled)": 4])
    }

    func testABondWithoutTradeMoneyIsItsProceedsAndItsISINWhenTheSymbolIsNoCode() throws {
        // A bond's price is a percentage of its face: price × quantity is 100 times its money.
        let rows = try Self.trades("""
        "CurrencyPrimary","AssetClass","Symbol","ISIN","TransactionID","DateTime","Quantity","TradePrice","Proceeds","IBCommission","Buy/Sell"
        "USD","BOND","T 4 1/2 11/15/33","US91282CJJ18","7","20240102;100000","10000","99.5","-9950","-5","BUY"
        "CurrencyPrimary","AssetClass","Symbol","ISIN","TransactionID","DateTime","Quantity","TradePrice","NetCash","IBCommission","Buy/Sell"
        "USD","BOND","T 4 1/2 11/15/33","US91282CJJ18","8","20240201;100000","-5000","100.2","5005","-5","SELL"

        """)
        XCTAssertEqual(Self.lines(rows), ["buy US91282CJJ18 10000 5 9950 2024-01-02T15:00:00Z",
                                          "sell US91282CJJ18 5000 5 5010 2024-02-01T15:00:00Z"])
        XCTAssertEqual(rows.assets.map(\.id), ["US91282CJJ18"])
        XCTAssertNil(rows.assets.first?.quote)
    }

    func testALaterReversalWithASmallerReBookingChangesTheEarlierDividend() throws {
        // No ActionID: 100 on 06-23, reversed and re-booked as 90 on 08-15, is June's dividend of 90.
        let rows = try Self.trades("""
        "Type","SettleDate","ISIN","Description","Amount","CurrencyPrimary"
        "Dividends","20230623","US9220427424","VT(US9220427424) CASH DIVIDEND (Ordinary Dividend)","100","USD"
        "Withholding Tax","20230623","US9220427424","VT(US9220427424) CASH DIVIDEND - US TAX","-15","USD"
        "Dividends","20230815","US9220427424","VT(US9220427424) CASH DIVIDEND (Ordinary Dividend) REVERSAL","-100","USD"
        "Dividends","20230815","US9220427424","VT(US9220427424) CASH DIVIDEND (Ordinary Dividend)","90","USD"
        "Withholding Tax","20230815","US9220427424","VT(US9220427424) CASH DIVIDEND - US TAX","15","USD"
        "Withholding Tax","20230815","US9220427424","VT(US9220427424) CASH DIVIDEND - US TAX","-13.5","USD"

        """)
        XCTAssertEqual(Self.lines(rows), ["dividend US9220427424 90 13.5 - 2023-06-23"])
        XCTAssertEqual(rows.skipped.count, 0, "\(rows.skipped)")
    }

    func testADividendWhoseTaxIsMoreThanWhatIsLeftIsCountedAndTaxLeftFromAWholeReversalToo() throws {
        // 137.23 paid with 20.58 tax, reversed and re-booked as 13.72: a dividend of 13.72 with 20.58 tax
        // is one bitpal refuses; counted, the import goes on. A dividend reversed whole leaves its tax.
        let rows = try Self.trades("""
        "Type","SettleDate","ISIN","Description","Amount","CurrencyPrimary"
        "Dividends","20230623","US9220427424","VT(US9220427424) CASH DIVIDEND (Ordinary Dividend)","137.23","USD"
        "Withholding Tax","20230623","US9220427424","VT(US9220427424) CASH DIVIDEND - US TAX","-20.58","USD"
        "Dividends","20230623","US9220427424","VT(US9220427424) CASH DIVIDEND (Ordinary Dividend)","-137.23","USD"
        "Dividends","20230623","US9220427424","VT(US9220427424) CASH DIVIDEND (Ordinary Dividend)","13.72","USD"
        "Dividends","20230913","CH0111762537","SMMCHA CASH DIVIDEND (Ordinary Dividend)","41.93","CHF"
        "Withholding Tax","20230913","CH0111762537","SMMCHA CASH DIVIDEND - CH TAX","-14.68","CHF"
        "Dividends","20230913","CH0111762537","SMMCHA CASH DIVIDEND (Ordinary Dividend)","-41.93","CHF"

        """)
        XCTAssertEqual(Self.lines(rows), [])
        XCTAssertEqual(Dictionary(rows.skipped, uniquingKeysWith: +), [
            "dividend (its tax more than what is left of it after reversals)": 1,
            "dividend (reversed whole)": 1, "dividend tax (its dividend reversed whole)": 1,
        ])
    }

    func testAnotherFormatIsNamedAndAnActivityStatementRefused() throws {
        let s = Sandbox()
        let kraken = s.write("trades.csv", "\"txid\",\"ordertxid\",\"pair\",\"time\",\"type\",\"ordertype\",\"price\",\"cost\",\"fee\",\"vol\"\n")
        let r = s.run(["import", kraken, "--format", "ibkr"])
        XCTAssertEqual(r.code, .failure)
        XCTAssertTrue(r.err.contains("this looks like the Kraken export (--format kraken)"), r.err)
        let activity = s.write("activity.csv", """
        Statement,Header,Field Name,Field Value
        Trades,Header,DataDiscriminator,Asset Category,Currency,Symbol,Date/Time,Quantity,T. Price,C. Price,Proceeds,Comm/Fee,Basis,Realized P/L,MTM P/L,Code

        """)
        let a = s.run(["import", activity, "--format", "ibkr"])
        XCTAssertEqual(a.code, .failure)
        XCTAssertTrue(a.err.contains("this is an IBKR Activity Statement; make an Activity Flex Query"), a.err)
    }
}
