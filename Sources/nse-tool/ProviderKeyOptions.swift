import ArgumentParser

/// `--auth-key-file --key-id --team-id`: an APNs provider key, as `nse serve` checks tokens and `nse push` signs them.
struct ProviderKeyOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The APNs key: AuthKey_KEYID.p8 (nse serve also takes its public key in PEM).", valueName: "file"))
    var authKeyFile: String?

    @Option(help: ArgumentHelp("The key's id (the token's kid), with --auth-key-file.", valueName: "id"))
    var keyId: String?

    @Option(help: ArgumentHelp("The team id (the token's iss), with --auth-key-file.", valueName: "id"))
    var teamId: String?

    /// The three together, or none.
    var key: (file: String, keyID: String, teamID: String)? {
        guard let authKeyFile, let keyId, let teamId else { return nil }
        return (authKeyFile, keyId, teamId)
    }

    func validate() throws {
        if authKeyFile != nil || keyId != nil || teamId != nil, key == nil {
            throw ValidationError("--auth-key-file, --key-id and --team-id go together")
        }
    }
}

/// `nse serve`'s provider keys: `--auth-key-file --key-id --team-id`, repeated once per key, as a provider with
/// several apps (or a server that several providers use) has; a token is checked against the key its `kid` names.
struct ServeProviderKeyOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "An APNs key tokens are checked against: AuthKey_KEYID.p8, or its public key in PEM (repeat for several keys).",
            valueName: "file"))
    var authKeyFile: [String] = []

    @Option(help: ArgumentHelp("The key's id (the token's kid), once per --auth-key-file.", valueName: "id"))
    var keyId: [String] = []

    @Option(help: ArgumentHelp("The key's team id (the token's iss), once per --auth-key-file.", valueName: "id"))
    var teamId: [String] = []

    /// The keys, in the order given.
    var keys: [(file: String, keyID: String, teamID: String)] {
        zip(authKeyFile, zip(keyId, teamId)).map { ($0, $1.0, $1.1) }
    }

    func validate() throws {
        guard authKeyFile.count == keyId.count, keyId.count == teamId.count else {
            throw ValidationError("--auth-key-file, --key-id and --team-id go together, once each per key")
        }
        if Set(keyId).count != keyId.count { throw ValidationError("--key-id: each key needs its own id") }
    }
}
