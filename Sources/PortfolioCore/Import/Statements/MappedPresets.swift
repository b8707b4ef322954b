/// Presets written as mappings (`import --map`): files of one event per row, whose columns and words
/// a mapping states whole. `import --format NAME --show-map` prints the mapping, a starting point for
/// a file like it, and it imports as the preset does.
extension StatementFormat {
    /// The preset's mapping, or `nil` when the format is read by code (it groups the rows of one
    /// event, or a row has two sides, or its columns differ by kind).
    public var mapping: String? {
        switch self {
        case .schwab: Self.schwabMapping
        case .revolut: Self.revolutMapping
        case .ibkr, .krakenLedger, .binanceStatement, .degiro, .trading212, .cryptoCom, .fidelity, .koinly, .coinTracking: nil
        }
    }

    /// Charles Schwab's transactions CSV: USD only; a title line above the header is left out and the
    /// `Transactions Total` line below is counted (untyped); `as of` dates are booked on their first date; a trade is the
    /// cash that moved (`Amount`, fees included), dividends and interest take their money from it
    /// too, its sign saying which way (a negative dividend is a reversal, a positive fee a refund:
    /// both counted); foreign tax and ADR fees are the tax withheld on that day's dividend of the
    /// symbol; reinvested dividends are a dividend and a buy; a symbol is registered as a stock
    /// priced by Yahoo (US tickers are Yahoo's symbols). `Cash In Lieu` (a fractional share sold
    /// for cash, with no quantity) and corporate actions are counted.
    static let schwabMapping = #"""
    {
      "date": {"column": "Date", "format": "MM/dd/yyyy *"},
      "kind": {"column": "Action", "otherwise": "skip", "values": {
        "Buy": "buy", "Sell": "sell", "Reinvest Shares": "buy",
        "Cash Dividend": "dividend", "Qualified Dividend": "dividend", "Non-Qualified Div": "dividend",
        "Special Non Qual Div": "dividend", "Qual Div Reinvest": "dividend", "Pr Yr Cash Div": "dividend",
        "Reinvest Dividend": "dividend",
        "Bank Interest": "interest", "Credit Interest": "interest",
        "MoneyLink Deposit": "deposit", "MoneyLink Transfer": "deposit", "Wire Received": "deposit", "Wire Sent": "withdrawal",
        "Foreign Tax Paid": "tax", "ADR Mgmt Fee": "tax", "Advisor Fee": "expense", "Service Fee": "expense"}},
      "asset": {"column": "Symbol"},
      "amount": {"column": "Quantity"},
      "price": {"column": "Price"},
      "total": {"column": "Amount", "includesFee": true},
      "fee": {"column": "Fees & Comm"},
      "money": {"column": "Amount", "signed": true},
      "currency": {"value": "USD"},
      "note": {"column": "Description"},
      "register": {"type": "stock", "name": "Description", "quote": "yahoo"}
    }
    """#

    /// Revolut's trading statement: ISO times in UTC, money with its currency symbol, one row per
    /// event; a buy or sell is its `Total Amount` (the price is total ÷ quantity).
    static let revolutMapping = #"""
    {
      "date": {"column": "Date"},
      "kind": {"column": "Type", "otherwise": "skip", "values": {
        "BUY - MARKET": "buy", "BUY - LIMIT": "buy", "BUY - STOP": "buy", "SELL - MARKET": "sell", "SELL - LIMIT": "sell", "SELL - STOP": "sell",
        "DIVIDEND": "dividend", "CASH TOP-UP": "deposit", "CASH WITHDRAWAL": "withdrawal", "CUSTODY FEE": "expense"}},
      "asset": {"column": "Ticker"},
      "amount": {"column": "Quantity"},
      "total": {"column": "Total Amount"},
      "money": {"column": "Total Amount", "signed": true},
      "currency": {"column": "Currency"},
      "register": {"type": "stock"}
    }
    """#
}
