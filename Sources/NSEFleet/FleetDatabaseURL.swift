public import NSEAPNsServer

/// Where a fleet's PostgreSQL is: `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE` (or `postgresql://`), the
/// form libpq and psql take. Only `?sslmode=disable` is understood among libpq's parameters: nse connects in the
/// clear, for a database on loopback or a private network (docs/serve.md, "A fleet on PostgreSQL").
public struct FleetDatabaseURL: Sendable, Equatable, CustomStringConvertible {
    public var user: String
    public var password: String?
    public var host: String
    public var port: Int
    public var database: String

    /// Parses `text`; the error names what is wrong and never repeats a password.
    public init(_ text: String) throws(FleetError) {
        var rest = Substring(text)
        guard let scheme = ["postgres://", "postgresql://"].first(where: { rest.hasPrefix($0) }) else {
            throw FleetError("--database: expected postgres://USER@HOST:PORT/DATABASE")
        }
        rest = rest.dropFirst(scheme.count)
        if let query = rest.firstIndex(of: "?") {
            let parameters = rest[rest.index(after: query)...]
            rest = rest[..<query]
            for parameter in parameters.split(separator: "&") where parameter != "sslmode=disable" {
                let name = parameter.split(separator: "=", maxSplits: 1).first.map(String.init) ?? ""
                throw FleetError("--database: parameter \(name) is not supported (only sslmode=disable)")
            }
        }
        guard let slash = rest.firstIndex(of: "/") else {
            throw FleetError("--database: no database name (postgres://USER@HOST:PORT/DATABASE)")
        }
        let database = Self.decoded(rest[rest.index(after: slash)...])
        var authority = rest[..<slash]
        guard let at = authority.lastIndex(of: "@") else {
            throw FleetError("--database: no user (postgres://USER@HOST:PORT/DATABASE)")
        }
        let userInfo = authority[..<at]
        authority = authority[authority.index(after: at)...]
        if let colon = userInfo.firstIndex(of: ":") {
            user = Self.decoded(userInfo[..<colon])
            password = Self.decoded(userInfo[userInfo.index(after: colon)...])
        } else {
            user = Self.decoded(userInfo)
            password = nil
        }
        var portText: Substring?
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let after = authority[authority.index(after: close)...]
            if after.hasPrefix(":") { portText = after.dropFirst() } else if !after.isEmpty { host = "" }
        } else if let colon = authority.lastIndex(of: ":") {
            host = String(authority[..<colon])
            portText = authority[authority.index(after: colon)...]
        } else {
            host = String(authority)
        }
        if let portText {
            guard let number = Int(portText), (1...65535).contains(number) else {
                throw FleetError("--database: the port must be a number from 1 to 65535")
            }
            port = number
        } else {
            port = 5432
        }
        self.database = database
        guard !user.isEmpty else { throw FleetError("--database: no user (postgres://USER@HOST:PORT/DATABASE)") }
        guard !host.isEmpty else { throw FleetError("--database: no host (postgres://USER@HOST:PORT/DATABASE)") }
        guard !database.isEmpty, !database.contains("/") else {
            throw FleetError("--database: no database name (postgres://USER@HOST:PORT/DATABASE)")
        }
    }

    /// The URL with its password replaced: what logs and errors show.
    public var description: String {
        let bracketed = host.contains(":") ? "[\(host)]" : host
        return "postgres://\(user)\(password == nil ? "" : ":(redacted)")@\(bracketed):\(port)/\(database)"
    }

    /// Undoes %XX escapes (a password with `@` or `/` in it); a malformed escape is kept as written.
    private static func decoded(_ text: Substring) -> String {
        var bytes: [UInt8] = []
        var index = text.utf8.startIndex
        let utf8 = text.utf8
        while index != utf8.endIndex {
            let byte = utf8[index]
            if byte == UInt8(ascii: "%"), let first = utf8.index(index, offsetBy: 1, limitedBy: utf8.endIndex),
                let second = utf8.index(index, offsetBy: 2, limitedBy: utf8.endIndex), second != utf8.endIndex,
                let value = UInt8(String(decoding: [utf8[first], utf8[second]], as: UTF8.self), radix: 16)
            {
                bytes.append(value)
                index = utf8.index(after: second)
                continue
            }
            bytes.append(byte)
            index = utf8.index(after: index)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
