import NSECoreFoundation

// The keys and values of SecItem.h's dictionaries, with the strings iOS gives them (what `kSecClass as String` is).

// Classes.
nonisolated(unsafe) public let kSecClass: CFString = "class"
nonisolated(unsafe) public let kSecClassGenericPassword: CFString = "genp"
nonisolated(unsafe) public let kSecClassInternetPassword: CFString = "inet"
nonisolated(unsafe) public let kSecClassCertificate: CFString = "cert"
nonisolated(unsafe) public let kSecClassKey: CFString = "keys"
nonisolated(unsafe) public let kSecClassIdentity: CFString = "idnt"

// Attributes.
nonisolated(unsafe) public let kSecAttrAccessible: CFString = "pdmn"
nonisolated(unsafe) public let kSecAttrAccessGroup: CFString = "agrp"
nonisolated(unsafe) public let kSecAttrSynchronizable: CFString = "sync"
nonisolated(unsafe) public let kSecAttrSynchronizableAny: CFString = "syna"
nonisolated(unsafe) public let kSecAttrCreationDate: CFString = "cdat"
nonisolated(unsafe) public let kSecAttrModificationDate: CFString = "mdat"
nonisolated(unsafe) public let kSecAttrDescription: CFString = "desc"
nonisolated(unsafe) public let kSecAttrComment: CFString = "icmt"
nonisolated(unsafe) public let kSecAttrCreator: CFString = "crtr"
nonisolated(unsafe) public let kSecAttrType: CFString = "type"
nonisolated(unsafe) public let kSecAttrLabel: CFString = "labl"
nonisolated(unsafe) public let kSecAttrIsInvisible: CFString = "invi"
nonisolated(unsafe) public let kSecAttrIsNegative: CFString = "nega"
nonisolated(unsafe) public let kSecAttrAccount: CFString = "acct"
nonisolated(unsafe) public let kSecAttrService: CFString = "svce"
nonisolated(unsafe) public let kSecAttrGeneric: CFString = "gena"
nonisolated(unsafe) public let kSecAttrSecurityDomain: CFString = "sdmn"
nonisolated(unsafe) public let kSecAttrServer: CFString = "srvr"
nonisolated(unsafe) public let kSecAttrProtocol: CFString = "ptcl"
nonisolated(unsafe) public let kSecAttrAuthenticationType: CFString = "atyp"
nonisolated(unsafe) public let kSecAttrPort: CFString = "port"
nonisolated(unsafe) public let kSecAttrPath: CFString = "path"

// kSecAttrAccessible's values.
nonisolated(unsafe) public let kSecAttrAccessibleWhenUnlocked: CFString = "ak"
nonisolated(unsafe) public let kSecAttrAccessibleAfterFirstUnlock: CFString = "ck"
nonisolated(unsafe) public let kSecAttrAccessibleAlways: CFString = "dk"
nonisolated(unsafe) public let kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly: CFString = "akpu"
nonisolated(unsafe) public let kSecAttrAccessibleWhenUnlockedThisDeviceOnly: CFString = "aku"
nonisolated(unsafe) public let kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly: CFString = "cku"
nonisolated(unsafe) public let kSecAttrAccessibleAlwaysThisDeviceOnly: CFString = "dku"

// kSecAttrProtocol's values.
nonisolated(unsafe) public let kSecAttrProtocolHTTP: CFString = "http"
nonisolated(unsafe) public let kSecAttrProtocolHTTPS: CFString = "htps"
nonisolated(unsafe) public let kSecAttrProtocolFTP: CFString = "ftp "
nonisolated(unsafe) public let kSecAttrProtocolSSH: CFString = "ssh "
nonisolated(unsafe) public let kSecAttrProtocolSMTP: CFString = "smtp"
nonisolated(unsafe) public let kSecAttrProtocolIMAP: CFString = "imap"
nonisolated(unsafe) public let kSecAttrProtocolIMAPS: CFString = "imps"
nonisolated(unsafe) public let kSecAttrProtocolLDAP: CFString = "ldap"

// kSecAttrAuthenticationType's values.
nonisolated(unsafe) public let kSecAttrAuthenticationTypeDefault: CFString = "dflt"
nonisolated(unsafe) public let kSecAttrAuthenticationTypeHTTPBasic: CFString = "http"
nonisolated(unsafe) public let kSecAttrAuthenticationTypeHTTPDigest: CFString = "httd"
nonisolated(unsafe) public let kSecAttrAuthenticationTypeHTMLForm: CFString = "form"

// Search.
nonisolated(unsafe) public let kSecMatchLimit: CFString = "m_Limit"
nonisolated(unsafe) public let kSecMatchLimitOne: CFString = "m_LimitOne"
nonisolated(unsafe) public let kSecMatchLimitAll: CFString = "m_LimitAll"

// What to return.
nonisolated(unsafe) public let kSecReturnData: CFString = "r_Data"
nonisolated(unsafe) public let kSecReturnAttributes: CFString = "r_Attributes"
nonisolated(unsafe) public let kSecReturnRef: CFString = "r_Ref"
nonisolated(unsafe) public let kSecReturnPersistentRef: CFString = "r_PersistentRef"

// Values.
nonisolated(unsafe) public let kSecValueData: CFString = "v_Data"
nonisolated(unsafe) public let kSecValueRef: CFString = "v_Ref"
nonisolated(unsafe) public let kSecValuePersistentRef: CFString = "v_PersistentRef"

// Options of the call itself.
nonisolated(unsafe) public let kSecUseDataProtectionKeychain: CFString = "nleg"
