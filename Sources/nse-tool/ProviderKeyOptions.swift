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
