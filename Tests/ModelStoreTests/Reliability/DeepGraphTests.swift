import Foundation
import Testing
@testable import ModelStore

/// A one-way to-one chain: each link stores the key of the next.
private struct ChainLink: StoredModel {
    var id: Int
    var label: String?
    @Related var next: ChainLink?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<ChainLink>] = [.toOne(\.next)]
}

/// A property whose type nests itself: stored as JSON.
private struct Tree: Codable, Sendable {
    var children: [Tree]
}

/// A nesting type with more to code per level, so more stack per level.
private struct Branch: Codable, Sendable {
    var name = "branch"
    var weight = 1.5
    var count = 3
    var tags = ["a", "b"]
    var note: String? = "note"
    var serial: Int64 = 42
    var open = true
    var sizes = [1, 2, 3]
    var label = "label"
    var ratio: Double? = 0.25
    var children: [Branch] = []

    static func chain(_ depth: Int) -> Branch {
        var branch = Branch()
        for _ in 1..<depth {
            var outer = Branch()
            outer.children = [branch]
            branch = outer
        }
        return branch
    }

    var depth: Int {
        var depth = 1
        var node = self
        while let child = node.children.first {
            depth += 1
            node = child
        }
        return depth
    }
}

private struct Document: StoredModel {
    var id: Int
    var title: String?
    var tree: Tree?
    var branch: Branch?
    static let primaryKey = ["id"]
}

/// Values as deep as the data are released by Swift recursively, one call per level; these
/// take them apart from the top instead, so that a test's own clean-up cannot overflow the
/// stack it is checking. Each must hold the only reference to what it takes apart.
extension ChainLink {
    mutating func dismantle() {
        var next = self.next
        self.next = nil
        while var node = next {
            next = node.next
            node.next = nil
        }
    }
}

extension Employee {
    mutating func dismantleReports() {
        var next = reports?.first
        reports = nil
        while var node = next {
            next = node.reports?.first
            node.reports = nil
        }
    }

    mutating func dismantleManagers() {
        var next = manager
        manager = nil
        while var node = next {
            next = node.manager
            node.manager = nil
        }
    }
}

extension Tree {
    /// A tree `depth` levels deep, each level one child.
    static func chain(_ depth: Int) -> Tree {
        var tree = Tree(children: [])
        for _ in 1..<depth { tree = Tree(children: [tree]) }
        return tree
    }

    var depth: Int {
        var depth = 1
        var node = self
        while let child = node.children.first {
            depth += 1
            node = child
        }
        return depth
    }

    mutating func dismantle() {
        var next = children.first
        children = []
        while var node = next {
            next = node.children.first
            node.children = []
        }
    }

    /// The JSON the synthesized coding makes of `chain(depth)`.
    static func json(depth: Int) -> String {
        String(repeating: #"{"children":["#, count: depth) + String(repeating: "]}", count: depth)
    }
}

/// Promise: graphs and nested values as deep as the data go load and save without running the
/// thread out of stack; values nested too deeply to code safely are refused with a clear error.
@Suite("Reliability: deep graphs and deeply nested values")
struct DeepGraphTests {
    /// Links in the chains: 20,000 by default (well past the ~3,500 levels at which a
    /// recursive walk overflowed); `MODELSTORE_DEEP=100000` for the long run.
    static let length = ProcessInfo.processInfo.environment["MODELSTORE_DEEP"].flatMap { Int($0) } ?? 20_000

    /// Links in the chains on `backend`: a server answers one query per level over its
    /// connection (about a millisecond each), so it gets 2,000 unless `MODELSTORE_DEEP` says
    /// otherwise: still far past the few hundred levels a recursive walk could take on
    /// `smallStack`.
    static func length(_ backend: Backend) -> Int {
        backend == .sqlite ? length : ProcessInfo.processInfo.environment["MODELSTORE_DEEP"].flatMap { Int($0) } ?? 2_000
    }

    /// The stack Apple platforms give secondary threads (Dispatch and `Thread` here get 8 MiB):
    /// work that recursed once per level of data would overflow it within a few hundred
    /// levels, so passing on it shows the stack use is bounded.
    static let smallStack = 512 * 1024

    /// Runs `body` on a thread with a `smallStack` stack and returns its result.
    private func onSmallStack<T: Sendable>(_ body: @escaping @Sendable () throws -> T) throws -> T {
        let result = Locked<Result<T, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            let outcome = Result { try body() }
            result.withLock { $0 = outcome }
            done.signal()
        }
        thread.stackSize = Self.smallStack
        thread.start()
        done.wait()
        return try #require(result.current).get()
    }

    /// The ModelStoreError `body` throws (expectations are checked on the test's own thread).
    private static func error(_ body: () throws -> Void) -> ModelStoreError? {
        do {
            try body()
            return nil
        } catch {
            return error as? ModelStoreError
        }
    }

    /// Stores links 1 … n, each pointing to the next, with SQL (fast, and independent of the
    /// save path under test).
    private func storeChain(_ n: Int, in test: TestStore) throws {
        try ChainLink(id: n, label: "last").save(in: test.store)
        try test.rawExecute(
            """
            WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < \(n - 1))
            INSERT INTO "ChainLink" ("id", "label", "next_id") SELECT x, 'link', x + 1 FROM c
            """)
    }

    /// Stores employees 1 … n, each managed by the one before.
    private func storeHierarchy(_ n: Int, in test: TestStore) throws {
        try Employee(id: 1, name: "top").save(in: test.store)
        try test.rawExecute(
            """
            WITH RECURSIVE c(x) AS (SELECT 2 UNION ALL SELECT x + 1 FROM c WHERE x < \(n))
            INSERT INTO "Employee" ("id", "name", "manager_id") SELECT x, 'e' || x, x - 1 FROM c
            """)
    }

    // MARK: Loading

    @Test(arguments: Backend.available) func aLongToOneChainLoadsWithAllInBoundedStack(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let n = Self.length(backend)
        try storeChain(n, in: test)
        let store = test.store
        let (count, inOrder) = try onSmallStack {
            var root = try #require(try ChainLink.find(key: 1, loading: .all, in: store))
            var count = 1
            var inOrder = root.id == 1
            var node = root
            while let next = node.next {
                count += 1
                inOrder = inOrder && next.id == node.id + 1
                node = next
            }
            inOrder = inOrder && node.label == "last"
            root.dismantle()
            return (count, inOrder)
        }
        #expect(count == n)
        #expect(inOrder)
    }

    @Test(arguments: Backend.available) func aLongReportsChainLoadsDownwardWithAllInBoundedStack(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let n = Self.length(backend)
        try storeHierarchy(n, in: test)
        let store = test.store
        let (count, consistent) = try onSmallStack {
            var top = try #require(try Employee.find(key: 1, loading: .all, in: store))
            var count = 1
            var consistent = top.manager == nil
            var node = top
            while let report = node.reports?.first {
                count += 1
                // Each holds the manager it was reached from, with stored values only: not
                // that manager's own manager, which would nest the whole chain again.
                consistent =
                    consistent && report.id == node.id + 1 && node.reports?.count == 1
                    && report.manager?.id == node.id && report.manager?.manager == nil && report.manager?.reports == nil
                node = report
            }
            consistent = consistent && node.reports == []
            top.dismantleReports()
            return (count, consistent)
        }
        #expect(count == n)
        #expect(consistent)
    }

    @Test(arguments: Backend.available) func aLongManagerChainLoadsUpwardWithAllInBoundedStack(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let n = Self.length(backend)
        try storeHierarchy(n, in: test)
        let store = test.store
        let (count, consistent) = try onSmallStack {
            var bottom = try #require(try Employee.find(key: n, loading: .all, in: store))
            var count = 1
            var consistent = true
            var node = bottom
            while let manager = node.manager {
                count += 1
                consistent = consistent && manager.id == node.id - 1
                node = manager
            }
            consistent = consistent && node.id == 1
            bottom.dismantleManagers()
            return (count, consistent)
        }
        #expect(count == n)
        #expect(consistent)
    }

    // MARK: Saving

    @Test(arguments: Backend.available) func aLongToOneChainSavesAsOneGraphInBoundedStack(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let n = Self.length(backend)
        let store = test.store
        let outcome = try onSmallStack {
            var chain = ChainLink(id: n, label: "last")
            for id in stride(from: n - 1, through: 1, by: -1) {
                var link = ChainLink(id: id, label: "link")
                link.next = chain
                chain = link
            }
            let outcome = try chain.save(in: store)
            chain.dismantle()
            return outcome
        }
        #expect(outcome == .inserted)
        #expect(try test.rawRows(#"SELECT count(*) FROM "ChainLink""#) == [[.integer(Int64(n))]])
        #expect(try test.rawRows(#"SELECT count(*) FROM "ChainLink" WHERE "next_id" = "id" + 1"#) == [[.integer(Int64(n - 1))]])
        #expect(try test.rawRows(#"SELECT "id" FROM "ChainLink" WHERE "next_id" IS NULL"#) == [[.integer(Int64(n))]])
    }

    @Test(arguments: Backend.available) func aLongReportsGraphSavesInBoundedStackAndLinksEveryLevel(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let n = Self.length(backend)
        let store = test.store
        let result = try onSmallStack {
            var top = Employee(id: n, name: "e\(n)", reports: [])
            for id in stride(from: n - 1, through: 1, by: -1) { top = Employee(id: id, name: "e\(id)", reports: [top]) }
            // As one element of a batch too: the batch shares the saver's stack.
            let result = try Employee.save([top], in: store)
            top.dismantleReports()
            return result
        }
        // Every record of the chain is counted, the root and the related ones.
        #expect(result == BatchSaveOutcome(inserted: n, updated: 0))
        #expect(try test.rawRows(#"SELECT count(*) FROM "Employee""#) == [[.integer(Int64(n))]])
        #expect(try test.rawRows(#"SELECT count(*) FROM "Employee" WHERE "manager_id" = "id" - 1"#) == [[.integer(Int64(n - 1))]])
        #expect(try test.rawRows(#"SELECT "id" FROM "Employee" WHERE "manager_id" IS NULL"#) == [[.integer(1)]])
    }

    // MARK: Nested values

    /// `Tree.chain(d)` nests 2·d levels (an object and an array per tree), so 64 trees are
    /// exactly the limit; so are 64 branches.
    static let treesAtTheLimit = NestingLimit.maximum / 2

    @Test(arguments: Backend.available) func aValueNestedToTheLimitSavesAndLoadsOnASmallStack(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let store = test.store
        let (depth, branchDepth) = try onSmallStack {
            let tree = Tree.chain(Self.treesAtTheLimit)
            try Document(id: 1, title: "deep", tree: tree).save(in: store)
            let loaded = try #require(try Document.find(key: 1, in: store)?.tree)
            try Document(id: 2, branch: Branch.chain(Self.treesAtTheLimit)).save(in: store)
            let branch = try #require(try Document.find(key: 2, in: store)?.branch)
            return (loaded.depth, branch.depth)
        }
        #expect(depth == Self.treesAtTheLimit)
        #expect(branchDepth == Self.treesAtTheLimit)
        #expect(try test.rawRows(#"SELECT "tree" FROM "Document" WHERE "id" = 1"#) == [[.text(Tree.json(depth: Self.treesAtTheLimit))]])
    }

    @Test(arguments: Backend.available, [DeepGraphTests.treesAtTheLimit + 1, 10_000])
    func aValueNestedPastTheLimitIsRefusedNamingModelPropertyAndLimitAndNothingIsWritten(_ backend: Backend, trees: Int) throws {
        let test = try TestStore(backend)
        try Document(id: 1, title: "kept", tree: Tree.chain(3)).save(in: test.store)
        let before = try test.rawRows(#"SELECT "id", "title", "tree" FROM "Document" ORDER BY "id""#)
        let store = test.store
        let (single, batch) = try onSmallStack {
            var tree = Tree.chain(trees)
            let single = Self.error { try Document(id: 1, title: "replaced", tree: tree).save(in: store) }
            let batch = Self.error { try Document.save([Document(id: 2, title: "new"), Document(id: 3, tree: tree)], in: store) }
            tree.dismantle()
            return (single, batch)
        }
        let error = try #require(single)
        #expect(error.code == .encodingFailed)
        #expect(error.model == "Document")
        #expect(error.column == "tree")
        #expect(error.message.contains("Document.tree"))
        #expect(error.message.contains("nests more than \(NestingLimit.maximum) levels"))
        #expect(error.value?.contains("Tree") == true)
        #expect(error.suggestion != nil)
        let batchError = try #require(batch)
        #expect(batchError.code == .encodingFailed)
        #expect(batchError.column == "tree")
        #expect(batchError.message.contains("Element 1 of a batch of 2"))
        #expect(try test.rawRows(#"SELECT "id", "title", "tree" FROM "Document" ORDER BY "id""#) == before)
    }

    @Test(arguments: Backend.available, [DeepGraphTests.treesAtTheLimit + 1, 10_000])
    func storedJSONNestedPastTheLimitIsRefusedWhenLoadingNamingModelPropertyAndLimit(_ backend: Backend, trees: Int) throws {
        let test = try TestStore(backend)
        try Document(id: 1, title: "fine", tree: Tree.chain(2)).save(in: test.store)
        try test.rawExecute(#"INSERT INTO "Document" ("id", "title", "tree") VALUES (2, 'deep', '\#(Tree.json(depth: trees))')"#)
        let store = test.store
        let error = try onSmallStack {
            Self.error { _ = try Document.find(key: 2, in: store) }
        }
        let refused = try #require(error)
        #expect(refused.code == .decodingFailed)
        #expect(refused.model == "Document")
        #expect(refused.column == "tree")
        #expect(refused.message.contains("nests more than \(NestingLimit.maximum) levels"))
        #expect((refused.value?.count ?? 0) <= 60)
        // The other record still loads.
        #expect(try Document.find(key: 1, in: test.store)?.tree?.depth == 2)
    }
}
