// The CoreFoundation types Apple's C APIs speak (Security, MobileCoreServices), as the SDK's modules declare them.
//
// On Linux CoreFoundation's types are hidden behind Foundation and do not bridge to Swift's with `as`, so the idioms
// NSE code relies on (`kSecClass as String`, `query as CFDictionary`, `item as? Data`, `kUTTypeJPEG as String`) would
// not compile. Here each is the Foundation class that bridges both ways: `CFString` is `NSString`, `CFDictionary`
// `NSDictionary`, `CFTypeRef` `AnyObject`. One module declares them, so that a file importing two frameworks finds
// one `CFString`; a file that also imports CoreFoundation and names one finds it ambiguous: no NSE we know of does.
//
// Foundation comes with it, as CoreFoundation comes with Apple's frameworks.
@_exported public import Foundation

/// A string of Apple's C APIs.
public typealias CFString = NSString
/// A dictionary of Apple's C APIs (a Swift dictionary converts with `as CFDictionary`).
public typealias CFDictionary = NSDictionary
/// An array of Apple's C APIs.
public typealias CFArray = NSArray
/// Bytes of Apple's C APIs.
public typealias CFData = NSData
/// A number of Apple's C APIs.
public typealias CFNumber = NSNumber
/// A boolean of Apple's C APIs.
public typealias CFBoolean = NSNumber
/// Any object of Apple's C APIs (`var result: CFTypeRef?`).
public typealias CFTypeRef = AnyObject
/// A result code of Apple's C APIs (MacTypes.h): 0 is success, each framework has its own negative codes.
public typealias OSStatus = Int32
/// Success as MacTypes.h names it, beside each framework's own (`errSecSuccess`): `status == noErr`.
public var noErr: OSStatus { 0 }

/// `true` as Apple's C APIs want it in a dictionary (`kSecReturnData: kCFBooleanTrue`).
public let kCFBooleanTrue: CFBoolean! = NSNumber(value: true)
/// `false` as Apple's C APIs want it in a dictionary.
public let kCFBooleanFalse: CFBoolean! = NSNumber(value: false)
