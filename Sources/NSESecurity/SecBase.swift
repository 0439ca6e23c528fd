// swift-format-ignore-file: AlwaysUseLowerCamelCase

// Apple's C names, as declared.
import NSECoreFoundation

// Result codes of SecBase.h, the ones the keychain calls return.
public var errSecSuccess: OSStatus { 0 }
public var errSecUnimplemented: OSStatus { -4 }
public var errSecDiskFull: OSStatus { -34 }
public var errSecIO: OSStatus { -36 }
public var errSecParam: OSStatus { -50 }
public var errSecAllocate: OSStatus { -108 }
public var errSecUserCanceled: OSStatus { -128 }
public var errSecBadReq: OSStatus { -909 }
public var errSecNotAvailable: OSStatus { -25291 }
public var errSecReadOnly: OSStatus { -25292 }
public var errSecAuthFailed: OSStatus { -25293 }
public var errSecDuplicateItem: OSStatus { -25299 }
public var errSecItemNotFound: OSStatus { -25300 }
public var errSecInteractionNotAllowed: OSStatus { -25308 }
public var errSecDecode: OSStatus { -26275 }
public var errSecMissingEntitlement: OSStatus { -34018 }

/// What a result code means, in a sentence (iOS 11.3); `reserved` must be nil.
public func SecCopyErrorMessageString(_ status: OSStatus, _ reserved: UnsafeMutableRawPointer?) -> CFString? {
    let message: String
    switch status {
    case errSecSuccess: message = "No error."
    case errSecUnimplemented: message = "Function or operation not implemented."
    case errSecDiskFull: message = "The disk is full."
    case errSecIO: message = "I/O error."
    case errSecParam: message = "One or more parameters passed to a function were not valid."
    case errSecAllocate: message = "Failed to allocate memory."
    case errSecUserCanceled: message = "User canceled the operation."
    case errSecBadReq: message = "Bad parameter or invalid state for operation."
    case errSecNotAvailable: message = "No keychain is available."
    case errSecReadOnly: message = "This keychain cannot be modified."
    case errSecAuthFailed: message = "The user name or passphrase you entered is not correct."
    case errSecDuplicateItem: message = "The specified item already exists in the keychain."
    case errSecItemNotFound: message = "The specified item could not be found in the keychain."
    case errSecInteractionNotAllowed: message = "User interaction is not allowed."
    case errSecDecode: message = "Unable to decode the provided data."
    case errSecMissingEntitlement: message = "A required entitlement isn't present."
    default: message = "OSStatus \(status)"
    }
    return message as CFString
}
