/// A step of a call through the server, as its `call` event reports it.
public enum CallStep: String, Sendable, Hashable {
    /// The INVITE is held: no device can take it now; the bindings with push parameters were pushed.
    case held
    /// The INVITE went to a device (at once, or on its REGISTER after the push).
    case forwarded
    /// The device rings (a 180 or 183 passed to the caller).
    case ringing
    /// The device answered 2xx; the dialog now runs through the server.
    case answered
    /// The device's final answer was not 2xx (declined, busy); `status` is its code.
    case declined
    /// The caller cancelled before an answer (487).
    case cancelled
    /// No answer within the call fork timeout (408).
    case timedOut = "timed-out"
    /// A BYE ended the answered call.
    case hungUp = "hung-up"
}
