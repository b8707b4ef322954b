import Foundation
@testable import PortfolioCore
import XCTest

/// Every format is recognised from its header as the research copied it (import-formats.md), and no
/// header is taken for another format's: the signatures do not overlap.
final class StatementRecognitionTests: XCTestCase {
    static let headers: [(String, StatementFormat?, Exchange?)] = [
        (#""CurrencyPrimary","Symbol","DateTime","TradeDate","TransactionType","Quantity","TradePrice","Buy/Sell","ClientAccountID","AccountAlias""#, .ibkr, nil),
        (#""Buy/Sell","TradeDate","ISIN","Quantity","TradePrice","TradeMoney","CurrencyPrimary","IBCommission","IBCommissionCurrency""#, .ibkr, nil),
        (#""Type","SettleDate","ISIN","Description","Amount","CurrencyPrimary""#, .ibkr, nil),
        (#""txid","refid","time","type","subtype","aclass","asset","amount","fee","balance""#, .krakenLedger, nil),
        (#""txid","refid","time","type","subtype","aclass","subclass","asset","wallet","amount","fee","balance","amountusd","feeusd","balanceusd","feecurrency""#, .krakenLedger, nil),
        ("UTC_Time,Account,Operation,Coin,Change,Remark", .binanceStatement, nil),
        ("User_ID,UTC_Time,Account,Operation,Coin,Change,Remark", .binanceStatement, nil),
        ("User ID,Time,Account,Operation,Coin,Change,Remark", .binanceStatement, nil),
        ("Datum,Tijd,Valutadatum,Product,ISIN,Omschrijving,FX,Mutatie,,Saldo,,Order Id", .degiro, nil),
        ("Date,Time,Value date,Product,ISIN,Description,FX,Change,,Balance,,Order Id", .degiro, nil),
        ("Datum,Uhrze,Valutadatum,Produkt,ISIN,Beschreibung,FX,Änderung,,Saldo,,Order-ID", .degiro, nil),
        ("\u{FEFF}Data,Hora,Data Valor,Produto,ISIN,Descrição,T.,Mudança,,Saldo,,ID da Ordem", .degiro, nil),
        ("Date,Time,Product,ISIN,Reference exchange,Venue,Quantity,Price,,Local value,,Value EUR,Exchange rate,AutoFX Fee,Transaction and/or third party fees EUR,Total EUR,Order ID,", .degiro, nil),
        ("Datum,Tijd,Product,ISIN,Beurs,Uitvoeringsplaats,Aantal,Koers,,Lokale waarde,,Waarde,,Wisselkoers,Transactiekosten en/of,,Totaal,,Order ID", .degiro, nil),
        ("Action,Time,ISIN,Ticker,Name,No. of shares,Price / share,Currency (Price / share),Exchange rate,Result,Currency (Result),Total,Currency (Total),Withholding tax,Currency (Withholding tax),Notes,ID,Currency conversion fee,Currency (Currency conversion fee)", .trading212, nil),
        ("\u{FEFF}Action,Time,ISIN,Ticker,Name,Notes,ID,No. of shares,Price / share,Currency (Price / share),Exchange rate,Result,Currency (Result),Total,Currency (Total)", .trading212, nil),
        ("Timestamp (UTC),Transaction Description,Currency,Amount,To Currency,To Amount,Native Currency,Native Amount,Native Amount (in USD),Transaction Kind,Transaction Hash", .cryptoCom, nil),
        (#""Date","Action","Symbol","Description","Quantity","Price","Fees & Comm","Amount""#, .schwab, nil),
        ("Date,Ticker,Type,Quantity,Price per share,Total Amount,Currency,FX Rate", .revolut, nil),
        ("Date,Sent Amount,Sent Currency,Received Amount,Received Currency,Fee Amount,Fee Currency,Net Worth Amount,Net Worth Currency,Label,Description,TxHash", .koinly, nil),
        ("Date,TxHash,Received Amount,Received Currency,Sent Amount,Sent Currency,Fee Amount,Fee Currency,Description,Tag", .koinly, nil),
        ("\u{FEFF}\"Type\",\"Buy\",\"Cur.\",\"Sell\",\"Cur.\",\"Fee\",\"Cur.\",\"Exchange\",\"Group\",\"Comment\",\"Date\"", .coinTracking, nil),
        (#""Type","Buy Amount","Buy Currency","Sell Amount","Sell Currency","Fee","Fee Currency","Exchange","Trade-Group","Comment","Date""#, .coinTracking, nil),
        // The exchanges' trade histories are their own presets, never a statement.
        ("Timestamp,Transaction Type,Asset,Quantity Transacted,Spot Price Currency,Spot Price at Transaction,Subtotal,Total (inclusive of fees and/or spread),Fees and/or Spread,Notes", nil, .coinbase),
        ("Date(UTC),Pair,Side,Price,Executed,Amount,Fee", nil, .binance),
        (#""txid","ordertxid","pair","time","type","ordertype","price","cost","fee","vol","margin","misc","ledgers""#, nil, .kraken),
        // bitpal's own CSV is neither.
        ("type,asset,amount,price,date", nil, nil),
    ]

    func testEveryHeaderIsRecognisedAsItsOwnFormatAndNoOther() {
        for (header, statement, exchange) in Self.headers {
            let bytes = Array((header + "\n").utf8)
            XCTAssertEqual(StatementImport.recognise(bytes), statement, header)
            if statement == nil { XCTAssertEqual(ExchangeImport.recognise(bytes), exchange, header) }
        }
    }

    func testAHeaderBelowAPreambleIsFound() {
        // Schwab's older files start with a title line.
        let schwab = "\"Transactions  for account General Investing ...XXX as of 05/03/2023 02:21:05 PM ET\"\n"
            + #""Date","Action","Symbol","Description","Quantity","Price","Fees & Comm","Amount""# + "\n"
        XCTAssertEqual(StatementImport.recognise(Array(schwab.utf8)), .schwab)
    }
}
