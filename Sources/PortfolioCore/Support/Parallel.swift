import Dispatch

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
