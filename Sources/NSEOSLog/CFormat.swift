#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// printf for one scalar, through the C library: the exact C conversions Apple's log decodes with.
enum CFormat {
    /// `value` formatted by `specifier`, a single printf conversion of a `double`.
    static func double(_ specifier: String, _ value: Double) -> String { format(specifier, value) }

    /// `value` formatted by `specifier`, a single printf conversion of a `long long` (`%lld`, `%llx`…).
    static func integer(_ specifier: String, _ value: Int64) -> String { format(specifier, value) }

    /// `value` formatted by `specifier`, a single printf conversion of an `unsigned long long`.
    static func unsigned(_ specifier: String, _ value: UInt64) -> String { format(specifier, value) }

    private static func format(_ specifier: String, _ value: some CVarArg) -> String {
        // A first try in a small buffer; vsnprintf returns the full length, so one retry always fits (a va_list is
        // read once, hence a new one per call).
        var buffer = [CChar](repeating: 0, count: 64)
        let length = withVaList([value]) { vsnprintf(&buffer, buffer.count, specifier, $0) }
        guard length >= 0 else { return "" }
        if Int(length) >= buffer.count {
            buffer = [CChar](repeating: 0, count: Int(length) + 1)
            _ = withVaList([value]) { vsnprintf(&buffer, buffer.count, specifier, $0) }
        }
        return String(decoding: buffer.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
