public import Foundation

extension OSLogInterpolation {
    /// An object (`NSError`, `NSNumber`, `NSURL`…): its `description`, hidden unless `privacy` is `.public`.
    public mutating func appendInterpolation(
        _ argumentObject: @autoclosure @escaping () -> NSObject, privacy: OSLogPrivacy = .auto
    ) {
        appendObject({ argumentObject() }, privacy: privacy)
    }

    public mutating func appendInterpolation(
        _ argumentObject: @autoclosure @escaping () -> NSObject, privacy: OSLogPrivacy = .auto, attributes: String
    ) {
        appendObject({ argumentObject() }, privacy: privacy)
    }

    /// An optional object: its `description`, or `(null)` (which `.auto` shows: it reveals nothing).
    public mutating func appendInterpolation(
        _ object: @autoclosure @escaping () -> NSObject?, privacy: OSLogPrivacy = .auto, attributes: String = ""
    ) {
        appendObject(object, privacy: privacy)
    }

    /// An error, as Apple writes it: bridged to `NSError` and written by its `description`
    /// (`Error Domain=… Code=… "…"`); hidden unless `privacy` is `.public`. For its message alone, interpolate
    /// `error.localizedDescription` instead.
    @_disfavoredOverload
    public mutating func appendInterpolation(
        _ error: @autoclosure @escaping () -> any Error, privacy: OSLogPrivacy = .auto, attributes: String = ""
    ) {
        appendObject({ error() as NSError }, privacy: privacy)
    }

    /// An optional error: as an error, or `(null)`.
    @_disfavoredOverload
    public mutating func appendInterpolation(
        _ error: @autoclosure @escaping () -> (any Error)?, privacy: OSLogPrivacy = .auto, attributes: String = ""
    ) {
        appendObject({ error().map { $0 as NSError } }, privacy: privacy)
    }

    private mutating func appendObject(_ object: @escaping () -> NSObject?, privacy: OSLogPrivacy) {
        let evaluate = { () -> (text: String, isScalar: Bool) in
            guard let object = object() else { return ("(null)", true) }
            return (object.description, false)
        }
        append(Argument(evaluate: evaluate, privacy: privacy, align: .none, byteCount: 8))
    }
}
