#if PostgreSQL
    import Foundation

    /// Swift's `contains` and `starts(with:)` on Strings, by `Character`s, as a PostgreSQL
    /// regular expression for one constant text.
    ///
    /// Swift finds a text inside another where its code points occur at a point where a
    /// Character (a grapheme cluster) starts and end where one ends: "👍" is not in "👍🏽" (the
    /// skin tone joins the thumb), "\r" is not in "\r\n", "🇸🇫" is not in "🇺🇸🇫🇷". For text in
    /// NFC (what keyboards and most sources give; the store keeps text as given) that is the whole test, since a Character equals
    /// another exactly when their code points do. The server has no notion of a Character, so
    /// the expression carries Swift's answers: the code points of the text, preceded by a
    /// look-behind for what would join its first Character to the one before, followed by a
    /// look-ahead for what would join its last Character to the one after. Both sets come from
    /// Swift's own grapheme breaking (`String.count` on probes), so they follow the Unicode
    /// version of the Swift that runs the store.
    ///
    /// A text whose edges depend on more than the Character next to them is not translated
    /// (nil): one that starts with a mark joining whatever precedes it, or ends with a
    /// character that joins whatever follows (a prefix mark, a joiner before an emoji, a virama
    /// before a consonant), or starts or ends inside a Hangul syllable's jamo in a way one class
    /// cannot say.
    enum CharacterPattern {
        /// `\(prefix)text(?!…)`: `text` found as Swift's `contains` finds it; nil when it cannot
        /// be said as a pattern.
        static func contains(_ text: String) -> String? {
            guard let before = before(text), let after = after(text) else { return nil }
            return before + escaped(text) + after
        }

        /// `^text(?!…)`: a text starting with `prefix` as Swift's `starts(with:)` says.
        static func starts(with prefix: String) -> String? {
            guard let after = after(prefix) else { return nil }
            return "^" + escaped(prefix) + after
        }

        /// The code points of `text`, literal in a PostgreSQL regular expression: every ASCII
        /// character that is not a letter or digit escaped (`\` before such a character is that
        /// character), every other one as it is.
        static func escaped(_ text: String) -> String {
            var pattern = ""
            for scalar in text.unicodeScalars {
                if scalar.isASCII, !(scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)) { pattern += "\\" }
                pattern.unicodeScalars.append(scalar)
            }
            return pattern
        }

        /// Whether `prefix` joins the first Character of `text`: no Character of the two
        /// together starts where `text` does. (Counting Characters would not tell: a regional
        /// indicator before a flag pairs with its first half and leaves the second alone.)
        private static func joins(_ prefix: String, before text: String) -> Bool { !startsCharacter(prefix + text, at: prefix.utf8.count) }

        /// Whether `suffix` joins the last Character of `text`.
        private static func joins(_ suffix: String, after text: String) -> Bool { !startsCharacter(text + suffix, at: text.utf8.count) }

        /// Whether a Character of `text` starts `offset` UTF-8 bytes in.
        private static func startsCharacter(_ text: String, at offset: Int) -> Bool {
            var index = text.startIndex
            while index < text.endIndex {
                let at = text.utf8.distance(from: text.startIndex, to: index)
                if at >= offset { return at == offset }
                index = text.index(after: index)
            }
            return offset == text.utf8.count
        }

        /// The look-behinds that reject a place where `text`'s first Character would join the
        /// one before it; nil when one cannot say it.
        private static func before(_ text: String) -> String? {
            guard !text.isEmpty else { return "" }
            // A mark (or joiner) that joins whatever precedes it starts no Character of its own
            // but after a control: refused rather than answered wrongly.
            if joins("a", before: text) { return nil }
            var behind: [String] = []
            if joins("\u{0600}", before: text) { behind.append("(?<!" + Classes.prepend + ")") }
            if joins("\r", before: text) { behind.append("(?<!\\r)") }
            // Regional indicators pair from the start of their run: the text starts a flag only
            // after an even number of them.
            if joins("\u{1F1FA}", before: text) {
                behind.append("(?<=(^|[^\\U0001F1E6-\\U0001F1FF])([\\U0001F1E6-\\U0001F1FF]{2})*)")
            }
            // An emoji after an emoji, its marks and a zero-width joiner is one Character with it.
            if joins("\u{1F600}\u{200D}", before: text) { behind.append("(?<!" + Classes.joinedEmoji + ")") }
            // A consonant after a consonant, a virama and their marks joins that conjunct.
            if joins("\u{0915}\u{094D}", before: text) { behind.append("(?<!" + Classes.conjunct + ")") }
            guard let hangul = hangul(joining: { joins($0, before: text) }) else { return nil }
            if !hangul.isEmpty { behind.append("(?<!" + hangul + ")") }
            return behind.joined()
        }

        /// The look-ahead that rejects a place where `text`'s last Character would join the
        /// one after it; nil when one cannot say it.
        private static func after(_ text: String) -> String? {
            guard !text.isEmpty else { return "" }
            // A last character that joins whatever follows (a prefix mark): refused.
            if joins("a", after: text) { return nil }
            var ahead: [String] = []
            // An emoji joins a text that ends with an emoji and a joiner; a consonant one that
            // ends with a conjunct's virama.
            if joins("\u{1F600}", after: text) { ahead.append(Classes.pictographic) }
            if joins("\u{0915}", after: text) { ahead.append(Classes.consonant) }
            if joins("\u{0301}", after: text) { ahead.append(Classes.attaching) }
            if joins("\n", after: text) { ahead.append("\\n") }
            if joins("\u{1F1FA}", after: text) { ahead.append("[\\U0001F1E6-\\U0001F1FF]") }
            guard let hangul = hangul(joining: { joins($0, after: text) }) else { return nil }
            if !hangul.isEmpty { ahead.append(hangul) }
            return ahead.isEmpty ? "" : "(?!" + ahead.joined(separator: "|") + ")"
        }

        /// The Hangul jamo and syllables that join (by `joins`), as one class; "" for none, nil
        /// when only some syllables would (a class of every 28th one is not worth saying).
        private static func hangul(joining joins: (String) -> Bool) -> String? {
            var ranges: [String] = []
            if joins("\u{1100}") { ranges.append("\\u1100-\\u115f\\ua960-\\ua97c") }
            if joins("\u{1161}") { ranges.append("\\u1160-\\u11a7\\ud7b0-\\ud7c6") }
            if joins("\u{11A8}") { ranges.append("\\u11a8-\\u11ff\\ud7cb-\\ud7fb") }
            switch (joins("\u{AC00}"), joins("\u{AC01}")) {
            case (true, true): ranges.append("\\uac00-\\ud7a3")
            case (false, false): break
            default: return nil
            }
            return ranges.isEmpty ? "" : "[" + ranges.joined() + "]"
        }

        /// Character classes read from Swift's grapheme breaking once per process.
        enum Classes {
            /// What joins the character before it (Unicode's Extend, SpacingMark and ZWJ).
            static let attaching = characterClass { ("a" + String($0)).count == 1 }
            /// What joins the character after it (Unicode's Prepend).
            static let prepend = characterClass { (String($0) + "a").count == 1 }
            /// Emoji that join an emoji and a zero-width joiner before them (Extended_Pictographic).
            static let pictographic = characterClass(pictographs: true) {
                ("\u{1F600}\u{200D}" + String($0)).count == 1 && ("a" + String($0)).count == 2
            }
            /// What may stand between an emoji and the joiner that joins it to the next (Extend).
            static let emojiExtend = characterClass {
                ("a" + String($0)).count == 1 && ("\u{1F600}" + String($0) + "\u{200D}\u{1F600}").count == 1
            }
            /// What an emoji, its marks and a zero-width joiner look like before the emoji they join.
            static let joinedEmoji = pictographic + emojiExtend + "*\\u200d"
            /// Consonants that join a conjunct before them (Indic_Conjunct_Break=Consonant).
            static let consonant = characterClass { ("\u{0915}\u{094D}" + String($0)).count == 1 && ("a" + String($0)).count == 2 }
            /// Viramas that link two consonants into one conjunct (Indic_Conjunct_Break=Linker).
            static let linker = characterClass { ("a" + String($0)).count == 1 && ("\u{0915}" + String($0) + "\u{0915}").count == 1 }
            /// Marks that may stand in a conjunct between a consonant and a virama (Extend).
            static let conjunctExtend = characterClass {
                ("a" + String($0)).count == 1 && ("\u{0915}" + String($0) + "\u{094D}\u{0915}").count == 1
            }
            /// A consonant, a virama and their marks: what a consonant after it joins.
            static var conjunct: String {
                let marks = "(" + conjunctExtend + "|" + linker + ")*"
                return consonant + marks + linker + marks
            }

            /// `[…]` of every scalar for which `test` is true, among those that can be: marks,
            /// formats, modifiers and letters outside the large ideograph and syllable blocks.
            private static func characterClass(pictographs: Bool = false, _ test: (Unicode.Scalar) -> Bool) -> String {
                var ranges: [ClosedRange<UInt32>] = []
                var value: UInt32 = 0
                while value <= 0x10FFFF {
                    defer { value += 1 }
                    guard let scalar = Unicode.Scalar(value), pictographs ? isPictographCandidate(scalar) : isCandidate(scalar),
                        test(scalar)
                    else { continue }
                    if let last = ranges.last, last.upperBound == value - 1 {
                        ranges[ranges.count - 1] = last.lowerBound...value
                    } else {
                        ranges.append(value...value)
                    }
                }
                func escape(_ value: UInt32) -> String {
                    value <= 0xFFFF ? String(format: "\\u%04x", value) : String(format: "\\U%08x", value)
                }
                return "["
                    + ranges.map { $0.count == 1 ? escape($0.lowerBound) : escape($0.lowerBound) + "-" + escape($0.upperBound) }.joined()
                    + "]"
            }

            /// Symbols and punctuation, and the unassigned code points of the emoji planes' blocks
            /// (Extended_Pictographic reserves them).
            private static func isPictographCandidate(_ scalar: Unicode.Scalar) -> Bool {
                // ℹ (a letter) and 〰 (a dash) are emoji too.
                if scalar.properties.isEmoji { return true }
                switch scalar.properties.generalCategory {
                case .otherSymbol, .mathSymbol, .otherPunctuation, .modifierSymbol: return true
                case .unassigned: return (0x1F000...0x1FFFF).contains(scalar.value)
                default: return false
                }
            }

            private static func isCandidate(_ scalar: Unicode.Scalar) -> Bool {
                switch scalar.properties.generalCategory {
                case .nonspacingMark, .spacingMark, .enclosingMark, .format, .modifierSymbol, .modifierLetter: return true
                case .otherLetter:
                    // Ideographs, Hangul syllables, Yi and Tangut neither join nor prefix.
                    let value = scalar.value
                    let large: [ClosedRange<UInt32>] = [
                        0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA48F, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0x17000...0x18AFF,
                        0x1B000...0x1B2FF, 0x20000...0x3FFFF,
                    ]
                    return !large.contains { $0.contains(value) }
                default: return false
                }
            }
        }
    }
#endif
