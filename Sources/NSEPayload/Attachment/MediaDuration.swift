/// How long an audio or movie attachment plays, read from the file's own headers as iOS reads it for the lock
/// screen's voice-note line: WAV (`fmt ` and `data`), AIFF (`COMM`), MPEG-4 (`moov`/`mvhd`) and MP3 (the Xing/Info
/// or VBRI frame count, else the first frame's constant bit rate). Nil for anything else or a header it cannot trust.
///
/// `type` is the attachment's UTI. It reads through `read(offset, count)` so the same code runs on a file (`pread`)
/// and on fuzzed bytes, and reads headers only (64 KiB at most at a time): an MPEG-4 file's `moov` box may sit after
/// 50 MB of `mdat`.
public enum MediaDuration {
    /// At most this many boxes or chunks are walked: a crafted file of tiny boxes cannot keep it busy.
    static let maximumSteps = 512

    public static func seconds(
        type: String, size: Int, read: (_ offset: Int, _ count: Int) -> [UInt8]
    ) -> Double? {
        withoutActuallyEscaping(read) { read in measure(type: type, Reader(size: size, read: read)) }
    }

    static func measure(type: String, _ reader: Reader) -> Double? {
        let head = reader.bytes(0, 12)
        guard head.count >= 12 else { return nil }
        let seconds: Double?
        if head.starts(with: Array("RIFF".utf8)), head[8..<12].elementsEqual("WAVE".utf8) {
            seconds = wave(reader)
        } else if head.starts(with: Array("FORM".utf8)),
            head[8..<12].elementsEqual("AIFF".utf8) || head[8..<12].elementsEqual("AIFC".utf8)
        {
            seconds = aiff(reader)
        } else if head[4..<8].elementsEqual("ftyp".utf8) {
            seconds = mpeg4(reader)
        } else if type == "public.mp3" || head.starts(with: Array("ID3".utf8)) {
            seconds = mp3(reader)
        } else {
            seconds = nil
        }
        guard let seconds, seconds.isFinite, seconds >= 0, seconds < 1e7 else { return nil }
        return seconds
    }

    /// `m:ss` (or `h:mm:ss`), as the lock screen writes a voice note's length.
    public static func clock(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded())
        let (hours, minutes, rest) = (whole / 3600, whole / 60 % 60, whole % 60)
        let paddedSeconds = rest < 10 ? "0\(rest)" : "\(rest)"
        if hours > 0 { return "\(hours):\(minutes < 10 ? "0" : "")\(minutes):\(paddedSeconds)" }
        return "\(minutes):\(paddedSeconds)"
    }

    struct Reader {
        var size: Int
        var read: (Int, Int) -> [UInt8]

        func bytes(_ offset: Int, _ count: Int) -> [UInt8] {
            guard offset >= 0, count > 0, offset < size else { return [] }
            return read(offset, min(count, size - offset))
        }
    }

    /// What a chunk walk does after one chunk: go on to the next, or end with this answer.
    enum Step {
        case next
        case done(Double?)
    }

    /// Walks the chunks of a RIFF (little-endian sizes) or IFF (big-endian) file after its 12-byte header, at most
    /// `maximumSteps` of them, until `visit` (a chunk's four-letter id, where its content starts, its length) is done.
    static func walkChunks(
        _ reader: Reader, bigEndian: Bool, _ visit: (_ id: ArraySlice<UInt8>, _ content: Int, _ length: Int) -> Step
    ) -> Double? {
        var offset = 12
        for _ in 0..<maximumSteps {
            let header = reader.bytes(offset, 8)
            guard header.count == 8 else { return nil }
            let length = Int(bigEndian ? bigEndian32(header, 4) : littleEndian32(header, 4))
            if case .done(let answer) = visit(header[0..<4], offset + 8, length) { return answer }
            offset += 8 + length + (length & 1)
        }
        return nil
    }

    // MARK: - RIFF WAVE: duration = data bytes / byte rate.

    static func wave(_ reader: Reader) -> Double? {
        var byteRate: UInt32?
        return walkChunks(reader, bigEndian: false) { id, content, length in
            if id.elementsEqual("fmt ".utf8) {
                let format = reader.bytes(content, 16)
                guard format.count == 16 else { return .done(nil) }
                byteRate = littleEndian32(format, 8)
            } else if id.elementsEqual("data".utf8) {
                guard let byteRate, byteRate > 0 else { return .done(nil) }
                // A recorder that never finished leaves the size 0 or too large: count what the file holds.
                let available = reader.size - content
                let dataBytes = length == 0 || length > available ? available : length
                return .done(Double(dataBytes) / Double(byteRate))
            }
            return .next
        }
    }

    // MARK: - AIFF: duration = sample frames / sample rate (an 80-bit float).

    static func aiff(_ reader: Reader) -> Double? {
        walkChunks(reader, bigEndian: true) { id, content, _ in
            guard id.elementsEqual("COMM".utf8) else { return .next }
            let common = reader.bytes(content, 18)
            guard common.count == 18, let rate = extended80(Array(common[8..<18])), rate > 0 else { return .done(nil) }
            return .done(Double(bigEndian32(common, 2)) / rate)
        }
    }

    /// An IEEE 754 80-bit extended float (AIFF's sample rate).
    static func extended80(_ bytes: [UInt8]) -> Double? {
        guard bytes.count == 10 else { return nil }
        let exponent = Int(bytes[0] & 0x7F) << 8 | Int(bytes[1])
        var mantissa: UInt64 = 0
        for byte in bytes[2..<10] { mantissa = mantissa << 8 | UInt64(byte) }
        guard mantissa != 0, exponent != 0x7FFF else { return nil }
        let value = Double(mantissa) * Double(sign: .plus, exponent: exponent - 16383 - 63, significand: 1)
        return bytes[0] & 0x80 == 0 ? value : -value
    }

    // MARK: - MPEG-4 (m4a, mp4): moov → mvhd's duration / timescale.

    static func mpeg4(_ reader: Reader) -> Double? {
        guard let moov = box("moov", from: 0, to: reader.size, reader),
            let mvhd = box("mvhd", from: moov.content, to: moov.end, reader)
        else { return nil }
        let fields = reader.bytes(mvhd.content, 32)
        guard let version = fields.first else { return nil }
        let timescale: UInt32
        let duration: UInt64
        if version == 1 {
            guard fields.count >= 32 else { return nil }
            timescale = bigEndian32(fields, 20)
            duration = UInt64(bigEndian32(fields, 24)) << 32 | UInt64(bigEndian32(fields, 28))
        } else {
            guard fields.count >= 20 else { return nil }
            timescale = bigEndian32(fields, 12)
            duration = UInt64(bigEndian32(fields, 16))
        }
        guard timescale > 0, duration != UInt64.max, duration != UInt64(UInt32.max) else { return nil }
        return Double(duration) / Double(timescale)
    }

    /// The first box of a type between two offsets: where its content starts and where it ends.
    static func box(_ type: String, from start: Int, to end: Int, _ reader: Reader) -> (content: Int, end: Int)? {
        var offset = start
        for _ in 0..<maximumSteps {
            guard offset + 8 <= end else { return nil }
            let header = reader.bytes(offset, 16)
            guard header.count >= 8 else { return nil }
            var length = Int(bigEndian32(header, 0))
            var headerLength = 8
            if length == 1 {
                guard header.count == 16 else { return nil }
                let large = UInt64(bigEndian32(header, 8)) << 32 | UInt64(bigEndian32(header, 12))
                guard large <= UInt64(Int.max) else { return nil }
                length = Int(large)
                headerLength = 16
            } else if length == 0 {
                length = end - offset
            }
            guard length >= headerLength, length <= end - offset else { return nil }
            if header[4..<8].elementsEqual(type.utf8) { return (offset + headerLength, offset + length) }
            offset += length
        }
        return nil
    }

    // MARK: - MP3: frames × samples per frame / sample rate, or bytes × 8 / bit rate for a constant rate.

    static func mp3(_ reader: Reader) -> Double? {
        var offset = 0
        let id3 = reader.bytes(0, 10)
        if id3.count == 10, id3.starts(with: Array("ID3".utf8)) {
            // A syncsafe size: 7 bits a byte.
            let size = id3[6..<10].reduce(0) { $0 << 7 | Int($1 & 0x7F) }
            offset = 10 + size + (id3[5] & 0x10 != 0 ? 10 : 0)
        }
        // The first frame header within 64 KiB of where the audio should start.
        let window = reader.bytes(offset, 64 * 1024)
        var index = 0
        while index + 4 <= window.count {
            if window[index] == 0xFF, window[index + 1] & 0xE0 == 0xE0,
                let frame = MP3Frame(Array(window[index..<index + 4]))
            {
                let start = offset + index
                let first = reader.bytes(start, 200)
                if let frames = frame.frameCount(in: first) {
                    return Double(frames) * Double(frame.samplesPerFrame) / Double(frame.sampleRate)
                }
                return Double(reader.size - start) * 8 / Double(frame.bitRate)
            }
            index += 1
        }
        return nil
    }

    struct MP3Frame {
        var version: Int  // 1, 2 or 25 (2.5)
        var layer: Int
        var bitRate: Int
        var sampleRate: Int
        var mono: Bool

        init?(_ header: [UInt8]) {
            let versionBits = Int(header[1] >> 3 & 0x03)
            let layerBits = Int(header[1] >> 1 & 0x03)
            let bitRateIndex = Int(header[2] >> 4)
            let rateIndex = Int(header[2] >> 2 & 0x03)
            guard versionBits != 1, layerBits != 0, bitRateIndex != 0, bitRateIndex != 15, rateIndex != 3 else {
                return nil
            }
            version = [25, 0, 2, 1][versionBits]
            layer = 4 - layerBits
            let rates = [44_100, 48_000, 32_000][rateIndex]
            sampleRate = version == 1 ? rates : version == 2 ? rates / 2 : rates / 4
            let kbps: [Int]
            switch (version == 1, layer) {
            case (true, 1): kbps = [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448]
            case (true, 2): kbps = [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384]
            case (true, _): kbps = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
            case (false, 1): kbps = [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256]
            case (false, _): kbps = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160]
            }
            bitRate = kbps[bitRateIndex] * 1000
            mono = header[3] >> 6 == 3
        }

        var samplesPerFrame: Int { layer == 1 ? 384 : layer == 2 || version == 1 ? 1152 : 576 }

        /// The frame count a Xing/Info header (after the side information) or a VBRI header (at 36) gives.
        func frameCount(in frame: [UInt8]) -> UInt32? {
            let sideInformation = version == 1 ? (mono ? 17 : 32) : (mono ? 9 : 17)
            let xing = 4 + sideInformation
            if frame.count >= xing + 12,
                frame[xing..<xing + 4].elementsEqual("Xing".utf8) || frame[xing..<xing + 4].elementsEqual("Info".utf8),
                frame[xing + 7] & 0x01 != 0
            {
                let frames = MediaDuration.bigEndian32(frame, xing + 8)
                return frames > 0 ? frames : nil
            }
            if frame.count >= 36 + 18, frame[36..<40].elementsEqual("VBRI".utf8) {
                let frames = MediaDuration.bigEndian32(frame, 36 + 14)
                return frames > 0 ? frames : nil
            }
            return nil
        }
    }

    static func littleEndian32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
    }

    static func bigEndian32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        UInt32(bytes[at]) << 24 | UInt32(bytes[at + 1]) << 16 | UInt32(bytes[at + 2]) << 8 | UInt32(bytes[at + 3])
    }
}
