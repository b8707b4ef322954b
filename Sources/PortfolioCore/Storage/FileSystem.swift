import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Small POSIX file helpers: whole-file reads, crash-safe replacement, private folders, locks.
public enum FileSystem {
    /// The bytes of a file, or `nil` when it does not exist.
    public static func read(_ path: String) throws(StoreError) -> [UInt8]? {
        guard let buffer = try readBuffer(path) else { return nil }
        return Array(UnsafeBufferPointer(start: buffer.base, count: buffer.count))
    }

    /// A whole file read straight into memory a `JSONReader` can scan; `nil` when it does not exist.
    public static func readBuffer(_ path: String) throws(StoreError) -> ByteBuffer? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw StoreError(path: path, reason: .unreadable(errorText()))
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw StoreError(path: path, reason: .unreadable(errorText())) }
        if (st.st_mode & S_IFMT) == S_IFDIR { throw StoreError(path: path, reason: .unreadable("it is a folder")) }
        var buffer = ByteBuffer(capacity: Int(st.st_size) + 1)
        while true {
            if buffer.freeSpace == 0 {
                // The file grew while being read: continue in a larger buffer.
                let bigger = ByteBuffer(capacity: buffer.count * 2)
                bigger.base.initialize(from: buffer.base, count: buffer.count)
                bigger.grow(by: buffer.count)
                buffer = bigger
            }
            let n = Glibc.read(fd, buffer.base + buffer.count, buffer.freeSpace)
            if n < 0 {
                if errno == EINTR { continue }
                throw StoreError(path: path, reason: .unreadable(errorText()))
            }
            if n == 0 { return buffer }
            buffer.grow(by: n)
        }
    }

    /// Replaces `path` with `bytes` all at once: a private temp file in the same folder,
    /// written, flushed to disk, renamed over the old file, then the folder flushed.
    ///
    /// If anything fails, the old file is untouched and the temp file is removed.
    public static func writeAtomically(_ bytes: [UInt8], to requested: String, mode: mode_t = 0o600) throws(StoreError) {
        // Through a symlink (a store kept in a dotfiles repository), replace the file it points to,
        // not the link.
        let path = resolvingSymlink(requested)
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
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { raw in
                Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
            }
            if n < 0 {
                if errno == EINTR { continue }
                throw fail(errorText())
            }
            offset += n
        }
        guard fsync(fd) == 0 else { throw fail(errorText()) }
        guard close(fd) == 0 else {
            unlink(temp)
            throw StoreError(path: path, reason: .writeFailed(errorText()))
        }
        guard rename(temp, path) == 0 else {
            let detail = errorText()
            unlink(temp)
            throw StoreError(path: path, reason: .writeFailed(detail))
        }
        let dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dfd >= 0 {
            fsync(dfd)
            close(dfd)
        }
    }

    /// `path` with a final symlink followed (to any depth); `path` itself when it is not a link.
    static func resolvingSymlink(_ path: String) -> String {
        var current = path
        for _ in 0..<16 {
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: current) else { return current }
            current = target.hasPrefix("/") ? target : ((current as NSString).deletingLastPathComponent as NSString).appendingPathComponent(target)
        }
        return current
    }

    /// Removes temp files that killed writers left beside `path`. Call only while holding its lock:
    /// then no live writer owns one.
    public static func removeLeftoverTempFiles(of path: String) {
        let dir = (path as NSString).deletingLastPathComponent
        let prefix = "." + (path as NSString).lastPathComponent + ".tmp."
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: dir) else { return }
        for name in names where name.hasPrefix(prefix) { unlink(dir + "/" + name) }
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

/// An exclusive `flock` on a lock file, held until `unlock()` or deinit.
///
/// The lock lives on its own file, because the data file's inode changes with every rename.
public final class FileLock {
    private var fd: Int32

    /// Blocks until the lock is held.
    public init(path: String) throws(StoreError) {
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw StoreError(path: path, reason: .lockFailed(FileSystem.errorText())) }
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
    /// Everything readable from a file descriptor (standard input for `import -`).
    public static func readAll(fd: Int32) throws(StoreError) -> [UInt8] {
        var result = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw StoreError(path: "standard input", reason: .unreadable(errorText()))
            }
            if n == 0 { return result }
            result.append(contentsOf: chunk[0..<n])
        }
    }
}
