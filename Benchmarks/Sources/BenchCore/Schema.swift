/// The tables every contender uses: exactly what ModelStore derives from its models, so C
/// and GRDB write the same schema (ModelStore creates its own from the models).
public enum Schema {
    public static let item = """
        CREATE TABLE "item" ("id" INTEGER NOT NULL, "name" TEXT NOT NULL, "price" REAL NOT NULL, \
        "quantity" INTEGER NOT NULL, "createdAt" REAL NOT NULL, "note" TEXT, PRIMARY KEY ("id"));
        CREATE INDEX "index_item_price" ON "item" ("price");
        """

    /// W12: the item table with an index on the name the batch matches by.
    public static let itemByName =
        item + """

            CREATE INDEX "index_item_name" ON "item" ("name");
            """

    public static let teams = """
        CREATE TABLE "team" ("id" INTEGER NOT NULL, "name" TEXT NOT NULL, PRIMARY KEY ("id"));
        CREATE TABLE "player" ("id" INTEGER NOT NULL, "name" TEXT NOT NULL, "team_id" INTEGER, PRIMARY KEY ("id"), \
        FOREIGN KEY ("team_id") REFERENCES "team" ("id") DEFERRABLE INITIALLY DEFERRED);
        CREATE INDEX "index_player_team_id" ON "player" ("team_id");
        """

    public static let joinTable = "snack_workers__worker_snacks"
    public static let workerColumn = "worker_snacks_id"
    public static let snackColumn = "snack_workers_id"

    public static let workers = """
        CREATE TABLE "worker" ("id" INTEGER NOT NULL, "name" TEXT NOT NULL, PRIMARY KEY ("id"));
        CREATE TABLE "snack" ("id" INTEGER NOT NULL, "name" TEXT NOT NULL, PRIMARY KEY ("id"));
        CREATE TABLE "\(joinTable)" ("\(workerColumn)" INTEGER NOT NULL, "\(snackColumn)" INTEGER NOT NULL, \
        PRIMARY KEY ("\(workerColumn)", "\(snackColumn)"), \
        FOREIGN KEY ("\(workerColumn)") REFERENCES "worker" ("id") ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED, \
        FOREIGN KEY ("\(snackColumn)") REFERENCES "snack" ("id") ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED);
        CREATE INDEX "index_\(joinTable)_target" ON "\(joinTable)" ("\(snackColumn)");
        """

    /// Loads one worker's snacks per row, ordered for a merge: (worker id, snack id, snack name).
    public static let workerSnacksSQL = """
        SELECT j."\(workerColumn)", s."id", s."name" FROM "\(joinTable)" j JOIN "snack" s ON s."id" = j."\(snackColumn)" \
        ORDER BY j."\(workerColumn)", s."id"
        """

    /// The rows W7 links, inserted with plain SQL by the contenders that do not have them
    /// as models.
    public static func workerRows(_ data: Dataset) -> [String] {
        var statements: [String] = ["BEGIN"]
        for worker in data.workers { statements.append("INSERT INTO worker (id, name) VALUES (\(worker.id), '\(worker.name)')") }
        for snack in data.snacks { statements.append("INSERT INTO snack (id, name) VALUES (\(snack.id), '\(snack.name)')") }
        for (worker, snacks) in zip(data.workers, data.workerSnacks) {
            for snack in snacks {
                statements.append("INSERT INTO \(joinTable) (\(workerColumn), \(snackColumn)) VALUES (\(worker.id), \(snack))")
            }
        }
        statements.append("COMMIT")
        return statements
    }

    /// The checksum every W7 load must reach: workers and each worker's snacks.
    public static func workerChecksum(_ data: Dataset) -> Checksum {
        var checksum = Checksum()
        let names = Dictionary(uniqueKeysWithValues: data.snacks.map { ($0.id, $0.name) })
        for (worker, snacks) in zip(data.workers, data.workerSnacks) {
            checksum.add(key: worker.id, text: worker.name)
            for snack in snacks { checksum.add(key: snack, text: names[snack]!) }
        }
        return checksum
    }
}
