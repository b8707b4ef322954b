import Dispatch
import Foundation

/// Two pieces of work at once on a machine's two cores: `alongside` on a worker thread while `first`
/// runs on the calling thread. Used only where both are pure reads of values (a parse, a replay)
/// whose results are then combined in a fixed order, so the outcome never depends on timing.
public enum Parallel {
    /// Below this many records the work is done one piece after the other (a thread is not worth it).
    static let minimumRecords = 4096

    /// Runs `second` on a worker thread while `first` runs here; returns when both have finished.
    static func run<A, B: Sendable>(_ first: () throws -> A, alongside second: @escaping @Sendable () -> B) rethrows -> (A, B) {
        let pending = Pending(second)
        defer { pending.wait() }
        let a = try first()
        return (a, pending.value())
    }

    /// Hands `value` (a large book a command is done with) to a worker thread to be destroyed there, so
    /// that freeing a million records does not hold up this one (its memory comes back a moment later,
    /// or at exit); `value` is left as `empty`. The worker holds the last reference this thread had.
    public static func discard<T: Sendable>(_ value: inout T, leaving empty: T) {
        let box = Box<T>()
        box.value = value
        value = empty
        DispatchQueue.global(qos: .utility).async { box.value = nil }
    }

    private final class Box<T>: @unchecked Sendable {
        var value: T?
    }

    /// `body` of each of `items`, at most `width` at once (requests to one service), results in the
    /// items' order whatever the order they finish in.
    public static func map<T: Sendable, R: Sendable>(_ items: [T], width: Int, _ body: @escaping @Sendable (T) -> R) -> [R] {
        guard items.count > 1, width > 1 else { return items.map(body) }
        let results = MapResults<R>(items.count)
        let group = DispatchGroup()
        for _ in 0..<min(width, items.count) {
            group.enter()
            Thread.detachNewThread {
                while let i = results.take() { results.put(body(items[i]), at: i) }
                group.leave()
            }
        }
        group.wait()
        return results.values.enumerated().map { i, v in v ?? body(items[i]) }
    }

    /// The results of `map`, filled in by its workers.
    private final class MapResults<R>: @unchecked Sendable {
        let lock = NSLock()
        var next = 0
        var values: [R?]
        init(_ n: Int) { values = Array(repeating: nil, count: n) }

        /// The next item's index for a worker, or `nil` when all are taken.
        func take() -> Int? {
            lock.lock()
            defer { lock.unlock() }
            guard next < values.count else { return nil }
            next += 1
            return next - 1
        }

        func put(_ value: R, at i: Int) {
            lock.lock()
            values[i] = value
            lock.unlock()
        }
    }

    /// Work started on a worker thread, to be waited for (`value`) exactly once or left to finish (`wait`).
    final class Pending<B: Sendable>: @unchecked Sendable {
        private let group = DispatchGroup()
        private var result: B?
        private let work: @Sendable () -> B

        init(_ work: @escaping @Sendable () -> B) {
            self.work = work
            group.enter()
            DispatchQueue.global(qos: .userInitiated).async { [self] in
                result = work()
                group.leave()
            }
        }

        /// Blocks until the work has finished.
        func wait() { group.wait() }

        /// The work's result, once it has finished.
        func value() -> B {
            group.wait()
            // The worker always sets it before leaving the group; computing it here is a guard, not a path.
            if let result { return result }
            return work()
        }
    }
}
