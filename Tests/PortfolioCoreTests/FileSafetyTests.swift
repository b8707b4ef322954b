import Foundation
import PortfolioCore
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Files that are not what they seem: FIFOs, devices, huge files, long symlink chains and loops.
@Suite struct FileSafetyTests {
    @Test func aFIFOIsNamedNotOpenedForever() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        #expect(mkfifo(dir + "/portfolio.json", 0o600) == 0)
        let store = PortfolioStore(directory: dir)
        #expect(throws: StoreError(path: store.path, reason: .unreadable("it is a FIFO, not a regular file"))) { try store.load() }
        // A write refuses to read it first, so it never replaces it either.
        #expect(throws: StoreError.self) { try store.update { _ in (true, ()) } }
        var st = stat()
        #expect(lstat(store.path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFIFO)
        #expect(mkfifo(dir + "/prices.json", 0o600) == 0)
        #expect(throws: StoreError.self) { try PriceCache(directory: dir).loadLatest() }
    }

    @Test func aLinkToADeviceIsRefusedWithoutReadingIt() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        #expect(symlink("/dev/zero", dir + "/portfolio.json") == 0)
        let store = PortfolioStore(directory: dir)
        #expect(throws: StoreError(path: store.path, reason: .unreadable("it is a character device, not a regular file"))) {
            try store.load()
        }
        #expect(symlink("/dev/zero", dir + "/coins.json") == 0)
        #expect(throws: StoreError.self) { try CatalogCache(directory: dir).load() }
        // Reading a stream on purpose (import <(…)) still stops at the limit.
        #expect(throws: StoreError.self) { try FileSystem.read("/dev/zero", limit: 1 << 20, allowStreams: true) }
    }

    @Test func filesOverTheLimitAreRefused() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let path = dir + "/big"
        #expect(FileManager.default.createFile(atPath: path, contents: Data(repeating: 0x20, count: 4097)))
        #expect(throws: StoreError(path: path, reason: .unreadable("it is larger than 4096 bytes, the most bitpal reads from such a file"))) {
            try FileSystem.read(path, limit: 4096)
        }
        #expect(try FileSystem.read(path, limit: 4097)?.count == 4097)
        #expect(PortfolioStore.readLimit == 1 << 30)
        #expect(PriceCache.readLimit < PortfolioStore.readLimit && CatalogCache.readLimit < PriceCache.readLimit)
    }

    /// A chain of `n` links l1 → l2 → … → ln → real file, in one folder.
    func chain(_ n: Int, in dir: String) throws -> String {
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        for i in 1...n {
            let target = i == n ? "real.json" : "l\(i + 1)"
            #expect(symlink(target, dir + "/l\(i)") == 0)
        }
        return dir + "/l1"
    }

    @Test func writesFollowTheWholeChainOfLinks() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let first = try chain(21, in: dir)
        try FileSystem.writeAtomically(Array("one".utf8), to: first)
        try FileSystem.writeAtomically(Array("two".utf8), to: first)
        #expect(try FileSystem.read(dir + "/real.json") == Array("two".utf8))
        for i in 1...21 {
            var st = stat()
            #expect(lstat(dir + "/l\(i)", &st) == 0 && (st.st_mode & S_IFMT) == S_IFLNK, "l\(i) is still a link")
        }
        #expect(try FileSystem.resolvingSymlink(first) == dir + "/real.json")
    }

    @Test func tooLongChainsAndLoopsAreRefusedAndNothingIsReplaced() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let first = try chain(FileSystem.maxSymlinks + 1, in: dir)
        #expect(throws: StoreError.self) { try FileSystem.writeAtomically(Array("x".utf8), to: first) }
        #expect(!FileManager.default.fileExists(atPath: dir + "/real.json"))
        // A loop: a → b → a.
        #expect(symlink("b", dir + "/a") == 0 && symlink("a", dir + "/b") == 0)
        #expect(throws: StoreError.self) { try FileSystem.writeAtomically(Array("x".utf8), to: dir + "/a") }
        var st = stat()
        #expect(lstat(dir + "/a", &st) == 0 && (st.st_mode & S_IFMT) == S_IFLNK)
        #expect(lstat(dir + "/b", &st) == 0 && (st.st_mode & S_IFMT) == S_IFLNK)
        // The store says so, exit 1 (a StoreError), and leaves the links alone.
        let storeDir = dir + "/store"
        try FileManager.default.createDirectory(atPath: storeDir, withIntermediateDirectories: true)
        #expect(symlink("../a", storeDir + "/portfolio.json") == 0)
        #expect(throws: StoreError.self) { try PortfolioStore(directory: storeDir).update { _ in (true, ()) } }
        #expect(lstat(storeDir + "/portfolio.json", &st) == 0 && (st.st_mode & S_IFMT) == S_IFLNK)
    }

    @Test func writersNoLongerCreateALockFile() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = PortfolioStore(directory: dir)
        try store.update { p in
            p.watchlist.append(WatchEntry(coinId: "bitcoin", dateAdded: day("2024-01-01")))
            return (true, ())
        }
        #expect(!FileManager.default.fileExists(atPath: dir + "/.portfolio.lock"))
        #expect(try store.load().watchlist.count == 1)
    }

    @Test func theFolderLockExcludesOtherWritersEvenWhenTheOldLockFileIsDeleted() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let held = try FileLock(directory: dir)
        let fd = open(dir, O_RDONLY | O_DIRECTORY)
        defer { close(fd) }
        #expect(flock(fd, LOCK_EX | LOCK_NB) != 0)
        unlink(dir + "/.portfolio.lock")
        #expect(flock(fd, LOCK_EX | LOCK_NB) != 0)
        held.unlock()
        #expect(flock(fd, LOCK_EX | LOCK_NB) == 0)
    }
}
