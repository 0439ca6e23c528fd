extension OSLogInterpolation {
    /// A `Bool`: `true`/`false` (or `YES`/`NO` with `.answer`), shown under `.auto` as Apple shows scalars.
    public mutating func appendInterpolation(
        _ boolean: @autoclosure @escaping () -> Bool, format: OSLogBoolFormat = .truth, privacy: OSLogPrivacy = .auto
    ) {
        // Apple passes it as an Int32 (4 bytes) with its `bool`/`BOOL` decoder.
        append(
            Argument(
                evaluate: { (format.format(boolean()), true) }, privacy: privacy, align: .none, byteCount: 4))
    }
}
