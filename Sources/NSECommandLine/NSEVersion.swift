/// nse's version, as `nse --version` prints it: raised with each change of its command line, file formats or
/// protocols that users see (docs/cli.md).
public enum NSEVersion {
    public static let current = "0.16.0"
}
