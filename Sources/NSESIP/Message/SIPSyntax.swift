import NSECrypto
import NSESystem

/// Low-level lexical helpers shared by the SIP parsers.
enum SIPSyntax {
    static func isWhitespace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0D || b == 0x0A }

    /// Trims SP, HT, CR and LF at both ends.
    static func trim(_ s: Substring) -> Substring {
        var start = s.startIndex
        var end = s.endIndex
        let u = s.utf8
        while start < end, isWhitespace(u[start]) { start = u.index(after: start) }
        while end > start {
            let before = u.index(before: end)
            if isWhitespace(u[before]) { end = before } else { break }
        }
        return s[start..<end]
    }

    static func trim(_ s: String) -> String { String(trim(Substring(s))) }

    /// Splits at every `byte` (an ASCII separator) by bytes, as SIP's grammar is written: `String.split` compares
    /// `Character`s, and a separator next to a prepended or combining scalar (`U+0601` then a space) is inside one
    /// grapheme cluster, where it would not see it (found by the sip-datagram fuzz target).
    static func split(
        _ s: Substring, at byte: UInt8, maxSplits: Int = .max, omittingEmptySubsequences: Bool = true
    ) -> [Substring] {
        // Collection.split's rules, into one array sized first (split then map made two, the first grown by
        // doubling: every start line and Via went through three or four allocations here).
        let utf8 = s.utf8
        var separators = 0
        for b in utf8 where b == byte { separators += 1 }
        var parts: [Substring] = []
        parts.reserveCapacity(min(separators, maxSplits) + 1)
        var start = utf8.startIndex
        if maxSplits > 0 {
            var index = start
            while index != utf8.endIndex {
                guard utf8[index] == byte else {
                    utf8.formIndex(after: &index)
                    continue
                }
                let appended = !(omittingEmptySubsequences && start == index)
                if appended { parts.append(s[start..<index]) }
                utf8.formIndex(after: &index)
                start = index
                if appended && parts.count == maxSplits { break }
            }
        }
        if start != utf8.endIndex || !omittingEmptySubsequences { parts.append(s[start..<utf8.endIndex]) }
        return parts
    }

    /// Splits at `separator` occurring outside quoted strings and `<...>`. At such a separator no quote or angle
    /// bracket is open, so each part is scanned afresh by ``firstTopLevel(_:_:)``.
    static func splitTopLevel(_ s: Substring, separator: UInt8) -> [Substring] {
        var parts: [Substring] = []
        forEachTopLevel(s, separator: separator) { parts.append($0) }
        return parts
    }

    /// ``splitTopLevel(_:separator:)``'s parts, each handed to `body` in order, without an array of them.
    static func forEachTopLevel(_ s: Substring, separator: UInt8, _ body: (Substring) -> Void) {
        var rest = s
        while let index = firstTopLevel(rest, separator) {
            body(rest[..<index])
            rest = rest[rest.utf8.index(after: index)...]
        }
        body(rest)
    }

    /// Finds the first `byte` outside quoted strings and `<...>`.
    static func firstTopLevel(_ s: Substring, _ byte: UInt8) -> Substring.Index? {
        var inQuotes = false
        var inAngle = false
        var escaped = false
        let u = s.utf8
        var i = u.startIndex
        while i < u.endIndex {
            let b = u[i]
            if inQuotes {
                if escaped {
                    escaped = false
                } else if b == 0x5C {
                    escaped = true
                } else if b == 0x22 {
                    inQuotes = false
                }
            } else if b == 0x22 {
                inQuotes = true
            } else if inAngle {
                if b == 0x3E { inAngle = false }
            } else if b == 0x3C {
                inAngle = true
            } else if b == byte {
                return i
            }
            i = u.index(after: i)
        }
        return nil
    }

    /// Parses `;a=b;c;d="x"` (leading `;` optional) into ordered parameters.
    static func parseParameters(_ s: Substring) throws(SIPError) -> [SIPParameter] {
        guard !s.isEmpty else { return [] }
        var result: [SIPParameter] = []
        // Room for a Via's or a Contact's usual few at once, rather than growing 1, 2, 4.
        result.reserveCapacity(4)
        // Part by part, without an array of the parts first (every Via, URI and address parses its parameters).
        var rest = s
        var more = true
        while more {
            let raw: Substring
            if let index = firstTopLevel(rest, 0x3B) {
                raw = rest[..<index]
                rest = rest[rest.utf8.index(after: index)...]
            } else {
                raw = rest
                more = false
            }
            let item = trim(raw)
            if item.isEmpty { continue }
            if let eq = item.utf8.firstIndex(of: 0x3D) {
                let name = trim(item[item.startIndex..<eq])
                let value = trim(item[item.utf8.index(after: eq)...])
                guard !name.isEmpty else { throw .malformed("empty parameter name") }
                result.append(SIPParameter(String(name), String(value)))
            } else {
                result.append(SIPParameter(String(item), nil))
            }
        }
        return result
    }

    /// Removes surrounding double quotes and backslash escapes, if quoted.
    static func unquote(_ s: Substring) -> String {
        let t = trim(s)
        guard t.utf8.count >= 2, t.utf8.first == 0x22, t.utf8.last == 0x22 else { return String(t) }
        var out: [UInt8] = []
        var escaped = false
        for b in t.utf8.dropFirst().dropLast() {
            if escaped {
                out.append(b)
                escaped = false
            } else if b == 0x5C {
                escaped = true
            } else {
                out.append(b)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Wraps a string in double quotes, escaping `"` and `\`.
    static func quote(_ s: String) -> String {
        var out = "\""
        for ch in s.unicodeScalars {
            if ch == "\"" || ch == "\\" { out.append("\\") }
            out.unicodeScalars.append(ch)
        }
        out.append("\"")
        return out
    }

    static func isToken(_ s: Substring) -> Bool {
        if s.isEmpty { return false }
        for b in s.utf8 {
            switch b {
            case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: continue
            case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "!"), UInt8(ascii: "%"), UInt8(ascii: "*"),
                UInt8(ascii: "_"), UInt8(ascii: "+"), UInt8(ascii: "`"), UInt8(ascii: "'"), UInt8(ascii: "~"):
                continue
            default: return false
            }
        }
        return true
    }

    static func parseInt(_ s: Substring, max: Int = Int(Int32.max)) -> Int? {
        let t = trim(s)
        guard !t.isEmpty, t.utf8.count <= 10 else { return nil }
        var v = 0
        for b in t.utf8 {
            guard b >= 0x30, b <= 0x39 else { return nil }
            v = v * 10 + Int(b - 0x30)
        }
        return v <= max ? v : nil
    }

    static func equalsIgnoringCase(_ a: some StringProtocol, _ b: some StringProtocol) -> Bool {
        ASCII.equalsIgnoringCase(a, b)
    }

    /// Parses `host[:port]` where host may be `[IPv6]`; returns host without brackets.
    static func parseHostPort(_ s: Substring) throws(SIPError) -> (host: String, port: Int?) {
        let t = trim(s)
        guard !t.isEmpty else { throw .malformed("empty host") }
        var host: Substring
        var rest: Substring
        if t.utf8.first == UInt8(ascii: "[") {
            guard let close = t.utf8.firstIndex(of: UInt8(ascii: "]")) else {
                throw .malformed("unterminated IPv6 reference")
            }
            host = t[t.utf8.index(after: t.startIndex)..<close]
            rest = t[t.utf8.index(after: close)...]
            for b in host.utf8 {
                guard Hex.value(ofDigit: b) != nil || b == 0x3A || b == 0x2E else {
                    throw .malformed("invalid IPv6 reference")
                }
            }
            guard !host.isEmpty else { throw .malformed("empty IPv6 reference") }
        } else if let colon = t.utf8.firstIndex(of: 0x3A) {
            host = t[t.startIndex..<colon]
            rest = t[colon...]
        } else {
            host = t
            rest = ""
        }
        if host.utf8.first != nil, !t.hasPrefix("[") {
            for b in host.utf8 {
                let ok =
                    (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x2D
                    || b == 0x2E || b == 0x5F
                guard ok else { throw .malformed("invalid character in host") }
            }
        }
        guard !host.isEmpty else { throw .malformed("empty host") }
        var port: Int? = nil
        if !rest.isEmpty {
            guard rest.utf8.first == 0x3A, let p = parseInt(rest.dropFirst(), max: 65535) else {
                throw .malformed("invalid port")
            }
            port = p
        }
        return (String(host), port)
    }

    static func formatHost(_ host: String) -> String {
        host.utf8.contains(0x3A) ? "[\(host)]" : host
    }
}
