import ModelStoreCSQLite

/// Stopping a call while it runs: its task's cancellation and its time limit (`Interruption`).
extension Connection {
    /// How many SQLite virtual-machine instructions run between two looks at a call's
    /// interruption: a look is one atomic load (and a clock read under a time limit), a few
    /// nanoseconds against the microseconds these instructions take, and a cancelled
    /// statement stops well within a millisecond.
    static let progressInterval: Int32 = 1_000

    /// Runs `body`, one call, so that `interruption` can stop it: on SQLite through the
    /// progress handler, installed for this call only (a call nothing can stop runs without
    /// one and pays nothing); on a server through a check before each statement, the
    /// server's statement timeout and the driver (`InterruptibleRemoteConnection`).
    ///
    /// A stopped call throws `.cancelled` or `.timedOut` (`Interruption.explain`), whatever
    /// error the interrupted statement became on its way out. A read that ran to its end
    /// while cancelled, or past its limit, throws all the same; a write throws only when it
    /// did not commit (`inTransaction` checks before `COMMIT`).
    func running<T>(_ interruption: Interruption?, _ body: () throws -> T) throws -> T {
        guard let interruption else { return try body() }
        let outer = self.interruption
        self.interruption = interruption
        interruption.startClock()
        let driver = remote as? any InterruptibleRemoteConnection
        if remote == nil {
            csqlite_set_interruption(handle, interruption.state, Self.progressInterval)
        } else {
            driver?.interruption = interruption
        }
        // (Registered before the server's statement timeout is set: a SET that fails — the
        // connection closed by a cancel, a server restart — must not leave this call's
        // interruption on a pooled connection for later calls.)
        var timedOnServer = false
        defer {
            if remote == nil {
                csqlite_set_interruption(handle, outer?.state, Self.progressInterval)
            } else {
                driver?.interruption = outer
            }
            if timedOnServer, let reset = dialect.statementTimeout(milliseconds: nil) {
                interruption.withoutInterrupting { _ = try? execute(reset) }
            }
            self.interruption = outer
        }
        // A server bounds each statement by the time left (SQLite's handler reads the clock),
        // or by the connection's own statement timeout when that is shorter.
        if let left = interruption.remainingSeconds, left > 0, left < (driver?.statementTimeout ?? .infinity),
            let setting = dialect.statementTimeout(milliseconds: max(1, Int((left * 1000).rounded(.up))))
        {
            timedOnServer = true
            try interruption.withoutInterrupting { try execute(setting) }
        }
        let result: T
        do {
            result = try body()
        } catch {
            throw interruption.explain(error)
        }
        if let stop = interruption.stopAtEnd() { throw stop }
        return result
    }

    /// Runs `body`, the connection's own transaction control, so that no interruption stops
    /// it: a call stopped half way must still commit or roll back what it began.
    func uninterrupted<T>(_ body: () throws -> T) rethrows -> T {
        guard let interruption else { return try body() }
        // A server driver stops a statement by closing its connection, which would leave a
        // COMMIT's outcome unknown: it does not see the interruption meanwhile.
        let driver = remote as? any InterruptibleRemoteConnection
        driver?.interruption = nil
        defer { driver?.interruption = interruption }
        return try interruption.withoutInterrupting(body)
    }
}
