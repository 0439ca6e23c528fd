"""The real peer for `make bench`: Debian's linphone-daemon (linphone-cli, liblinphone 5.1) started per push.

One round: spawn `linphone-daemon` under GNU time with its own HOME and linphonerc, whose `[proxy_0]` registers
to `nse sip-server` over TCP on loopback with RFC 8599 push parameters in its Contact; the REGISTER flushes the
MESSAGE held for its AOR, and the daemon prints `Event-type: message-received` with `Id: <Call-ID>`. Measured:
spawn -> that event on its stdout, and its peak RSS (GNU time's %M, the same wait4 ru_maxrss `nse run` is measured
with). linphone-daemon 5.1 aborts right after printing the event (std::logic_error), so the round reads the event
and then ends the daemon by its PID; every wait is bounded and nothing it started is left running.
"""
import os
import select
import shutil
import signal
import subprocess
import time

DAEMON = "linphone-daemon"
GNU_TIME = "/usr/bin/time"


def missing_tools():
    """What the peer needs and the machine lacks (`make bench` installs linphone-cli and time)."""
    missing = []
    if shutil.which(DAEMON) is None:
        missing.append("linphone-daemon (Debian's linphone-cli)")
    if not os.access(GNU_TIME, os.X_OK):
        missing.append("GNU time (Debian's time)")
    return missing


class PeerError(Exception):
    pass


class LinphonePeer:
    """One linphone account (`aor`) in its own directory, registering to the SIP server at 127.0.0.1:`port`."""

    def __init__(self, directory, port, aor="sip:carol@example.org"):
        self.directory = directory
        self.home = os.path.join(directory, "home")
        self.aor = aor
        user, domain = aor[len("sip:"):].split("@")
        # linphonec and the daemon need this folder to exist, else no REGISTER (performance-baselines.md).
        os.makedirs(os.path.join(self.home, ".local", "share", "linphone"), exist_ok=True)
        self.config = os.path.join(directory, "linphonerc")
        proxy = f"<sip:127.0.0.1:{port};transport=tcp>"
        # UDP and TLS off, TCP on a random port bound to loopback only; no audio or video devices.
        with open(self.config, "w") as config:
            config.write(f"""[sip]
sip_port=0
sip_tcp_port=-1
sip_tls_port=0
bind_address=127.0.0.1

[proxy_0]
reg_proxy={proxy}
reg_route={proxy}
reg_identity={aor}
reg_expires=3600
reg_sendregister=1
publish=0
contact_uri_parameters=pn-provider=apns;pn-prid=0A1B2C3D4E5F:remote;pn-param=TEAMID.org.example.linphone.remote;pn-msg-str=IM_MSG;pn-silent=1

[auth_info_0]
username={user}
passwd=bench
domain={domain}

[video]
capture=0
display=0
""")
        self.environment = dict(os.environ, HOME=self.home)

    def _spawn(self, argv):
        # Its own session, so a safety net can end the whole group; stdin stays an open pipe (on EOF the daemon
        # quits, and 5.1 aborts on the way out).
        return subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                cwd=self.directory, env=self.environment, start_new_session=True)

    @staticmethod
    def _read_until(process, wanted, seconds, poke=None):
        """Reads the process's stdout until `wanted(text)` or `seconds`; `poke()` every 50 ms while waiting."""
        deadline = time.monotonic() + seconds
        text = b""
        while not wanted(text):
            left = deadline - time.monotonic()
            if left <= 0:
                return text, False
            if poke is not None:
                poke()
            ready, _, _ = select.select([process.stdout], [], [], min(left, 0.05))
            if ready:
                chunk = os.read(process.stdout.fileno(), 65536)
                if not chunk:
                    return text, wanted(text)
                text += chunk
        return text, True

    @staticmethod
    def _end(process, daemon_pid=None):
        """Ends the daemon by its PID, then its wrapper; bounded waits; the group as a last resort."""
        try:
            if daemon_pid is not None:
                try:
                    os.kill(daemon_pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass  # it aborted on its own
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=5)
            for stream in (process.stdin, process.stdout):
                try:
                    stream.close()
                except OSError:
                    pass

    def register(self, seconds=10):
        """Registers once (not timed): the binding with push parameters the server holds MESSAGEs for."""
        process = self._spawn([DAEMON, "--config", self.config])
        try:
            def poke():
                process.stdin.write(b"register-status ALL\n")
                process.stdin.flush()
            _, registered = self._read_until(process, lambda text: b"LinphoneRegistrationOk" in text, seconds, poke)
        finally:
            self._end(process, process.pid)
        if not registered:
            raise PeerError(f"linphone-daemon did not register to the SIP server within {seconds} s")

    @staticmethod
    def _child_of(pid):
        """The PID of `pid`'s only child (the daemon under GNU time), or None."""
        try:
            with open(f"/proc/{pid}/task/{pid}/children") as children:
                listed = children.read().split()
            return int(listed[0]) if listed else None
        except (FileNotFoundError, IndexError, ValueError):
            return None

    def fetch(self, call_id, seconds=10):
        """One push: spawn -> `message-received` for `call_id`. Returns (ms, peak RSS KB)."""
        timing = os.path.join(self.directory, "time.out")
        if os.path.exists(timing):
            os.remove(timing)
        wanted = f"Id: {call_id}".encode()
        start = time.perf_counter()
        process = self._spawn([GNU_TIME, "-f", "%M", "-o", timing, DAEMON, "--config", self.config])
        try:
            text, received = self._read_until(
                process, lambda text: b"Event-type: message-received" in text and wanted in text, seconds)
            elapsed = (time.perf_counter() - start) * 1000
            daemon = self._child_of(process.pid)
        except BaseException:
            self._end(process, self._child_of(process.pid))
            raise
        self._end(process, daemon)
        if not received:
            seen = "another message" if b"message-received" in text else "no message"
            raise PeerError(f"linphone-daemon: {seen} with Call-ID {call_id} within {seconds} s")
        try:
            with open(timing) as report:
                peak_kb = int(report.read().split()[-1])
        except (FileNotFoundError, IndexError, ValueError):
            raise PeerError("GNU time wrote no peak RSS for linphone-daemon")
        return elapsed, peak_kb
