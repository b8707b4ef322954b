import Foundation

extension Session {
    /// Placeholder until price history lands.
    public func fetchHistory(coin: String, currencies: [String], days: Int, purpose: NetworkPurpose) throws -> [Quote] { [] }
}
