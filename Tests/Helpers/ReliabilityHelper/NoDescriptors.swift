import Foundation
import ModelStore
import ReliabilityFixtures

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `no-descriptors <path>`: takes every file descriptor the process may have (its
/// `RLIMIT_NOFILE` lowered to what is open), then opens stores that cannot get one, many
/// times, and prints the code each failure gave; then gives descriptors back and opens one
/// that works. A failed open must throw, never crash (a half-made store once took
/// libdispatch down with it as it was released).
func openWithoutDescriptors(path: String, attempts: Int = 40) throws {
    // Everything this test needs later is made first: a store only fails for want of
    // descriptors if the rest of the process still works.
    let directory = (path as NSString).deletingLastPathComponent
    var limit = rlimit()
    getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    let original = limit
    // Lower the soft limit to one above the highest descriptor open now, then fill the gap.
    let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd"))?.compactMap { Int($0) }.max() ?? 64
    limit.rlim_cur = rlim_t(open + 1)
    setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    var held: [Int32] = []
    while true {
        #if canImport(Glibc)
            let descriptor = Glibc.open("/dev/null", O_RDONLY)
        #else
            let descriptor = Darwin.open("/dev/null", O_RDONLY)
        #endif
        if descriptor < 0 { break }
        held.append(descriptor)
    }
    var codes: [String: Int] = [:]
    for attempt in 0..<attempts {
        do {
            let store = try ModelStore(path: directory + "/store-\(attempt % 3).sqlite")
            _ = try? store.close()
            codes["opened", default: 0] += 1
        } catch let error as ModelStoreError {
            codes[error.code.rawValue, default: 0] += 1
        } catch {
            codes["\(type(of: error))", default: 0] += 1
        }
    }
    for descriptor in held { close(descriptor) }
    var restored = original
    setrlimit(Int32(RLIMIT_NOFILE.rawValue), &restored)
    for (code, count) in codes.sorted(by: { $0.key < $1.key }) { say("failed \(code) \(count)") }
    let store = try ModelStore(path: path)
    try Parcel(id: 1, batch: 1, payload: "after").save(in: store)
    say("after \(try Parcel.count(in: store))")
    try store.close()
}
