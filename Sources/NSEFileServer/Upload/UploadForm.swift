/// How an upload's body carries the file: the bytes themselves (`application/octet-stream`, or any type that is not
/// a form), or a `multipart/form-data` form with the file in one part, as liblinphone's file transfer sends it.
enum UploadForm: Equatable {
    case raw
    case multipart(boundary: String)

    /// What a form may add around its file (boundaries, part headers, small fields) within `--max-size`.
    static let formAllowance = 64 * 1024

    /// Why a body cannot be read as a form.
    struct Invalid: Error, Equatable {
        var detail: String
    }

    /// From the request's `Content-Type`.
    init(contentType: String?) throws(Invalid) {
        guard let contentType else {
            self = .raw
            return
        }
        let type = HeaderParameters(contentType)
        guard type.value == "multipart/form-data" else {
            self = .raw
            return
        }
        // RFC 2046 §5.1.1: 1 to 70 characters, not ending in a space.
        guard let boundary = type["boundary"], (1...70).contains(boundary.utf8.count), boundary.last != " ",
            boundary.unicodeScalars.allSatisfy({ $0.isASCII && $0.value >= 0x20 && $0.value < 0x7F })
        else { throw Invalid(detail: "multipart/form-data needs a boundary of 1 to 70 ASCII characters") }
        self = .multipart(boundary: boundary)
    }

    /// The largest body an upload of this form may have for a file of at most `maxSize` bytes.
    func bodyLimit(maxSize: Int) -> Int {
        switch self {
        case .raw: maxSize
        case .multipart: maxSize + Self.formAllowance
        }
    }
}
