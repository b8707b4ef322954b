/// bitpal's exit statuses (spec/cli.md).
public enum ExitCode: Int32, Sendable {
    /// It worked.
    case success = 0
    /// The operation failed: validation, not found, conflict, unreadable store.
    case failure = 1
    /// The command line was wrong: unknown command or option, a missing or malformed value.
    case usage = 2
    /// The price service could not be reached or refused; nothing was lost.
    case service = 3
}
