extension DeviceConfig {
    /// The app's application identifier, `TEAMID.bundle-id`: its own keychain access group.
    public var applicationIdentifier: String { teamID + "." + bundleID }

    /// The keychain access groups a process of the app reaches, in the order iOS searches them and adds to the first:
    /// `keychain-access-groups`, the process's application identifier (the app's, or its extension's own), the App
    /// Groups.
    public func keychainGroups(applicationIdentifier: String) -> [String] {
        var seen = Set<String>()
        return (keychainAccessGroups + [applicationIdentifier] + appGroups).filter { seen.insert($0).inserted }
    }
}
