/// Errors from reading or writing bitpal's files. Each names the file.
public struct StoreError: Error, Equatable, Sendable {
    public enum Reason: Equatable, Sendable {
        /// The file exists but could not be read (permissions, I/O).
        case unreadable(String)
        /// The file is not a document bitpal understands (JSON error with its line, a bad field).
        case malformed(String)
        /// Written by a newer bitpal.
        case unsupportedVersion(Int, highestSupported: Int)
        /// Writing the new version failed; the old file is intact.
        case writeFailed(String)
        /// The lock next to the file could not be taken.
        case lockFailed(String)
        /// No folder to keep data in could be found.
        case noDataDirectory(String)
        /// The stored history breaks rules (each described with its line) and this change does not remove them.
        case brokenRules([String])
    }

    public var path: String
    public var reason: Reason

    public init(path: String, reason: Reason) {
        self.path = path
        self.reason = reason
    }
}

extension StoreError {
    /// Any error met while reading `path`, as a `StoreError` (JSON errors keep their line and column).
    static func reading(_ path: String, _ error: any Error) -> StoreError {
        switch error {
        case let e as StoreError: e
        case let e as JSONReadError: StoreError(path: path, reason: .malformed(e.description))
        default: StoreError(path: path, reason: .malformed(String(describing: error)))
        }
    }
}

extension StoreError: CustomStringConvertible {
    public var description: String {
        switch reason {
        case let .unreadable(detail):
            "cannot read \(path): \(detail)"
        case let .malformed(detail):
            "\(path) is not a valid bitpal file: \(detail) (it was left untouched; fix it or restore a backup)"
        case let .unsupportedVersion(found, highest):
            "\(path) has format version \(found), but this bitpal reads up to version \(highest); upgrade bitpal (the file was left untouched)"
        case let .writeFailed(detail):
            "could not write \(path): \(detail) (nothing was changed)"
        case let .lockFailed(detail):
            "could not lock \(path): \(detail)"
        case let .noDataDirectory(detail):
            "no data folder: \(detail)"
        case let .brokenRules(problems):
            "\(path) breaks \(problems.count) rule\(problems.count == 1 ? "" : "s") (\(problems.prefix(3).joined(separator: "; "))"
                + (problems.count > 3 ? "; …" : "") + "), so nothing was written: run 'bitpal check', then delete or edit "
                + "the records it names (an ID or @LINE, e.g. 'bitpal delete @12')"
        }
    }
}

extension StoreError {
    /// The error for a cache file, without the advice meant for the portfolio ("restore a backup").
    public var cacheDescription: String {
        switch reason {
        case let .malformed(detail): "\(path) cannot be read: \(detail)"
        default: description
        }
    }
}
