import NSEPayload
import NSETestSupport
import Testing

/// A voice note's length as the host reads it from the file's headers for the lock screen (MediaDuration).
@Suite struct MediaDurationTests {
    func seconds(_ bytes: [UInt8], type: String) -> Double? {
        MediaDuration.seconds(type: type, size: bytes.count) { offset, count in
            Array(bytes[offset..<min(bytes.count, offset + count)])
        }
    }

    @Test func waveAiffMpeg4AndMP3SayHowLongTheyPlay() throws {
        let wave = try #require(seconds(MediaSamples.wave(seconds: 7, rate: 8_000, channels: 2), type: "x"))
        #expect(abs(wave - 7) < 0.001)
        let aiff = try #require(seconds(MediaSamples.aiff(frames: 44_100 * 3 / 2), type: "public.aiff-audio"))
        #expect(abs(aiff - 1.5) < 0.001)
        let m4a = try #require(seconds(MediaSamples.mpeg4(duration: 12_345, timescale: 1_000), type: "x"))
        #expect(abs(m4a - 12.345) < 0.001)
        let long = MediaSamples.mpeg4(duration: 90 * 44_100, timescale: 44_100, mdatBytes: 300_000, version: 1)
        #expect(seconds(long, type: "public.mpeg-4-audio").map { abs($0 - 90) < 0.001 } == true)
        let xing = try #require(seconds(MediaSamples.mp3(frames: 100, xing: true), type: "public.mp3"))
        #expect(abs(xing - 100 * 1152 / 44_100.0) < 0.001)
        let constant = try #require(seconds(MediaSamples.mp3(frames: 100, xing: false), type: "public.mp3"))
        #expect(abs(constant - 100 * 1152 / 44_100.0) < 0.05)
    }

    @Test func aRecordingLeftUnfinishedCountsWhatTheFileHolds() throws {
        var wave = MediaSamples.wave(seconds: 2, rate: 16_000)
        // The recorder died before writing the data chunk's size.
        let data = try #require(wave.indices.first { wave[$0...].starts(with: Array("data".utf8)) })
        wave.replaceSubrange(data + 4..<data + 8, with: [0, 0, 0, 0])
        #expect(seconds(wave, type: "com.microsoft.waveform-audio").map { abs($0 - 2) < 0.001 } == true)
    }

    static let unreadable: [(String, [UInt8])] = {
        var cases: [(String, [UInt8])] = []
        cases.append(("nothing known", Array("not an audio file at all".utf8)))
        let noFormat: [UInt8] = Array("RIFF".utf8) + [0, 0, 0, 0] + Array("WAVEdata".utf8) + [4, 0, 0, 0, 1, 2, 3, 4]
        cases.append(("a WAV without fmt", noFormat))
        let tooLong: [UInt8] = [0, 0, 1, 0] + Array("ftypM4A ".utf8) + [0xFF, 0xFF, 0xFF, 0xFF]
        cases.append(("an MPEG-4 box longer than the file", tooLong))
        cases.append(("a zero timescale", MediaSamples.mpeg4(duration: 10, timescale: 0)))
        let zeroRate: [UInt8] = Array(MediaSamples.aiff(frames: 10).prefix(20)) + [UInt8](repeating: 0, count: 40)
        cases.append(("an AIFF rate of zero", zeroRate))
        return cases
    }()

    @Test(arguments: unreadable)
    func aHeaderThatDoesNotSayGivesNoLength(_ label: String, _ bytes: [UInt8]) {
        #expect(seconds(bytes, type: "public.mp4") == nil, "\(label)")
    }

    @Test func theLockScreenWritesMinutesAndSeconds() {
        #expect(MediaDuration.clock(7) == "0:07")
        #expect(MediaDuration.clock(59.6) == "1:00")
        #expect(MediaDuration.clock(125) == "2:05")
        #expect(MediaDuration.clock(3_725) == "1:02:05")
    }
}
