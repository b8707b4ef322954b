import Foundation
import XCTest

/// Registered assets priced by Yahoo Finance (market-data.md, "Sources of an asset"), against a fake
/// chart endpoint on 127.0.0.1 that answers as the research's real replies do (§1.2–1.4).
final class YahooQuoteTests: FakeServiceTestCase {
    /// A chart reply: `meta` with the currency and the latest price at 2024-06-01 07:00 UTC, and two daily bars (one close null).
    static func chart(currency: String, price: String) -> FakeCoinGecko.Reply {
        let body = #"{"chart":{"result":[{"meta":{"currency":"\#(currency)","symbol":"X","exchangeName":"GER","#
            + #""regularMarketTime":1717225200,"gmtoffset":7200,"timezone":"CEST","exchangeTimezoneName":"Europe/Berlin","#
            + #""regularMarketPrice":\#(price),"chartPreviousClose":100.0,"dataGranularity":"1d"},"#
            + #""timestamp":[1717052400,1717138800],"indicators":{"quote":[{"close":[null,\#(price)],"open":[1,2]}],"#
            + #""adjclose":[{"adjclose":[1,2]}]}}],"error":null}}"#
        return FakeCoinGecko.Reply(status: 200, body: body, headers: ["content-type": "application/json;charset=utf-8"])
    }

    /// Routes `/v8/finance/chart/SYMBOL` by symbol; anything else as the coin service does.
    func serveCharts(_ replies: [String: FakeCoinGecko.Reply]) {
        let coins = server.fallback
        server.fallback = { request in
            guard request.path.hasPrefix("/v8/finance/chart/") else { return coins(request) }
            let symbol = String(request.path.dropFirst("/v8/finance/chart/".count)).removingPercentEncoding ?? ""
            return replies[symbol] ?? FakeCoinGecko.Reply(
                status: 404, body: #"{"chart":{"result":null,"error":{"code":"Not Found","description":"No data found, symbol may be delisted"}}}"#)
        }
    }

    func yahoo() -> Sandbox { online(["BITPAL_YAHOO_URL": "http://127.0.0.1:\(server.port)"]) }

    func testAnAssetWithAYahooSourceIsRefreshed() throws {
        serveCharts(["VWCE.DE": Self.chart(currency: "EUR", price: "110.52"), "OCDO.L": Self.chart(currency: "GBp", price: "452.3")])
        let s = yahoo()
        s.ok(["asset", "add", "VWCE.DE", "--name", "Vanguard FTSE All-World", "--type", "etf", "--currency", "EUR", "--quote", "yahoo"])
        s.ok(["asset", "add", "OCADO", "--name", "Ocado", "--type", "stock", "--currency", "GBP", "--quote", "yahoo:OCDO.L"])
        let list = s.ok(["asset", "list"]).out
        XCTAssertTrue(list.contains("yahoo:VWCE.DE") && list.contains("yahoo:OCDO.L"), list)
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(s.ok(["asset", "list", "--json"]).out.utf8)) as? [[String: Any]])
        XCTAssertEqual(json.map { $0["quoteSource"] as? String }, ["yahoo", "yahoo"])
        XCTAssertEqual(json.map { $0["quoteSymbol"] as? String }, ["OCDO.L", "VWCE.DE"])
        // Pence are pounds / 100; the latest price is meta's, at its time.
        assertRefreshes(s, saying: "Refreshed 2 of 2 asset prices from Yahoo Finance.", prices: ["110.52", "4.523"], source: "yahoo",
                        serviceTime: "2024-06-01T07:00:00Z")
        // One request a symbol, daily bars, with a User-Agent, and no cookie.
        let charts = server.requests.filter { $0.path.hasPrefix("/v8/finance/chart/") }
        XCTAssertEqual(charts.count, 2)
        for request in charts {
            XCTAssertEqual(request.query["interval"], "1d")
            XCTAssertTrue((request.headers["user-agent"] ?? "").hasPrefix("Mozilla/5.0 (compatible; bitpal/"), "\(request.headers)")
            XCTAssertNil(request.headers["cookie"])
        }
        // The store keeps the source; a holding is valued at the fetched price.
        XCTAssertTrue(String(decoding: try XCTUnwrap(s.storeBytes), as: UTF8.self).contains(#""quoteSource": "yahoo", "quoteSymbol": "VWCE.DE""#))
        s.ok(["portfolio", "add", "eu", "--currency", "EUR"])
        s.ok(["-p", "eu", "add", "buy", "VWCE.DE", "2", "100", "--date", "2024-05-02"])
        let holdings = s.ok(["-p", "eu", "holdings", "--offline"]).out
        XCTAssertTrue(holdings.contains("€221.04"), holdings)
    }

    func testEachAssetFailsOnItsOwnAndTheWorstExitWins() throws {
        serveCharts(["VWCE.DE": Self.chart(currency: "EUR", price: "110.52"),
                     "SPY": Self.chart(currency: "USD", price: "527.3"),
                     "BUSY": FakeCoinGecko.Reply(status: 429, body: "Too Many Requests\n"),
                     "PAGE": FakeCoinGecko.Reply(status: 200, body: "<html><body>Will be right back</body></html>")])
        let s = yahoo()
        s.ok(["asset", "add", "VWCE.DE", "--name", "All-World", "--type", "etf", "--currency", "EUR", "--quote", "yahoo"])
        s.ok(["asset", "add", "BUSY", "--name", "Busy", "--type", "stock", "--quote", "yahoo"])
        s.ok(["asset", "add", "PAGE", "--name", "Page", "--type", "stock", "--quote", "yahoo"])
        // Refused for now (429, a page that is not JSON): exit 3, the other asset's quote kept.
        let busy = s.run(["price", "refresh"])
        XCTAssertEqual(busy.code, .service, busy.err)
        XCTAssertTrue(busy.err.contains("BUSY: Yahoo Finance gave no quote: it refused for now (HTTP 429"), busy.err)
        XCTAssertTrue(busy.err.contains("PAGE: Yahoo Finance gave no quote: it sent a page that is not JSON"), busy.err)
        XCTAssertTrue(s.ok(["price", "list", "--json"]).out.contains(#""price": "110.52""#))
        // An unknown symbol, or a quote in another currency than the asset's, is a broken rule: exit 1.
        s.ok(["asset", "edit", "BUSY", "--quote", "yahoo:GONE"])
        s.ok(["asset", "edit", "PAGE", "--quote", "yahoo:SPY", "--currency", "EUR"])
        let broken = s.run(["price", "refresh", "--quiet"])
        XCTAssertEqual(broken.code, .failure, broken.err)
        XCTAssertTrue(broken.err.contains("Yahoo Finance does not know the symbol 'GONE' (HTTP 404"), broken.err)
        XCTAssertTrue(broken.err.contains("SPY is quoted in USD, the asset in EUR"), broken.err)
        XCTAssertEqual(broken.out, "")
    }

    func testByHandNeverCallsTheNetwork() throws {
        let s = yahoo()
        s.ok(["asset", "add", "GOLD", "--name", "Gold", "--type", "commodity"])
        XCTAssertEqual(s.run(["asset", "add", "X", "--name", "X", "--type", "stock", "--quote", "bloomberg"]).code, .usage)
        XCTAssertTrue(s.ok(["price", "refresh"]).out.contains("Nothing to refresh"))
        XCTAssertTrue(server.requests.isEmpty)
        // A store line of an asset by hand has no quote keys (older files read the same); --quote manual stops fetching.
        XCTAssertFalse(String(decoding: try XCTUnwrap(s.storeBytes), as: UTF8.self).contains("quoteSource"))
        s.ok(["asset", "edit", "GOLD", "--quote", "yahoo:GC=F"])
        XCTAssertTrue(s.ok(["asset", "show", "GOLD", "--json"]).out.contains(#""quoteSymbol": "GC=F""#))
        s.ok(["asset", "edit", "GOLD", "--quote", "manual"])
        let shown = s.ok(["asset", "show", "GOLD", "--json"]).out
        XCTAssertTrue(shown.contains(#""quoteSource": null"#) && shown.contains(#""quoteSymbol": null"#), shown)
        XCTAssertFalse(String(decoding: try XCTUnwrap(s.storeBytes), as: UTF8.self).contains("quoteSource"))
    }

    /// Daily closes as traded: Yahoo's split adjustment undone, a null close skipped, the last bar of a day
    /// kept, each on its exchange's day (Sydney's bars sit at 23:00 UTC of the day before); a split the
    /// book lacks is a warning with the command that records it.
    func testFetchHistoryStoresClosesAsTradedOnTheExchangesDays() throws {
        let nvda = #"{"chart":{"result":[{"meta":{"currency":"USD","symbol":"NVDA","exchangeTimezoneName":"America/New_York","#
            + #""regularMarketPrice":111.0,"regularMarketTime":1717185540},"timestamp":[1716989400,1717075800,1717162200,1717185540],"#
            + #""events":{"dividends":{"1716989400":{"amount":0.04,"date":1716989400}},"#
            + #""splits":{"1717075800":{"date":1717075800,"numerator":4,"denominator":1,"splitRatio":"4:1"}}},"#
            + #""indicators":{"quote":[{"close":[100.5,null,110.25,111.0]}]}}],"error":null}}"#
        let bhp = #"{"chart":{"result":[{"meta":{"currency":"AUD","symbol":"BHP.AX","exchangeTimezoneName":"Australia/Sydney","#
            + #""regularMarketPrice":45.1,"regularMarketTime":1717138800},"timestamp":[1717110000],"#
            + #""indicators":{"quote":[{"close":[45.1]}]}}],"error":null}}"#
        serveCharts(["NVDA": FakeCoinGecko.Reply(status: 200, body: nvda), "BHP.AX": FakeCoinGecko.Reply(status: 200, body: bhp)])
        let s = yahoo()
        s.ok(["asset", "add", "NVDA", "--name", "NVIDIA", "--type", "stock", "--quote", "yahoo"])
        s.ok(["asset", "add", "BHP", "--name", "BHP", "--type", "stock", "--currency", "AUD", "--quote", "yahoo:BHP.AX"])
        s.ok(["add", "buy", "NVDA", "1", "900", "--date", "2024-05-01"])
        let r = s.ok(["price", "fetch-history", "NVDA", "BHP"])
        XCTAssertTrue(r.err.contains("reports a 4:1 split of NVDA on 2024-05-30 that the book lacks; record it with "
            + "'bitpal add split NVDA 4 --date 2024-05-30'"), r.err)
        XCTAssertTrue(r.out.contains("NVDA (NVIDIA): 2 daily prices in USD, 2024-05-29 … 2024-05-31 (Yahoo Finance)."), r.out)
        let history = s.ok(["price", "history", "NVDA", "--json"]).out
        XCTAssertTrue(history.contains(#""402""#) && history.contains(#""111""#) && !history.contains(#""100.5""#), history)
        let sydney = s.ok(["price", "history", "BHP", "--json"]).out
        XCTAssertTrue(sydney.contains("2024-05-31T00:00:00Z") && sydney.contains(#""45.1""#), sydney)
        // --since D asks from D on (Unix seconds of its day, rounded to whole days back from now).
        s.ok(["price", "fetch-history", "NVDA", "--since", "2024-05-30"])
        let asked = try XCTUnwrap(server.requests.last { $0.path == "/v8/finance/chart/NVDA" })
        XCTAssertEqual(asked.query["period1"], "1717027200")  // 2024-05-30T00:00:00Z
        XCTAssertEqual(s.run(["price", "fetch-history", "NVDA", "--since", "2024-05-30", "--days", "3"]).code, .usage)
        // An absurd split ratio is not believed, and a close it would make absurd is dropped: the cache stays readable.
        let absurd = #"{"chart":{"result":[{"meta":{"currency":"USD","exchangeTimezoneName":"America/New_York","#
            + #""regularMarketPrice":10,"regularMarketTime":1717185540},"timestamp":[1716989400,1717162200],"#
            + #""events":{"splits":{"1717075800":{"date":1717075800,"numerator":1e120,"denominator":1},"#
            + #""1717076800":{"date":1717076800,"numerator":999999,"denominator":1},"1717077800":{"date":1717077800,"numerator":999999,"denominator":1},"#
            + #""1717078800":{"date":1717078800,"numerator":999999,"denominator":1}}},"#
            + #""indicators":{"quote":[{"close":[10,10]}]}}],"error":null}}"#
        serveCharts(["NVDA": FakeCoinGecko.Reply(status: 200, body: nvda), "BHP.AX": FakeCoinGecko.Reply(status: 200, body: bhp),
                     "ODD": FakeCoinGecko.Reply(status: 200, body: absurd)])
        s.ok(["asset", "add", "ODD", "--name", "Odd", "--type", "stock", "--quote", "yahoo"])
        let odd = s.ok(["price", "fetch-history", "ODD"])
        XCTAssertTrue(odd.err.contains("1 unusable price of ODD dropped"), odd.err)
        XCTAssertTrue(odd.out.contains("ODD (Odd): 1 daily price in USD"), odd.out)
        XCTAssertFalse(s.ok(["price", "list"]).err.contains("cannot be read"))
        // Recorded, the split is no longer reported.
        s.ok(["add", "split", "NVDA", "4", "--date", "2024-05-30"])
        XCTAssertFalse(s.ok(["price", "fetch-history", "NVDA"]).err.contains("lacks"))
        // By hand, an asset has no source to fetch from: said, with how to give it one.
        s.ok(["asset", "add", "GOLD", "--name", "Gold", "--type", "commodity"])
        let byHand = s.run(["price", "fetch-history", "GOLD"])
        XCTAssertEqual(byHand.code, .failure)
        XCTAssertTrue(byHand.err.contains("--quote yahoo"), byHand.err)
    }

    /// A report's automatic refresh fetches the quoted assets it holds (not the others), and a failing
    /// source is a warning: the report still prints from what it has.
    func testReportsRefreshTheQuotedAssetsTheyHold() throws {
        serveCharts(["SPY": Self.chart(currency: "USD", price: "527.3")])
        let s = yahoo()
        s.ok(["asset", "add", "SPY", "--name", "S&P 500", "--type", "etf", "--quote", "yahoo"])
        s.ok(["asset", "add", "QQQ", "--name", "Nasdaq 100", "--type", "etf", "--quote", "yahoo"])
        s.ok(["add", "buy", "SPY", "2", "500", "--date", "2024-05-01"])
        let holdings = s.ok(["holdings"]).out
        XCTAssertTrue(holdings.contains("$1,054.60"), holdings)
        XCTAssertEqual(server.requests.filter { $0.path.hasPrefix("/v8/finance/chart/") }.map(\.path), ["/v8/finance/chart/SPY"])
        // Fresh for 60 s: no second request.
        s.ok(["summary"])
        XCTAssertEqual(server.requests.filter { $0.path.hasPrefix("/v8/finance/chart/") }.count, 1)
        // A held asset whose symbol fails: a warning, and the report prints.
        s.ok(["add", "buy", "QQQ", "1", "400", "--date", "2024-05-01"])
        let r = s.ok(["holdings"])
        XCTAssertTrue(r.err.contains("QQQ: Yahoo Finance does not know the symbol 'QQQ'"), r.err)
        XCTAssertTrue(r.out.contains("SPY"), r.out)
        // A source that cannot answer is left alone by reports for a few minutes (not by 'price refresh').
        serveCharts(["SPY": FakeCoinGecko.Reply(status: 503, body: "")])
        s.now = s.now.addingTimeInterval(120)
        XCTAssertTrue(s.ok(["holdings"]).err.contains("SPY: Yahoo Finance gave no quote: it failed (HTTP 503)"))
        let asked = server.requests.count
        s.now = s.now.addingTimeInterval(120)
        XCTAssertTrue(s.ok(["holdings"]).err.contains("could not refresh prices"))
        XCTAssertEqual(server.requests.count, asked)
        XCTAssertEqual(s.run(["price", "refresh"]).code, .failure)  // QQQ is unknown: the worst exit
        XCTAssertGreaterThan(server.requests.count, asked)
    }
}
