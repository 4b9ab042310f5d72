import Foundation

/// Reads the JSON arrays of key texts that change logs record.
package enum JSONTextArray {
    /// The strings (or nulls) of a JSON array of texts (`["1", null]`), as the history and a
    /// server's change log record keys;
    /// nil for anything else. Read by hand: `JSONSerialization` took most of the time of
    /// reading a 100,000-row transaction.
    package static func strings(_ json: String) -> [String?]? {
        var bytes = json.utf8.makeIterator()
        var result: [String?] = []
        func next() -> UInt8? {
            while let byte = bytes.next() { if byte != 0x20 && byte != 0x0A && byte != 0x09 && byte != 0x0D { return byte } }
            return nil
        }
        guard next() == UInt8(ascii: "[") else { return nil }
        var expectValue = true
        while let byte = next() {
            switch byte {
            case UInt8(ascii: "]"): return result
            case UInt8(ascii: ","): expectValue = true
            case UInt8(ascii: "n") where expectValue:
                guard bytes.next() == UInt8(ascii: "u"), bytes.next() == UInt8(ascii: "l"), bytes.next() == UInt8(ascii: "l")
                else { return nil }
                result.append(nil)
                expectValue = false
            case UInt8(ascii: "\"") where expectValue:
                var text: [UInt8] = []
                var units: [UInt16] = []
                func flushUnits() {
                    guard !units.isEmpty else { return }
                    text += Array(String(decoding: units, as: UTF16.self).utf8)
                    units = []
                }
                reading: while true {
                    guard let character = bytes.next() else { return nil }
                    switch character {
                    case UInt8(ascii: "\""):
                        break reading
                    case UInt8(ascii: "\\"):
                        guard let escaped = bytes.next() else { return nil }
                        if escaped == UInt8(ascii: "u") {
                            var hex: [UInt8] = []
                            for _ in 0..<4 { guard let digit = bytes.next() else { return nil }; hex.append(digit) }
                            guard let unit = UInt16(String(decoding: hex, as: UTF8.self), radix: 16) else { return nil }
                            units.append(unit)
                            continue reading
                        }
                        flushUnits()
                        switch escaped {
                        case UInt8(ascii: "n"): text.append(0x0A)
                        case UInt8(ascii: "t"): text.append(0x09)
                        case UInt8(ascii: "r"): text.append(0x0D)
                        case UInt8(ascii: "b"): text.append(0x08)
                        case UInt8(ascii: "f"): text.append(0x0C)
                        default: text.append(escaped)  // \" \\ \/
                        }
                    default:
                        flushUnits()
                        text.append(character)
                    }
                }
                flushUnits()
                result.append(String(decoding: text, as: UTF8.self))
                expectValue = false
            default: return nil
            }
        }
        return nil
    }
}
