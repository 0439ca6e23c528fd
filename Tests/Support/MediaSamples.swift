/// Audio and video files of a known length, their headers written as each format's specification lays them out
/// (RIFF WAVE, AIFF, ISO base media, MPEG audio), with silence or filler for the samples: what the tests give the
/// host to read a voice note's length from.
public enum MediaSamples {
    /// 16-bit PCM WAV of `seconds` at `rate` Hz with `channels` channels.
    public static func wave(seconds: Double, rate: Int = 16_000, channels: Int = 1) -> [UInt8] {
        let byteRate = rate * channels * 2
        let dataBytes = Int(seconds * Double(byteRate))
        var bytes = Array("RIFF".utf8) + le32(36 + dataBytes) + Array("WAVE".utf8)
        bytes += Array("fmt ".utf8) + le32(16) + le16(1) + le16(channels) + le32(rate) + le32(byteRate)
        bytes += le16(channels * 2) + le16(16)
        // A chunk the reader must step over (odd length: padded).
        bytes += Array("LIST".utf8) + le32(5) + Array("INFOx".utf8) + [0]
        bytes += Array("data".utf8) + le32(dataBytes) + [UInt8](repeating: 0, count: dataBytes)
        return bytes
    }

    /// AIFF of `frames` sample frames at 44.1 kHz (the rate as an 80-bit extended float).
    public static func aiff(frames: Int) -> [UInt8] {
        let rate: [UInt8] = [0x40, 0x0E, 0xAC, 0x44, 0, 0, 0, 0, 0, 0]  // 44100.0
        let sound = frames * 2
        var body = Array("AIFF".utf8) + Array("COMM".utf8) + be32(18) + be16(1) + be32(frames) + be16(16) + rate
        body += Array("SSND".utf8) + be32(8 + sound) + be32(0) + be32(0) + [UInt8](repeating: 0, count: sound)
        return Array("FORM".utf8) + be32(body.count) + body
    }

    /// MPEG-4 audio with its `moov` after `mdatBytes` of media, `duration` in units of `timescale`; `version` 1
    /// writes 64-bit times.
    public static func mpeg4(duration: Int, timescale: Int, mdatBytes: Int = 4_096, version: UInt8 = 0) -> [UInt8] {
        func box(_ type: String, _ content: [UInt8]) -> [UInt8] { be32(8 + content.count) + Array(type.utf8) + content }
        let ftyp = box("ftyp", Array("M4A ".utf8) + be32(0) + Array("M4A isom".utf8))
        let mdat = box("mdat", [UInt8](repeating: 0xA5, count: mdatBytes))
        var mvhd: [UInt8] = [version, 0, 0, 0]
        if version == 1 {
            mvhd += be32(0) + be32(1) + be32(0) + be32(2) + be32(timescale) + be32(0) + be32(duration)
        } else {
            mvhd += be32(1) + be32(2) + be32(timescale) + be32(duration)
        }
        mvhd += [UInt8](repeating: 0, count: 80)
        let moov = box("moov", box("free", [1, 2, 3]) + box("mvhd", mvhd))
        return ftyp + mdat + moov
    }

    /// MPEG-1 layer III at 128 kbit/s, 44.1 kHz, joint stereo, after an ID3v2 tag: `frames` frames, with a Xing
    /// header giving their count when `xing`, else constant bit rate only.
    public static func mp3(frames: Int, xing: Bool) -> [UInt8] {
        let frameBytes = 144 * 128_000 / 44_100  // 417, unpadded
        let header: [UInt8] = [0xFF, 0xFB, 0x90, 0x40]
        var bytes = Array("ID3".utf8) + [4, 0, 0] + [0, 0, 0x01, 0x00]  // a 128-byte tag (syncsafe)
        bytes += [UInt8](repeating: 0, count: 128)
        if xing {
            var info = header + [UInt8](repeating: 0, count: 32) + Array("Xing".utf8) + be32(1) + be32(frames)
            info += [UInt8](repeating: 0, count: frameBytes - info.count)
            bytes += info
        }
        for _ in 0..<frames { bytes += header + [UInt8](repeating: 0x55, count: frameBytes - 4) }
        return bytes
    }

    static func le16(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF)] }
    static func le32(_ value: Int) -> [UInt8] { le16(value & 0xFFFF) + le16(value >> 16 & 0xFFFF) }
    static func be16(_ value: Int) -> [UInt8] { [UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
    static func be32(_ value: Int) -> [UInt8] { be16(value >> 16 & 0xFFFF) + be16(value & 0xFFFF) }
}
