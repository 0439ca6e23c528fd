#!/usr/bin/env python3
"""The lock-screen page of `nse serve` in a real browser: Debian's chromium, headless, driven by selenium (PyPI, in a
venv under .build) through chromium-driver.

It serves two devices (one with the filtering entitlement), pushes a sealed message, a fallback (an envelope that
does not open), a sealed call offer (silenced by the extension and reported to CallKit) and a plain alert to the
other phone, then checks the page's DOM: the rewritten text in the right phone and not in the other, the fallback
marked, the silenced line, the incoming-call screen, the detail panel's timeline; then a push sent while the page is
open must appear within 2 s (the page follows /v1/events). A screenshot is saved to .build/lockscreen.png.

Then a second server, for a third device with the communication entitlement, runs an extension of its own (Python,
speaking docs/protocol.md) that attaches a real PNG and makes communication notifications; the host moves the files
into the device's attachment store as for any extension. The page must show the sender's avatar, a group's name and
picture, initials for a sender without one, a glyph for audio and the image as a thumbnail, each picture loaded from
the server's attachment route (naturalWidth > 0), also for a push that arrives while the page is open, and no path
of the server's disk in the page. Its extension also adds local notifications (`add-notification`): each appears
live as a card of its own, and one added again with the same identifier marks the first replaced. Its screenshot:
.build/lockscreen-communication.png.

usage: NSE_BIN_DIR=.build/debug python3 scripts/browser-lockscreen.py
exit 0 all passed, 1 a check failed, 77 no browser could be found or installed (one line says so).
"""
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

SELENIUM = "selenium==4.51.0"
VENV = os.path.abspath(os.environ.get("NSE_BROWSER_VENV", ".build/browser-venv"))
BIN = os.path.abspath(os.environ.get("NSE_BIN_DIR", ".build/debug"))
NSE = os.path.join(BIN, "nse")
SCREENSHOT = os.path.abspath(os.environ.get("NSE_SCREENSHOT", ".build/lockscreen.png"))
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# A version-1 extension (docs/protocol.md) for the communication phone: what the push's "rich" key asks for, with
# pictures it writes as real PNGs (a PNG header and zeros would not decode in a browser).
RICH_EXTENSION = r"""
import json, os, struct, sys, tempfile, zlib

def png(rgb, size=16):
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\x00" + bytes(rgb) * size for _ in range(size))
    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")

def written(name, data):
    handle, path = tempfile.mkstemp(suffix="-" + name)
    os.write(handle, data)
    os.close(handle)
    return path

request = json.loads(sys.stdin.readline())
payload = request["payload"]
if "locals" in payload:
    # Each message as a local notification of its own (UNUserNotificationCenter.add), nothing for the push.
    for item in payload["locals"]:
        print(json.dumps({"type": "add-notification", "identifier": item["id"], "trigger": None,
                          "content": {"aps": {"alert": {"title": item["from"], "body": item["text"]}}}}), flush=True)
        answer = json.loads(sys.stdin.readline())
        if answer.get("type") != "add-notification-result" or not answer.get("ok"):
            sys.exit("add-notification refused: " + json.dumps(answer))
    print(json.dumps({"type": "content", "content": {}}), flush=True)
    sys.stdin.read()
    sys.exit(0)
rich = payload.get("rich", "direct")
person = {"intent": "INSendMessageIntent", "sender_name": "Alice", "sender_handle": "sip:alice@example.org",
          "sender_handle_type": "unknown", "avatar_path": None, "group_name": None, "group_avatar_path": None,
          "conversation_identifier": "c-" + rich, "recipient_count": 0, "service_name": "SIP"}
attachments = []
if rich == "direct":
    person["avatar_path"] = written("avatar", png((40, 90, 200)))
    attachments.append({"identifier": "picture", "path": written("picture.png", png((200, 60, 40))),
                        "type": "public.png", "thumbnail_hidden": False})
elif rich == "group":
    person.update(group_name="Book club", recipient_count=3, avatar_path=written("avatar", png((40, 90, 200))),
                  group_avatar_path=written("group-avatar", png((30, 150, 90))))
elif rich == "broken":
    person["sender_name"] = "Frank Ocean"
    person["avatar_path"] = written("avatar", b"\x89PNG\r\n\x1a\n" + bytes(64))
else:
    person["sender_name"] = "Erin Baker"
    attachments.append({"identifier": "voice", "path": written("voice.mp3", b"ID3" + bytes(512)),
                        "type": "public.mp3", "thumbnail_hidden": False})
print(json.dumps({"type": "content", "content": payload, "attachments": attachments, "communication": person}),
      flush=True)
sys.stdin.read()
"""


def ensure_selenium():
    """Runs this script again inside the venv that has selenium (made on first use)."""
    try:
        import selenium  # noqa: F401
        return
    except ImportError:
        pass
    python = os.path.join(VENV, "bin", "python")
    if os.environ.get("NSE_BROWSER_IN_VENV") == "1":
        raise SystemExit("browser-lockscreen: selenium is not importable in " + VENV)
    if not os.path.exists(python):
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
    if subprocess.run([python, "-c", "import selenium"], capture_output=True).returncode != 0:
        done = subprocess.run([python, "-m", "pip", "install", "--disable-pip-version-check", "-q", SELENIUM],
                              capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            raise SystemExit(f"browser-lockscreen: pip install {SELENIUM} failed: {done.stderr.strip()[-300:]}")
    os.execve(python, [python] + sys.argv, dict(os.environ, NSE_BROWSER_IN_VENV="1"))


def run(argv, stdin=None):
    done = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise SystemExit(f"browser-lockscreen: {' '.join(argv[:3])} failed: {done.stderr.strip()[-300:]}")
    return done.stdout


def post(url, payload, topic, push_type="alert"):
    request = urllib.request.Request(url, data=json.dumps(payload).encode(), method="POST",
                                     headers={"apns-topic": topic, "apns-push-type": push_type})
    with urllib.request.urlopen(request, timeout=30) as answer:
        return answer.status


def check_communication_phone(browser, work, check):
    """A device with the communication entitlement, served with RICH_EXTENSION; returns its `nse serve`."""
    dana = os.path.join(work, "dana-phone")
    run([NSE, "device", "init", dana, "--bundle-id", "org.example.chat"])
    run([NSE, "device", "set", dana, "--entitlements", os.path.join(ROOT, "fixtures/sdk-extensions/App.entitlements")])
    with open(os.path.join(dana, "device.json")) as file:
        remote = json.load(file)["tokens"]["remote"]
    extension = os.path.join(work, "rich_extension.py")
    with open(extension, "w") as file:
        file.write(RICH_EXTENSION)
    serve = subprocess.Popen([NSE, "serve", "--listen", "127.0.0.1:0", "--device", dana,
                              "--extension", f"{shlex.quote(sys.executable)} {shlex.quote(extension)}"],
                             stdout=subprocess.PIPE, stderr=open(os.path.join(work, "serve-dana.log"), "w"), text=True)
    try:
        check_communication_cards(browser, json.loads(serve.stdout.readline())["listening"], dana, remote, check)
    except BaseException:
        serve.kill()
        serve.wait()
        raise
    return serve


def check_communication_cards(browser, url, dana, remote, check):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    push_url = f"{url}/3/device/{remote}"

    def push(rich, body):
        post(push_url, {"aps": {"alert": {"title": "New message", "body": body}, "mutable-content": 1},
                        "rich": rich}, "org.example.chat")

    sent = (("broken", "A picture that does not decode"), ("audio", "A voice message"),
            ("group", "Book club tonight?"), ("direct", "Look at this"))
    for rich, body in sent:
        push(rich, body)
    recorded = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with urllib.request.urlopen(f"{url}/v1/devices/{remote}/notifications", timeout=10) as answer:
            recorded = json.loads(answer.read())
        if len(recorded) >= len(sent):
            break
        time.sleep(0.2)
    outcomes = [r.get("outcome") for r in recorded]
    check(outcomes == ["rewritten"] * len(sent) and all("communication" in r for r in recorded),
          f"the communication notifications recorded ({outcomes})")

    def loaded(image):
        return browser.execute_script("return arguments[0].complete ? arguments[0].naturalWidth : 0;", image)

    def pictures_load(card, what):
        images = card.find_elements(By.CSS_SELECTOR, "img")
        sources = [i.get_attribute("src") for i in images]
        try:
            WebDriverWait(browser, 5, poll_frequency=0.05).until(lambda b: all(loaded(i) > 0 for i in images))
        except Exception:
            pass
        widths = [loaded(i) for i in images]
        shown = [i.is_displayed() for i in images]
        served = all(source.startswith(f"{url}/v1/devices/{remote.lower()}/attachments/") for source in sources)
        check(len(images) > 0 and served and all(w > 0 for w in widths) and all(shown),
              f"{what}: pictures loaded from the attachment route and shown ({sources}, {widths}, {shown})")

    browser.get(url + "/")
    cards = {c.find_element(By.CSS_SELECTOR, ".body").text: c
             for c in browser.find_elements(By.CSS_SELECTOR, ".card .banner.communication")}
    check(sorted(cards) == sorted(body for _, body in sent), f"the communication cards ({sorted(cards)})")
    direct, group, audio = cards.get("Look at this"), cards.get("Book club tonight?"), cards.get("A voice message")
    if direct is not None:
        title = direct.find_element(By.CSS_SELECTOR, ".title").text
        icon = [e.text for e in direct.find_elements(By.CSS_SELECTOR, ".avatar .app-icon")]
        check(title == "Alice" and icon == ["C"],
              f"the sender's name as the title, the app's icon on the avatar ({title!r}, {icon})")
        check(len(direct.find_elements(By.CSS_SELECTOR, ".avatar img.avatar-picture")) == 1
              and len(direct.find_elements(By.CSS_SELECTOR, "img.thumbnail")) == 1, "the avatar and the thumbnail")
        pictures_load(direct, "the direct message")
    if group is not None:
        lines = [e.text for e in group.find_elements(By.CSS_SELECTOR, ".title, .subtitle.group")]
        check(lines == ["Alice", "Book club"], f"the group's name under the sender ({lines})")
        pictures_load(group, "the group message")
    if audio is not None:
        initials = [e.text for e in audio.find_elements(By.CSS_SELECTOR, ".avatar .initials")]
        glyphs = [e.get_attribute("title") for e in audio.find_elements(By.CSS_SELECTOR, ".thumbnail.glyph")]
        check(initials == ["EB"] and glyphs == ["audio"],
              f"initials without a picture, audio as a glyph ({initials}, {glyphs})")
    broken = cards.get("A picture that does not decode")
    if broken is not None:
        pictures = broken.find_elements(By.CSS_SELECTOR, "img.avatar-picture")
        try:
            WebDriverWait(browser, 5, poll_frequency=0.05).until(lambda b: not pictures[0].is_displayed())
        except Exception:
            pass
        initials = [e.text for e in broken.find_elements(By.CSS_SELECTOR, ".avatar .initials") if e.is_displayed()]
        check(len(pictures) == 1 and not pictures[0].is_displayed() and initials == ["FO"],
              f"an avatar that does not decode gives way to the initials ({initials})")
    check(os.path.join(dana, "attachments") not in browser.page_source, "no path of the server's disk in the page")

    # Live: the script builds the same card, pictures included.
    time.sleep(0.5)  # the event stream's first comment has arrived by now
    push("direct", "Live picture")
    try:
        WebDriverWait(browser, 3, poll_frequency=0.05).until(
            lambda b: "Live picture" in b.find_element(By.CSS_SELECTOR, ".notifications").text)
        live = [c for c in browser.find_elements(By.CSS_SELECTOR, ".card .banner.communication")
                if "Live picture" in c.text][0]
        check(len(live.find_elements(By.CSS_SELECTOR, "img.thumbnail")) == 1
              and live.find_element(By.CSS_SELECTOR, ".title").text == "Alice", "the live message's card")
        pictures_load(live, "the live message")
    except Exception as error:
        check(False, f"the live communication notification appeared ({error!r})")
    check(os.path.join(dana, "attachments") not in browser.page_source, "still no path of the disk after it")

    # Local notifications the extension adds appear live as cards of their own; one added again with the same
    # identifier replaces the first, which the page marks (it reads the device's Notification Center).
    def locals_push(text):
        post(push_url, {"aps": {"alert": {"title": "New messages"}, "mutable-content": 1},
                        "locals": [{"id": "m1", "from": "Gina", "text": text}]}, "org.example.chat")

    def local_card(text):
        found = [c for c in browser.find_elements(By.CSS_SELECTOR, "li.card.outcome-local") if text in c.text]
        return found[0] if found else None

    locals_push("Local one")
    try:
        WebDriverWait(browser, 3, poll_frequency=0.05).until(lambda b: local_card("Local one") is not None)
        card = local_card("Local one")
        check("posted by the extension" in card.text and card.find_element(By.CSS_SELECTOR, ".title").text == "Gina",
              "a local notification's live card")
    except Exception as error:
        check(False, f"the local notification appeared live ({error!r})")
    locals_push("Local edited")
    try:
        WebDriverWait(browser, 3, poll_frequency=0.05).until(
            lambda b: local_card("Local edited") is not None
            and "replaced" in (local_card("Local one").get_attribute("class") or ""))
        check("replaced by a newer one" in local_card("Local one").text
              and "replaced" not in local_card("Local edited").get_attribute("class"),
              "the replaced local notification marked, the new one not")
    except Exception as error:
        check(False, f"the replaced local notification was marked live ({error!r})")
    base, extension_name = os.path.splitext(SCREENSHOT)
    shot = base + "-communication" + (extension_name or ".png")
    browser.save_screenshot(shot)
    print(f"browser-lockscreen: screenshot {shot}")


def main():
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    if not chromium or not os.path.exists(driver):
        print("browser-lockscreen: SKIP: no chromium/chromedriver (apt-get install chromium chromium-driver)")
        return 77
    ensure_selenium()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    work = tempfile.mkdtemp(prefix="nse-browser-")
    alice = os.path.join(work, "alice-phone")
    bob = os.path.join(work, "bob-phone")
    run([NSE, "device", "init", alice, "--bundle-id", "org.example.app", "--filtering"])
    run([NSE, "device", "init", bob, "--bundle-id", "org.example.other"])
    # Bob's app registered a category with two buttons, as setNotificationCategories writes it (docs/device.md).
    with open(os.path.join(bob, "notification-categories.json"), "w") as file:
        json.dump({"categories": [{"identifier": "BUILD", "intent_identifiers": [], "options": 0, "actions": [
            {"identifier": "retry", "title": "Retry", "options": 4},
            {"identifier": "delete", "title": "Delete", "options": 2}]}]}, file)
    tokens = {}
    for name, directory in (("alice", alice), ("bob", bob)):
        with open(os.path.join(directory, "device.json")) as file:
            config = json.load(file)
        tokens[name] = (config["tokens"]["remote"], config["tokens"]["voip"], config["bundle_id"])

    def seal(plaintext):
        return run([NSE, "seal", "--device", alice], stdin=json.dumps(plaintext)).strip()

    serve = subprocess.Popen([NSE, "serve", "--listen", "127.0.0.1:0", "--device", alice, "--device", bob],
                             stdout=subprocess.PIPE, stderr=open(os.path.join(work, "serve.log"), "w"), text=True)
    failures = []

    def check(ok, what):
        print(f"{'PASS' if ok else 'FAIL'} {what}", flush=True)
        if not ok:
            failures.append(what)

    browser = None
    rich_serve = None
    try:
        url = json.loads(serve.stdout.readline())["listening"]
        remote, _, topic = tokens["alice"]
        push_url = f"{url}/3/device/{remote}"
        message = {"type": "message", "from": "sip:carol@example.org", "display_name": "Carol",
                   "text": "Lunch at 1?"}
        alert = {"loc-key": "IM_MSG", "loc-args": ["Carol"]}
        post(push_url, {"aps": {"alert": alert, "mutable-content": 1, "badge": 2, "thread-id": "carol"},
                        "enc": seal(message)}, topic)
        post(push_url, {"aps": {"alert": alert, "mutable-content": 1}, "enc": "nse1.not-an-envelope"}, topic)
        post(push_url, {"aps": {"alert": alert, "mutable-content": 1, "thread-id": "carol"},
                        "enc": seal(dict(message, text="Or 12:30?"))}, topic)
        offer = {"type": "call", "call_uuid": "6F1C6D3A-3F0B-4C59-9E55-0B7D4E0E8A11", "from": "sip:dave@example.org",
                 "display_name": "Dave", "video": True}
        post(push_url, {"aps": {"alert": {"loc-key": "IC_MSG", "loc-args": ["Dave"]}, "mutable-content": 1},
                        "enc": seal(offer)}, topic)
        bob_remote, _, bob_topic = tokens["bob"]
        post(f"{url}/3/device/{bob_remote}",
             {"aps": {"alert": {"title": "Build", "body": "nightly passed"}, "category": "BUILD"}}, bob_topic)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with urllib.request.urlopen(f"{url}/v1/devices/{remote}/notifications", timeout=10) as answer:
                if len(json.loads(answer.read())) >= 4:
                    break
            time.sleep(0.2)

        options = webdriver.ChromeOptions()
        options.binary_location = chromium
        for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         "--window-size=1200,1400", f"--user-data-dir={work}/chromium-profile"):
            options.add_argument(argument)
        browser = webdriver.Chrome(service=Service(driver), options=options)
        browser.set_page_load_timeout(30)
        browser.get(url + "/")
        phones = {p.get_attribute("data-remote"): p for p in browser.find_elements(By.CSS_SELECTOR, ".phone")}
        check(len(phones) == 2, f"two phones drawn ({len(phones)})")
        mine, other = phones.get(remote.lower()), phones.get(bob_remote.lower())
        check(mine is not None and other is not None, "each phone found by its token")
        if mine is not None and other is not None:
            bodies = [e.text for e in mine.find_elements(By.CSS_SELECTOR, ".outcome-rewritten .body")]
            check("Or 12:30?" in bodies, f"the rewritten message in alice's phone ({bodies})")
            # Carol's two messages stack as iOS stacks a thread: the newest on top, the other folded.
            stacks = mine.find_elements(By.CSS_SELECTOR, '.stack[data-thread="carol"]')
            folded = stacks[0].find_element(By.CSS_SELECTOR, ".stack-more > summary").text if stacks else ""
            check(len(stacks) == 1 and folded == "1 more", f"carol's thread stacked ({len(stacks)}, {folded!r})")
            if stacks:
                stacks[0].find_element(By.CSS_SELECTOR, ".stack-more > summary").click()
                bodies = [e.text for e in stacks[0].find_elements(By.CSS_SELECTOR, ".stacked .body")]
                check(bodies == ["Lunch at 1?"], f"the older message under the stack ({bodies})")
            check("Lunch at 1?" not in other.text, "and not in bob's")
            marks = mine.find_elements(By.CSS_SELECTOR, ".outcome-fallback .mark")
            check(len(marks) == 1 and "fallback" in marks[0].text, "the fallback marked as such")
            check(any("silenced by the extension" in e.text for e in mine.find_elements(By.CSS_SELECTOR, ".silent")),
                  "the silenced push as a faint line")
            callers = [e.text for e in mine.find_elements(By.CSS_SELECTOR, ".call .caller")]
            kinds = [e.text for e in mine.find_elements(By.CSS_SELECTOR, ".call .call-kind")]
            check(callers == ["Dave"] and kinds == ["Video call"], f"the incoming-call screen ({callers}, {kinds})")
            check("nightly passed" in other.text, "bob's own alert in bob's phone")
            buttons = other.find_elements(By.CSS_SELECTOR, ".actions .action")
            check([b.text for b in buttons] == ["Retry", "Delete"]
                  and "destructive" in (buttons[1].get_attribute("class") or ""),
                  f"its category's buttons under it, the destructive one marked ({[b.text for b in buttons]})")
            badge = mine.find_elements(By.CSS_SELECTOR, ".stacked .outcome-rewritten .badge")
            check(len(badge) == 1 and badge[0].text == "2", "the badge")
            summary = mine.find_element(By.CSS_SELECTOR, ".stack-top .outcome-rewritten details summary")
            summary.click()
            terms = [e.text for e in mine.find_elements(By.CSS_SELECTOR, ".stack-top .outcome-rewritten dl.timeline dt")]
            check("extension" in terms and "peak memory" in terms and "queued" in terms,
                  f"the detail panel's timeline ({terms})")
            document = mine.find_element(By.CSS_SELECTOR, ".stack-top .outcome-rewritten pre.document").text
            check("nse1." not in document or "\u2026" in document, "the enc blob shortened in the document")

            # Live: a push while the page is open appears within 2 s, without a reload.
            time.sleep(0.5)  # the event stream's first comment has arrived by now
            started = time.monotonic()
            post(push_url, {"aps": {"alert": alert, "mutable-content": 1, "thread-id": "carol"},
                            "enc": seal(dict(message, text="Running late, 1:15"))}, topic)
            try:
                WebDriverWait(browser, 2.0, poll_frequency=0.05).until(
                    lambda b: "Running late, 1:15" in b.find_element(
                        By.CSS_SELECTOR, f'.phone[data-remote="{remote.lower()}"] .notifications').text)
                check(True, f"a live push appeared in {(time.monotonic() - started) * 1000:.0f} ms")
            except Exception:
                check(False, "a live push appeared within 2 s")
            stack = mine.find_elements(By.CSS_SELECTOR, '.stack[data-thread="carol"]')
            tops = [e.text for e in stack[0].find_elements(By.CSS_SELECTOR, ".stack-top .body")] if stack else []
            folded = stack[0].find_element(By.CSS_SELECTOR, ".stack-more > summary").text if stack else ""
            first = mine.find_element(By.CSS_SELECTOR, ".notifications > *")
            check(tops == ["Running late, 1:15"] and folded == "2 more" and first.get_attribute("data-thread") == "carol",
                  f"the live push on top of carol's stack, which moved up ({tops}, {folded!r})")
            # A live card with its category's buttons, drawn by the script.
            post(f"{url}/3/device/{bob_remote}",
                 {"aps": {"alert": {"title": "Build", "body": "nightly failed"}, "category": "BUILD"}}, bob_topic)
            try:
                WebDriverWait(browser, 5.0, poll_frequency=0.05).until(lambda b: "nightly failed" in other.text)
                live = other.find_elements(By.CSS_SELECTOR, ".notifications > *")[0]
                titles = [b.text for b in live.find_elements(By.CSS_SELECTOR, ".actions .action")]
                check(titles == ["Retry", "Delete"], f"the live card's category buttons ({titles})")
            except Exception as error:
                check(False, f"bob's live push with its buttons appeared within 5 s ({error})")
        os.makedirs(os.path.dirname(SCREENSHOT), exist_ok=True)
        browser.save_screenshot(SCREENSHOT)
        print(f"browser-lockscreen: screenshot {SCREENSHOT}")

        rich_serve = check_communication_phone(browser, work, check)
    finally:
        if browser is not None:
            browser.quit()
        if rich_serve is not None:
            rich_serve.send_signal(signal.SIGTERM)
            try:
                check(rich_serve.wait(timeout=15) == 0, "the communication phone's nse serve exited 0 on SIGTERM")
            except subprocess.TimeoutExpired:
                rich_serve.kill()
                rich_serve.wait()
                check(False, "the communication phone's nse serve exited on SIGTERM")
        serve.send_signal(signal.SIGTERM)
        try:
            code = serve.wait(timeout=15)
        except subprocess.TimeoutExpired:
            serve.kill()
            code = serve.wait()
        check(code == 0, f"nse serve exited {code} on SIGTERM")
    if failures:
        print(f"browser-lockscreen: {len(failures)} failed; kept {work}")
        return 1
    shutil.rmtree(work, ignore_errors=True)
    print("browser-lockscreen: all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
