public import NSEDevice

/// The liberties Apple reserves for the pushes it stores for an offline device ("Sending notification requests to
/// APNs": one per app, "usually the latest" but not always; deliveries may be reordered; priority 5 and 1 pushes may
/// be throttled or dropped), taken for a device whose store is `apple` (`nse device set --apns-store`).
///
/// Apple gives no rates. nse draws each liberty with a fixed chance from a generator seeded per device (its
/// `--seed`, else its token), indexed by how many pushes the server has stored for that device: the same pushes in
/// the same order take the same liberties on every run, and a test reads in each result which one was taken.
public enum StoreLiberties {
    /// What a liberty did to a push, as its result says (`store_liberty`).
    public enum Liberty: String, Sendable {
        /// This newer push was dropped and an older one for the same app kept in its place.
        case replaced
        /// Delivered, when the device came back, before a push stored earlier.
        case reordered
        /// A priority 5 or 1 push the store dropped instead of keeping it.
        case droppedLowPriority = "dropped-low-priority"
    }

    /// A decision with its own stream of draws.
    public enum Draw: UInt64, Sendable {
        case keepOlder = 1
        case reorder = 2
        case dropLowPriority = 3

        /// Its chance: high enough that a handful of pushes meets each liberty, low enough that "usually the
        /// latest" stays true.
        public var chance: Double {
            switch self {
            case .keepOlder: 0.25
            case .reorder: 0.5
            case .dropLowPriority: 0.25
            }
        }
    }

    /// Whether the device's `sequence`-th stored push takes the liberty `kind`.
    public static func takes(_ kind: Draw, seed: UInt64, sequence: UInt64) -> Bool {
        draw(kind, seed: seed, sequence: sequence) < kind.chance
    }

    /// A value in [0, 1): SplitMix64's mixing of the seed, the sequence number and the kind, so each decision is
    /// independent of the others and of the order they are asked in.
    public static func draw(_ kind: Draw, seed: UInt64, sequence: UInt64) -> Double {
        var mixed = seed &+ (sequence &+ 1) &* 0x9E37_79B9_7F4A_7C15 &+ kind.rawValue &* 0xD1B5_4A32_D192_ED03
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        mixed ^= mixed >> 31
        return Double(mixed >> 11) / Double(UInt64(1) << 53)
    }

    /// The device's seed: `--seed`, else the FNV-1a hash of its alert token (stable, and different per device).
    public static func seed(of config: DeviceConfig) -> UInt64 {
        if let seed = config.apnsStoreSeed { return seed }
        return config.remoteToken.lowercased().utf8.reduce(0xCBF2_9CE4_8422_2325) {
            ($0 ^ UInt64($1)) &* 0x100_0000_01B3
        }
    }
}
