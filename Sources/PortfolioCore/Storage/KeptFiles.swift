import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The files bitpal keeps in its data folder, and the guard that keeps every output off them.
public enum KeptFiles {
    /// The names of the files bitpal keeps in a data folder: the book, its first-migration backups,
    /// the caches and the lock and state files beside them.
    public static let names = ["portfolio.json", "portfolio.v1.json", "prices.json", "coins.json", ".prices.lock", ".network-failure"]

    /// Whether `name` is one of bitpal's own files (a kept name, a numbered backup, or a writer's temp file).
    static func isKept(name: String) -> Bool {
        if names.contains(name) { return true }
        if name.hasPrefix("portfolio.v1.") && name.hasSuffix(".json") { return true }
        return names.contains { name.hasPrefix("." + $0 + ".tmp.") }
    }

    /// Refuses to write an output (`report --html`, `export --output`) to `requested` when that is, after
    /// following every link, a file bitpal keeps in `directory` (or the file `portfolio.json` links to,
    /// or a hard link to any of them): writing there would replace the book or a cache with a page.
    public static func refuseOutput(_ requested: String, dataDirectory directory: String) throws(StoreError) {
        let target = try FileSystem.resolvingSymlink(requested)
        let folder = canonical((target as NSString).deletingLastPathComponent.isEmpty ? "." : (target as NSString).deletingLastPathComponent)
        let name = (target as NSString).lastPathComponent
        let refusal = StoreError(path: requested, reason: .writeFailed(
            "it is one of the files bitpal keeps in its data folder \(directory); write the output somewhere else"))
        if folder == canonical(directory) && isKept(name: name) { throw refusal }
        // The real file behind each kept name (a store kept in a dotfiles repository through a link).
        var kept: [(path: String, stat: stat?)] = []
        for keptName in names {
            guard let real = try? FileSystem.resolvingSymlink(directory + "/" + keptName) else { continue }
            var st = stat()
            kept.append((canonical((real as NSString).deletingLastPathComponent) + "/" + (real as NSString).lastPathComponent,
                         stat(real, &st) == 0 ? st : nil))
        }
        if kept.contains(where: { $0.path == folder + "/" + name }) { throw refusal }
        // A hard link to a kept file is the same file under another name.
        var out = stat()
        guard stat(target, &out) == 0 else { return }
        for (_, st) in kept {
            if let st, st.st_dev == out.st_dev && st.st_ino == out.st_ino { throw refusal }
        }
    }

    /// `path` with every link and `.`/`..` resolved, when it exists; else as given.
    private static func canonical(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
