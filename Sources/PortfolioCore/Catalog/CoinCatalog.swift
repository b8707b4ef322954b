/// Resolves what a user types (`btc`, `Bitcoin`, `bitcoin`) to a coin, and searches coins.
///
/// Built from the built-in top coins plus, when present, the cached full list
/// from the price service. Built-in entries win, since they carry ranks.
public struct CoinCatalog: Sendable {
    public private(set) var coins: [Coin] = []
    private var byID: [String: Int] = [:]
    private var bySymbol: [String: [Int]] = [:]

    public init(_ coins: [Coin] = CoinCatalog.builtin, extra: [Coin] = []) {
        add(coins)
        add(extra)
    }

    /// Adds coins whose ids are not known yet.
    public mutating func add(_ more: [Coin]) {
        for c in more where byID[c.id] == nil {
            byID[c.id] = coins.count
            bySymbol[c.symbol.lowercased(), default: []].append(coins.count)
            coins.append(c)
        }
    }

    /// The coin with this id, if known.
    public func coin(id: String) -> Coin? { byID[id].map { coins[$0] } }

    /// An id (exact, any case) or a symbol (any case; the best market-cap rank wins when several share it).
    public func resolve(_ query: String) -> Coin? {
        let q = query.lowercased()
        if let i = byID[q] { return coins[i] }
        if let matches = bySymbol[q], !matches.isEmpty {
            return matches.map { coins[$0] }.min(by: CoinCatalog.rankOrder)
        }
        return nil
    }

    /// Best matches first: exact id or symbol, then prefixes, then substrings of id, symbol or name;
    /// ties by market-cap rank.
    public func search(_ query: String, limit: Int = 10) -> [Coin] {
        let q = query.lowercased()
        guard !q.isEmpty else { return [] }
        var scored: [(Int, Coin)] = []
        for c in coins {
            let id = c.id, sym = c.symbol.lowercased(), name = c.name.lowercased()
            let score: Int
            if id == q || sym == q { score = 0 }
            else if name == q { score = 1 }
            else if id.hasPrefix(q) || sym.hasPrefix(q) || name.hasPrefix(q) { score = 2 }
            else if id.contains(q) || sym.contains(q) || name.contains(q) { score = 3 }
            else { continue }
            scored.append((score, c))
        }
        scored.sort { a, b in a.0 != b.0 ? a.0 < b.0 : CoinCatalog.rankOrder(a.1, b.1) }
        return scored.prefix(max(0, limit)).map(\.1)
    }

    /// Up to three ids close to `query`, for "did you mean".
    public func suggestions(for query: String) -> [String] {
        let q = query.lowercased()
        var found = search(q, limit: 3).map(\.id)
        if found.count < 3 {
            let limit = max(1, min(3, q.count / 3))
            var near: [(Int, Coin)] = []
            let length = q.count
            // A distance is at least the difference of the lengths: a word much longer than any name is near none.
            func distance(_ text: String) -> Int { abs(text.count - length) > limit ? Int.max : EditDistance.between(q, text) }
            for c in coins {
                let d = min(distance(c.id), distance(c.symbol.lowercased()), distance(c.name.lowercased()))
                if d <= limit { near.append((d, c)) }
            }
            near.sort { a, b in a.0 != b.0 ? a.0 < b.0 : CoinCatalog.rankOrder(a.1, b.1) }
            for (_, c) in near where !found.contains(c.id) && found.count < 3 { found.append(c.id) }
        }
        return found
    }

    static func rankOrder(_ a: Coin, _ b: Coin) -> Bool {
        switch (a.marketCapRank, b.marketCapRank) {
        case let (x?, y?): return x != y ? x < y : a.id < b.id
        case (.some, nil): return true
        case (nil, .some): return false
        case (nil, nil): return a.id < b.id
        }
    }
}

/// Levenshtein distance, for suggestions.
public enum EditDistance {
    public static func between(_ a: String, _ b: String) -> Int {
        let x = Array(a.unicodeScalars), y = Array(b.unicodeScalars)
        if x.isEmpty { return y.count }
        if y.isEmpty { return x.count }
        var prev = Array(0...y.count)
        var cur = [Int](repeating: 0, count: y.count + 1)
        for i in 1...x.count {
            cur[0] = i
            for j in 1...y.count {
                let substitution: Int = prev[j - 1] + (x[i - 1] == y[j - 1] ? 0 : 1)
                let deletion: Int = prev[j] + 1
                let insertion: Int = cur[j - 1] + 1
                cur[j] = Swift.min(substitution, deletion, insertion)
            }
            swap(&prev, &cur)
        }
        return prev[y.count]
    }

    /// The candidates within a small distance of `word`, closest first.
    public static func closest(to word: String, in candidates: [String], max: Int = 3) -> [String] {
        let limit = Swift.max(1, Swift.min(3, word.count / 2))
        var scored: [(name: String, distance: Int)] = []
        for c in candidates {
            let d = between(word, c)
            if d <= limit { scored.append((c, d)) }
        }
        scored.sort { a, b in a.distance != b.distance ? a.distance < b.distance : a.name < b.name }
        return scored.prefix(max).map { $0.name }
    }
}
