import ArgumentParser
import NSECommandLine
import NSEDevice
import NSEJSON
import NSESystem

extension DeviceCommand {
    /// `nse device keychain`: what the app keeps in the keychain it shares with its extension (Security's SecItem
    /// calls read it; docs/device.md). The app's side: its own application identifier, not the extension's.
    struct Keychain: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Keep the app's keychain items (a key, a token) where its extension's SecItem calls find them.",
            subcommands: [Add.self, List.self, Delete.self])

        /// Which item: a generic password by service and account, an internet password by server (and port,
        /// protocol).
        struct ItemOptions: ParsableArguments {
            @Option(help: "kSecAttrService of a generic password.")
            var service: String?

            @Option(help: "kSecAttrAccount.")
            var account: String?

            @Option(help: "kSecAttrServer: makes it an internet password.")
            var server: String?

            @Option(help: "kSecAttrPort of an internet password.")
            var port: Int?

            @Option(help: ArgumentHelp("kSecAttrProtocol of an internet password (e.g. htps).", valueName: "code"))
            var `protocol`: String?

            @Option(
                help: ArgumentHelp(
                    "kSecAttrAccessGroup (default: the first of the app's: its keychain-access-groups, else TEAMID.bundle-id).",
                    valueName: "group"))
            var accessGroup: String?

            var itemClass: String { server == nil ? "genp" : "inet" }

            func check() throws {
                if server == nil, port != nil || `protocol` != nil {
                    throw ValidationError("--port and --protocol are an internet password's: give --server too")
                }
                if server != nil, service != nil {
                    throw ValidationError(
                        "--service is a generic password's, --server an internet password's: not both")
                }
                for value in [service, account, server, `protocol`, accessGroup].compactMap({ $0 })
                where value.isEmpty || value.utf8.count > 1024 {
                    throw ValidationError("an item's attributes must be 1 to 1024 bytes")
                }
                if let port, !(0...65535).contains(port) { throw ValidationError("--port must be 0 to 65535") }
            }

            /// The attributes named, under Apple's keys.
            var attributes: [String: KeychainItem.Value] {
                var attributes: [String: KeychainItem.Value] = [:]
                if let service { attributes["svce"] = .text(service) }
                if let account { attributes["acct"] = .text(account) }
                if let server { attributes["srvr"] = .text(server) }
                if let port { attributes["port"] = .integer(Int64(port)) }
                if let `protocol` { attributes["ptcl"] = .text(`protocol`) }
                return attributes
            }

            /// The classes a list or a delete looks in: both, unless the options name one's own attribute.
            var classes: [String] { server == nil && service == nil ? ["genp", "inet"] : [itemClass] }

            /// Whether `found` has every attribute the options name.
            func matches(_ found: KeychainItem) -> Bool {
                found.has(attributes)
            }

            /// The groups the app reaches, in iOS's order; `accessGroup` must be one of them.
            func groups(of device: Device) throws(Failure) -> [String] {
                let groups = device.config.keychainGroups(applicationIdentifier: device.config.applicationIdentifier)
                guard let accessGroup else { return groups }
                guard groups.contains(accessGroup) else {
                    throw Failure(
                        .config,
                        "--access-group \(accessGroup): the app's entitlements do not give it (it has \(groups.joined(separator: ", ")))"
                    )
                }
                return [accessGroup]
            }
        }

        static func json(_ item: KeychainItem) -> JSON {
            var object = JSONObject()
            object["class"] = .string(item.itemClass == "genp" ? "generic-password" : "internet-password")
            object["access_group"] = .string(item.accessGroup)
            for (key, name) in [
                ("svce", "service"), ("acct", "account"), ("srvr", "server"), ("port", "port"), ("ptcl", "protocol"),
                ("labl", "label"), ("pdmn", "accessible"),
            ] {
                switch item.attributes[key] {
                case .text(let text)?: object[name] = .string(text)
                case .integer(let number)?: object[name] = .int(number)
                default: break
                }
            }
            object["synchronizable"] = .bool(item.attributes["sync"] == .bool(true))
            // Never the secret itself: its size says it is there.
            object["data_bytes"] = .int(Int64(item.data.count))
            return .object(object)
        }

        struct Add: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract:
                    "Add an item as the app would (SecItemAdd); its secret from a file or stdin, never the command line."
            )

            @Argument(help: ArgumentHelp("The container folder.", valueName: "dir"))
            var directory: String

            @OptionGroup var item: ItemOptions

            @Option(
                help: ArgumentHelp("The item's secret bytes: a file, or - for stdin (at most 1 MB).", valueName: "file")
            )
            var dataFile: String

            @Option(help: "kSecAttrLabel.")
            var label: String?

            @Option(
                help: ArgumentHelp(
                    "kSecAttrAccessible: when-unlocked (ak, the default), after-first-unlock (ck), when-unlocked-this-device-only (aku), after-first-unlock-this-device-only (cku), when-passcode-set-this-device-only (akpu), always (dk), always-this-device-only (dku). A locked device's extension reads only after-first-unlock and always items.",
                    valueName: "class"))
            var accessible = "when-unlocked"

            @Flag(help: "Replace an item with the same identity instead of refusing it.")
            var replace = false

            func validate() throws {
                try item.check()
                guard item.account != nil || item.service != nil || item.server != nil else {
                    throw ValidationError("name the item: --service and/or --account, or --server")
                }
                guard DeviceLockState.accessible(named: accessible) != nil else {
                    throw ValidationError(
                        "--accessible \(accessible): expected "
                            + DeviceLockState.accessibleNames.keys.sorted().joined(separator: ", ")
                            + ", or a code: ak, ck, aku, cku, akpu, dk, dku")
                }
            }

            func run() throws {
                do throws(Failure) {
                    let device = try DeviceOption(device: directory).open()
                    let group = try item.groups(of: device)[0]
                    guard let data = try readInput(dataFile == "-" ? nil : dataFile, limit: 1 << 20) else {
                        throw Failure(.usage, "--data-file: more than 1 MB")
                    }
                    var attributes = item.attributes
                    if let label { attributes["labl"] = .text(label) }
                    let new = KeychainItem.added(
                        itemClass: item.itemClass, accessGroup: group, attributes: attributes,
                        accessible: DeviceLockState.accessible(named: accessible) ?? "ak", data: data)
                    let identity = KeychainItem.identity[item.itemClass] ?? []
                    let added: Bool
                    do {
                        let keychain = try device.keychain()
                        if replace {
                            _ = try keychain.delete(itemClass: item.itemClass, groups: [group]) {
                                $0.sameIdentity(as: new, keys: identity)
                            }
                        }
                        added = try keychain.add(new, identity: identity)
                    } catch {
                        throw Failure(error)
                    }
                    guard added else {
                        throw Failure(.config, "the app already has this item in \(group) (--replace to replace it)")
                    }
                    StandardStreams.writeOut(Keychain.json(new).serialized() + "\n")
                } catch {
                    throw error.exit()
                }
            }
        }

        struct List: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "List the items the app reaches, one JSON line each (never their secrets).")

            @Argument(help: ArgumentHelp("The container folder.", valueName: "dir"))
            var directory: String

            @OptionGroup var item: ItemOptions

            func validate() throws { try item.check() }

            func run() throws {
                do throws(Failure) {
                    let device = try DeviceOption(device: directory).open()
                    let groups = try item.groups(of: device)
                    var lines = ""
                    do {
                        let keychain = try device.keychain()
                        for itemClass in item.classes {
                            for found in try keychain.items(itemClass: itemClass, groups: groups, where: item.matches) {
                                lines += Keychain.json(found).serialized() + "\n"
                            }
                        }
                    } catch { throw Failure(error) }
                    StandardStreams.writeOut(lines)
                } catch {
                    throw error.exit()
                }
            }
        }

        struct Delete: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Delete the items that match (SecItemDelete); status 66 when none does.")

            @Argument(help: ArgumentHelp("The container folder.", valueName: "dir"))
            var directory: String

            @OptionGroup var item: ItemOptions

            func validate() throws { try item.check() }

            func run() throws {
                do throws(Failure) {
                    let device = try DeviceOption(device: directory).open()
                    let groups = try item.groups(of: device)
                    var deleted = 0
                    do {
                        let keychain = try device.keychain()
                        for itemClass in item.classes {
                            deleted += try keychain.delete(itemClass: itemClass, groups: groups, where: item.matches)
                        }
                    } catch { throw Failure(error) }
                    guard deleted > 0 else { throw Failure(.noInput, "no keychain item of the app matches") }
                    StandardStreams.writeOut(
                        JSON.object(JSONObject([(key: "deleted", value: .int(Int64(deleted)))])).serialized() + "\n")
                } catch {
                    throw error.exit()
                }
            }
        }
    }
}
