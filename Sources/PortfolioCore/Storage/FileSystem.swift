import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Small POSIX file helpers: whole-file reads, crash-safe replacement, private folders, locks.
public enum FileSystem {
    /// The most `readBuffer` reads by default: 1 GiB. A million-transaction store is about
    /// 170 MB, so this leaves room for ~6 million; anything larger is not a file bitpal wrote
    /// (or is `/dev/zero` behind a link) and is refused before memory runs out.
    public static let defaultReadLimit = 1 << 30

    /// The bytes of a file, or `nil` when it does not exist.
    ///
    /// `allowStreams` also reads a FIFO or a character device to its end (`import <(…)`), up to `limit`.
    public static func read(_ path: String, limit: Int = defaultReadLimit, allowStreams: Bool = false) throws(StoreError) -> [UInt8]? {
        guard let buffer = try readBuffer(path, limit: limit, allowStreams: allowStreams) else { return nil }
        return Array(UnsafeBufferPointer(start: buffer.base, count: buffer.count))
    }

    /// A whole file read straight into memory a `JSONReader` can scan; `nil` when it does not exist.
    ///
    /// Only a regular file is read (after following links): a FIFO, socket or device is refused
    /// by name instead of blocking or never ending (it is opened `O_NONBLOCK`, so even a FIFO
    /// without a writer does not hang `open`), and so is a file larger than `limit` bytes.
    public static func readBuffer(_ path: String, limit: Int = defaultReadLimit, allowStreams: Bool = false) throws(StoreError) -> ByteBuffer? {
        try readPrefixes(path, limit: limit, allowStreams: allowStreams, first: nil) { buffer, _ throws(StoreError) in buffer }
    }

    /// Reads `path` from its start in growing prefixes (`first` bytes, then four times as many …),
    /// offering each to `attempt` until it returns a value; the whole file comes last, with `complete`
    /// true. `nil` when the file does not exist. With `first` `nil` the file is read whole at once.
    ///
    /// The checks are `readBuffer`'s: a regular file (or a stream with `allowStreams`) of at most `limit` bytes.
    /// `attempt` may not keep a prefix it declines: the next one is read into the same memory.
    public static func readPrefixes<T>(_ path: String, limit: Int = defaultReadLimit, allowStreams: Bool = false, first: Int?,
                                       _ attempt: (ByteBuffer, _ complete: Bool) throws(StoreError) -> T?) throws(StoreError) -> T? {
        // A pipe named on purpose (`import <(…)`, a FIFO) is opened like any pipe: waiting for its
        // writer. Opening it without blocking first would let a quick writer write, close and be
        // gone before the blocking open, which would then wait forever.
        var named = stat()
        let stream = allowStreams && stat(path, &named) == 0 && [S_IFIFO, S_IFCHR].contains(named.st_mode & S_IFMT)
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | (stream ? 0 : O_NONBLOCK))
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw StoreError(path: path, reason: .unreadable(errorText()))
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw StoreError(path: path, reason: .unreadable(errorText())) }
        let kind = st.st_mode & S_IFMT
        if allowStreams && (kind == S_IFIFO || kind == S_IFCHR) {
            if !stream {
                // It became a pipe between the two looks: read it without blocking on a writer.
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
            }
        } else if let kind = nonRegularKind(st.st_mode) {
            throw StoreError(path: path, reason: .unreadable("it is \(kind), not a regular file"))
        }
        func tooLarge() -> StoreError {
            StoreError(path: path, reason: .unreadable("it is larger than \(sizeText(limit)), the most bitpal reads from such a file"))
        }
        if Int64(st.st_size) > Int64(limit) { throw tooLarge() }
        var buffer = ByteBuffer(capacity: min(max(Int(st.st_size), 0), limit) + 1)
        // The next prefix offered ends here (the whole file when `first` is nil).
        var offerAt = first ?? Int.max
        while true {
            if buffer.freeSpace == 0 {
                // The file grew while being read: continue in a larger buffer, up to the limit.
                if buffer.count >= limit { throw tooLarge() }
                let bigger = ByteBuffer(capacity: min(buffer.count * 2, limit + 1))
                bigger.base.initialize(from: buffer.base, count: buffer.count)
                bigger.grow(by: buffer.count)
                buffer = bigger
            }
            let want = min(buffer.freeSpace, max(offerAt - buffer.count, 1))
            let n = Glibc.read(fd, buffer.base + buffer.count, want)
            if n < 0 {
                if errno == EINTR { continue }
                throw StoreError(path: path, reason: .unreadable(errorText()))
            }
            if n == 0 { return try attempt(buffer, true) }
            buffer.grow(by: n)
            if buffer.count > limit { throw tooLarge() }
            if buffer.count >= offerAt {
                if let value = try attempt(buffer, false) { return value }
                offerAt = offerAt > Int.max / 4 ? Int.max : offerAt * 4
            }
        }
    }

    /// What a file of mode `mode` is, in words, when it is not a regular file.
    static func nonRegularKind(_ mode: mode_t) -> String? {
        switch mode & S_IFMT {
        case S_IFREG: nil
        case S_IFDIR: "a folder"
        case S_IFIFO: "a FIFO"
        case S_IFSOCK: "a socket"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        default: "not a regular file"
        }
    }

    static func sizeText(_ bytes: Int) -> String {
        if bytes >= 1 << 30 && bytes % (1 << 30) == 0 { return "\(bytes >> 30) GiB" }
        if bytes >= 1 << 20 && bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
        return "\(bytes) bytes"
    }

    /// Replaces `path` with `bytes` all at once: a private temp file in the same folder,
    /// written, flushed to disk, renamed over the old file, then the folder flushed.
    ///
    /// If anything fails, the old file is untouched and the temp file is removed.
    public static func writeAtomically(_ bytes: [UInt8], to requested: String, mode: mode_t = 0o600) throws(StoreError) {
        try writeAtomically(to: requested, mode: mode) { sink throws(StoreError) in
            try bytes.withUnsafeBufferPointer { buffer throws(StoreError) in try sink.write(buffer) }
        }
    }

    /// Where `writeAtomically(to:mode:_:)` sends the bytes of the new file, piece by piece.
    public struct FileSink {
        fileprivate let fd: Int32
        fileprivate var failure: String?
        /// The fingerprint of what was written (a snapshot is keyed to it).
        fileprivate var hash = ContentHash()

        /// Appends `piece` to the new file.
        public mutating func write(_ piece: UnsafeBufferPointer<UInt8>) throws(StoreError) {
            guard failure == nil, let base = piece.baseAddress else { return }
            hash.update(UnsafeRawBufferPointer(piece))
            var offset = 0
            while offset < piece.count {
                let n = Glibc.write(fd, base + offset, piece.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = errorText()
                    throw StoreError(path: "", reason: .writeFailed(failure ?? ""))
                }
                offset += n
            }
        }
    }

    /// `writeAtomically` of the bytes `produce` hands its sink, in order: the same temp file, flush and
    /// rename, without the whole new file in memory at once. If `produce` or a write fails, the old file
    /// is untouched and the temp file is removed.
    /// Returns the fingerprint of the bytes written (`ContentHash`).
    @discardableResult
    public static func writeAtomically(to requested: String, mode: mode_t = 0o600,
                                       _ produce: (inout FileSink) throws(StoreError) -> Void) throws(StoreError) -> (UInt64, UInt64) {
        let file = try writeTemporary(to: requested, mode: mode, produce)
        try file.commit()
        return file.digest
    }

    /// A new file written and flushed beside the file it is to replace, not yet in its place: `commit`
    /// renames it over that file and flushes the folder; `discard` removes it, leaving the old file as it was.
    public struct PendingFile: Sendable {
        /// The temp file.
        let temp: String
        /// The file it replaces (links followed).
        let path: String
        /// The fingerprint of its bytes (`ContentHash`).
        public let digest: (UInt64, UInt64)

        /// Renames the temp file over the file and flushes the folder (the end of `writeAtomically`).
        public func commit() throws(StoreError) {
            guard rename(temp, path) == 0 else {
                let detail = errorText()
                unlink(temp)
                throw StoreError(path: path, reason: .writeFailed(detail))
            }
            let dfd = open((path as NSString).deletingLastPathComponent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if dfd >= 0 {
                fsync(dfd)
                close(dfd)
            }
        }

        /// Removes the temp file.
        public func discard() { unlink(temp) }
    }

    /// The first part of `writeAtomically`: the bytes `produce` hands its sink written to a private temp
    /// file in the folder of `requested` (links followed) and flushed to disk, but not renamed into place.
    /// If anything fails, the temp file is removed.
    public static func writeTemporary(to requested: String, mode: mode_t = 0o600,
                                      _ produce: (inout FileSink) throws(StoreError) -> Void) throws(StoreError) -> PendingFile {
        // Through a symlink (a store kept in a dotfiles repository), replace the file it points to,
        // not the link (nor any link in the middle of a chain).
        let path = try resolvingSymlink(requested)
        let dir = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        let temp = "\(dir)/.\(name).tmp.\(getpid()).\(UInt32.random(in: 0...UInt32.max))"
        let fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else { throw StoreError(path: path, reason: .writeFailed(errorText())) }
        func fail(_ detail: String) -> StoreError {
            close(fd)
            unlink(temp)
            return StoreError(path: path, reason: .writeFailed(detail))
        }
        fchmod(fd, mode)
        var sink = FileSink(fd: fd)
        do {
            try produce(&sink)
        } catch {
            // A failed write names this file; any other error is the producer's own.
            if let detail = sink.failure { throw fail(detail) }
            close(fd)
            unlink(temp)
            throw error
        }
        guard fsync(fd) == 0 else { throw fail(errorText()) }
        guard close(fd) == 0 else {
            unlink(temp)
            throw StoreError(path: path, reason: .writeFailed(errorText()))
        }
        return PendingFile(temp: temp, path: path, digest: sink.hash.digest)
    }

    /// How many links `resolvingSymlink` follows, as the kernel does (`MAXSYMLINKS`).
    public static let maxSymlinks = 40

    /// `path` with its final component followed through every symlink to what is not a link
    /// (which may not exist yet); `path` itself when it is not a link.
    ///
    /// - Throws: `StoreError` when the chain is longer than `maxSymlinks` or loops, so a write
    ///   never replaces a link in the middle of a chain.
    public static func resolvingSymlink(_ path: String) throws(StoreError) -> String {
        var current = path
        for _ in 0...maxSymlinks {
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let n = readlink(current, &buffer, buffer.count - 1)
            if n < 0 {
                // EINVAL: not a link; ENOENT: the end of the chain does not exist yet.
                if errno == EINVAL || errno == ENOENT { return current }
                throw StoreError(path: path, reason: .unreadable("cannot follow the link \(current): \(errorText())"))
            }
            let target = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            current = target.hasPrefix("/") ? target : ((current as NSString).deletingLastPathComponent as NSString).appendingPathComponent(target)
        }
        throw StoreError(path: path, reason: .unreadable(
            "it is a chain of more than \(maxSymlinks) symbolic links, or a loop; point it at the file directly"))
    }

    /// Removes temp files that killed writers left beside `path`. Call only while holding its lock:
    /// then no live writer owns one.
    public static func removeLeftoverTempFiles(of path: String) {
        for leftover in leftoverTempFiles(of: path) { unlink(leftover) }
    }

    /// The paths of the temp files beside `path` that `removeLeftoverTempFiles` removes.
    static func leftoverTempFiles(of path: String) -> [String] {
        let dir = (path as NSString).deletingLastPathComponent
        let prefix = "." + (path as NSString).lastPathComponent + ".tmp."
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: dir) else { return [] }
        return names.filter { $0.hasPrefix(prefix) }.map { dir + "/" + $0 }
    }

    /// Creates `path` (and missing parents) if needed; a folder bitpal creates is 0700.
    public static func ensureDirectory(_ path: String) throws(StoreError) {
        var isDir: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDir) {
            if isDir.boolValue { return }
            throw StoreError(path: path, reason: .noDataDirectory("\(path) exists and is not a folder"))
        }
        let parent = (path as NSString).deletingLastPathComponent
        if !parent.isEmpty && parent != path { try ensureDirectory(parent) }
        if mkdir(path, 0o700) != 0 && errno != EEXIST {
            throw StoreError(path: path, reason: .noDataDirectory("cannot create \(path): \(errorText())"))
        }
        chmod(path, 0o700)
    }

    public static func errorText(_ code: Int32 = errno) -> String {
        String(cString: strerror(code))
    }
}

/// An exclusive `flock`, held until `unlock()` or deinit.
///
/// The portfolio locks its data folder itself (`init(directory:)`): a folder cannot be deleted
/// while it holds the data, so unlike a lock file nobody can remove the lock from under a
/// writer. A folder has one exclusive lock, so other files (the price cache) lock a file of
/// their own (`init(path:)`).
public final class FileLock {
    private var fd: Int32

    /// Blocks until the lock on the lock file `path` (created if needed) is held.
    public init(path: String) throws(StoreError) {
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o600)
        guard fd >= 0 else { throw StoreError(path: path, reason: .lockFailed(FileSystem.errorText())) }
        try take(path)
    }

    /// Blocks until the lock on the folder `directory` is held.
    public init(directory: String) throws(StoreError) {
        fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw StoreError(path: directory, reason: .lockFailed(FileSystem.errorText())) }
        try take(directory)
    }

    /// The lock on the folder `directory` if nobody holds it now; `nil` (at once) otherwise.
    public static func ifFree(directory: String) -> FileLock? {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            return nil
        }
        return FileLock(holding: fd)
    }

    private init(holding fd: Int32) { self.fd = fd }

    private func take(_ path: String) throws(StoreError) {
        while flock(fd, LOCK_EX) != 0 {
            if errno == EINTR { continue }
            let detail = FileSystem.errorText()
            close(fd)
            fd = -1
            throw StoreError(path: path, reason: .lockFailed(detail))
        }
    }

    public func unlock() {
        if fd >= 0 {
            flock(fd, LOCK_UN)
            close(fd)
            fd = -1
        }
    }

    deinit { unlock() }
}

extension FileSystem {
    /// Everything readable from a file descriptor (standard input for `import -`), up to `limit` bytes.
    public static func readAll(fd: Int32, limit: Int = defaultReadLimit) throws(StoreError) -> [UInt8] {
        var result = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw StoreError(path: "standard input", reason: .unreadable(errorText()))
            }
            if n == 0 { return result }
            if result.count + n > limit {
                throw StoreError(path: "standard input", reason: .unreadable("it is larger than \(sizeText(limit))"))
            }
            result.append(contentsOf: chunk[0..<n])
        }
    }
}
