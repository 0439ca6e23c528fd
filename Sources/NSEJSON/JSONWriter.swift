/// How ``JSON/serialized(_:)`` lays out a document.
public struct JSONWriteOptions: Sendable {
    /// Indent nested values with two spaces per level and put members on their own lines.
    public var pretty: Bool
    /// Write object members sorted by key instead of in document order.
    public var sortedKeys: Bool

    public init(pretty: Bool = false, sortedKeys: Bool = false) {
        self.pretty = pretty
        self.sortedKeys = sortedKeys
    }

    /// One line, document order.
    public static let compact = JSONWriteOptions()
    /// Indented, document order.
    public static let pretty = JSONWriteOptions(pretty: true)
}

extension JSON {
    /// The document as text (RFC 8259; non-ASCII written as UTF-8, control characters escaped).
    public func serialized(_ options: JSONWriteOptions = .compact) -> String {
        var output: [UInt8] = []
        // A push's result or content line is one to two kilobytes: grown from 256 it was copied three times.
        output.reserveCapacity(1024)
        write(to: &output, options: options, level: 0)
        return String(decoding: output, as: UTF8.self)
    }

    /// The document as UTF-8 bytes.
    public func serializedBytes(_ options: JSONWriteOptions = .compact) -> [UInt8] {
        var output: [UInt8] = []
        write(to: &output, options: options, level: 0)
        return output
    }

    private func write(to output: inout [UInt8], options: JSONWriteOptions, level: Int) {
        switch self {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let value): output.append(contentsOf: (value ? "true" : "false").utf8)
        case .int(let value): output.append(contentsOf: String(value).utf8)
        case .double(let value):
            if value.isFinite {
                output.append(
                    contentsOf: (value.rounded() == value && abs(value) < 1e15 ? String(Int64(value)) : "\(value)").utf8
                )
            } else {
                output.append(contentsOf: "null".utf8)
            }
        case .string(let value): JSON.writeString(value, to: &output)
        case .array(let elements):
            if elements.isEmpty {
                output.append(contentsOf: "[]".utf8)
                return
            }
            output.append(0x5B)
            for (index, element) in elements.enumerated() {
                if index > 0 { output.append(0x2C) }
                JSON.newline(&output, options, level + 1)
                element.write(to: &output, options: options, level: level + 1)
            }
            JSON.newline(&output, options, level)
            output.append(0x5D)
        case .object(let object):
            if object.isEmpty {
                output.append(contentsOf: "{}".utf8)
                return
            }
            output.append(0x7B)
            let members = options.sortedKeys ? object.members.sorted { $0.key < $1.key } : object.members
            for (index, member) in members.enumerated() {
                if index > 0 { output.append(0x2C) }
                JSON.newline(&output, options, level + 1)
                JSON.writeString(member.key, to: &output)
                output.append(0x3A)
                if options.pretty { output.append(0x20) }
                member.value.write(to: &output, options: options, level: level + 1)
            }
            JSON.newline(&output, options, level)
            output.append(0x7D)
        }
    }

    private static func newline(_ output: inout [UInt8], _ options: JSONWriteOptions, _ level: Int) {
        guard options.pretty else { return }
        output.append(0x0A)
        output.append(contentsOf: repeatElement(0x20, count: level * 2))
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    private static func writeString(_ value: String, to output: inout [UInt8]) {
        output.append(0x22)
        for byte in value.utf8 {
            switch byte {
            // Byte by byte, without a temporary array per escape.
            case 0x22: escape(0x22, to: &output)
            case 0x5C: escape(0x5C, to: &output)
            case 0x0A: escape(0x6E, to: &output)
            case 0x0D: escape(0x72, to: &output)
            case 0x09: escape(0x74, to: &output)
            case 0x00..<0x20, 0x7F:
                escape(0x75, to: &output)
                output.append(0x30)
                output.append(0x30)
                output.append(hexDigits[Int(byte >> 4)])
                output.append(hexDigits[Int(byte & 0xF)])
            default: output.append(byte)
            }
        }
        output.append(0x22)
    }

    private static func escape(_ letter: UInt8, to output: inout [UInt8]) {
        output.append(0x5C)
        output.append(letter)
    }
}
