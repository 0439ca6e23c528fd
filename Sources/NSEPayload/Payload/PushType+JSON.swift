public import NSEJSON

/// Named by its `apns-push-type` in the protocol's request and in results.
extension PushType: JSONConvertible {}
