import NSESystem

/// Where a built extension's files go in its cache folder: an app extension bundle inside its containing app's, as
/// iOS installs one (`app.app/PlugIns/NotificationServiceExtension.appex/`). Code that asks whether it runs in an
/// extension looks for the `.appex` suffix of `Bundle.main.bundlePath` (GoogleUtilities' `isAppExtension`), and
/// code that wants the app's Info.plist opens the bundle two folders up.
struct BundleLayout: Equatable {
    /// The containing app's identifier: the extension's without its last component, as Xcode requires of an
    /// embedded extension (`org.example.app.NotificationService` → `org.example.app`).
    var appIdentifier: String

    init(extensionIdentifier: String) {
        let parts = extensionIdentifier.split(separator: ".")
        appIdentifier = parts.count > 1 ? parts.dropLast().joined(separator: ".") : extensionIdentifier
    }

    /// The app's name: its identifier's last component (Xcode's product name is not known here), of the letters,
    /// digits, `-` and `_` in it: an Info.plist's identifier is not checked, and this is a folder's name.
    var appName: String {
        let last = appIdentifier.split(separator: ".").last.map(String.init) ?? ""
        let name = String(last.filter { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
        return name.isEmpty ? "App" : name
    }

    var appBundle: String { appName + ".app" }

    /// The extension's bundle, relative to the build's folder: the executable, its Info.plist and `.lproj` folders.
    var extensionBundle: String { appBundle + "/PlugIns/NotificationServiceExtension.appex" }

    /// The containing app's Info.plist: what `Bundle(url:)` of the app reads (its identifier, name and type).
    var appInfoPlist: String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict>
        \t<key>CFBundleIdentifier</key>
        \t<string>\(Self.escaped(appIdentifier))</string>
        \t<key>CFBundleName</key>
        \t<string>\(Self.escaped(appName))</string>
        \t<key>CFBundleExecutable</key>
        \t<string>\(Self.escaped(appName))</string>
        \t<key>CFBundlePackageType</key>
        \t<string>APPL</string>
        </dict>
        </plist>

        """
    }

    /// The identifier passed Apple's rule (letters, digits, `-`, `.`), so this escapes nothing today; it keeps the
    /// plist well-formed should the rule loosen.
    private static func escaped(_ text: String) -> String { XMLText.escape(text) }
}
