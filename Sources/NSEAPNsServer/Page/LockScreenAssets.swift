/// The lock-screen page's style and script, embedded in the binary (no CDN, no build step).
enum LockScreenAssets {
    static let css = """
        :root { color-scheme: light dark; --bg: #eef0f4; --phone: #1c2230; --card: rgba(255,255,255,.86);
          --ink: #111; --faint: #8b93a3; --accent: #0a84ff; }
        @media (prefers-color-scheme: dark) { :root { --bg: #0d0f14; --phone: #262d3d; --card: rgba(44,48,58,.92);
          --ink: #f2f2f7; --faint: #9aa1b0; } }
        * { box-sizing: border-box; }
        body { margin: 0; font: 15px/1.35 system-ui, -apple-system, "DejaVu Sans", sans-serif; background: var(--bg);
          color: var(--ink); }
        header { padding: 12px 20px; } header h1 { margin: 0; font-size: 20px; } header p { margin: 4px 0 0;
          color: var(--faint); }
        main { display: flex; flex-wrap: wrap; gap: 24px; padding: 0 20px 24px; }
        .phone { width: 360px; max-width: 100%; min-height: 560px; border-radius: 40px; padding: 18px 14px;
          background: linear-gradient(160deg, var(--phone), #4b5a7a); color: #fff; box-shadow: 0 8px 30px #0004; }
        .status { display: flex; gap: 8px; flex-wrap: wrap; font-size: 12px; opacity: .85; }
        .device-name { font-weight: 600; } .entitlements { margin-left: auto; }
        .clock { font-size: 54px; font-weight: 200; text-align: center; margin: 8px 0 12px; }
        .notifications { list-style: none; margin: 0; padding: 0; display: flex; flex-direction: column; gap: 8px; }
        .card { background: var(--card); color: var(--ink); border-radius: 16px; padding: 10px 12px; position: relative; }
        .stack { list-style: none; } .stack ol { list-style: none; margin: 0; padding: 0; display: flex;
          flex-direction: column; gap: 6px; }
        .stack-top > .card { box-shadow: 0 6px 0 -2px var(--card), 0 12px 0 -5px rgba(255,255,255,.45); }
        .stack-more > summary { color: #fff; opacity: .8; font-size: 12px; margin: 8px 0 2px 6px; }
        .app { display: flex; justify-content: space-between; font-size: 12px; color: var(--faint);
          text-transform: uppercase; }
        .banner { display: flex; gap: 10px; align-items: flex-start; } .banner > .text { flex: 1; min-width: 0; }
        .title { font-weight: 600; } .subtitle { font-weight: 500; } .body { white-space: pre-wrap; }
        .avatar { position: relative; flex: none; width: 40px; height: 40px; margin-top: 2px; }
        .avatar-picture, .initials { display: block; width: 40px; height: 40px; border-radius: 50%; object-fit: cover; }
        .avatar-picture { position: absolute; top: 0; left: 0; } img.broken { display: none; }
        .initials { display: flex; align-items: center; justify-content: center; color: #fff; font-size: 16px;
          font-weight: 600; background: linear-gradient(#a5abb8, #858994); }
        .initials.silhouette { background: radial-gradient(circle at 50% 38%, #fff 0 7px, transparent 7.5px),
          radial-gradient(13px 10px at 50% 100%, #fff 98%, transparent 100%), linear-gradient(#a5abb8, #858994); }
        .app-icon { position: absolute; right: -4px; bottom: -4px; width: 16px; height: 16px; border-radius: 4px;
          display: flex; align-items: center; justify-content: center; background: var(--accent); color: #fff;
          font-size: 9px; font-weight: 700; box-shadow: 0 0 0 1.5px var(--card); }
        .thumbnail { flex: none; align-self: center; width: 44px; height: 44px; border-radius: 8px; object-fit: cover; }
        .save-case { display: inline-block; margin: 4px 0; font-size: 12px; }
        .media-line { font-size: 13px; opacity: 0.8; font-variant-numeric: tabular-nums; }
        .thumbnail.glyph { display: flex; align-items: center; justify-content: center; font-size: 20px;
          background: #8882; }
        .badge { position: absolute; top: -6px; right: -6px; background: #ff3b30; color: #fff; border-radius: 10px;
          padding: 0 7px; font-size: 12px; }
        .mark { margin-top: 4px; font-size: 12px; color: #c77700; } .mark.standing, .mark.hidden-preview { color: var(--faint); }
        .card.removed, .card.replaced { opacity: .55; }
        .actions { display: flex; flex-wrap: wrap; gap: 6px; margin-top: 8px; border-top: 1px solid #8883;
          padding-top: 6px; }
        .action { font: inherit; font-size: 13px; color: var(--accent); background: #8881; border: 0;
          border-radius: 10px; padding: 3px 10px; } .action.destructive { color: #ff3b30; }
        .app-badge { background: #ff3b30; color: #fff; border-radius: 10px; padding: 0 7px; font-weight: 600; }
        .app-badge[hidden] { display: none; }
        .silent { font-size: 12px; color: var(--faint); font-style: italic; }
        .activities { list-style: none; margin: 0 0 10px; padding: 0; display: flex; flex-direction: column; gap: 8px; }
        .activity { background: var(--card); color: var(--ink); border-radius: 18px; padding: 10px 12px; }
        .activity-head { display: flex; justify-content: space-between; font-size: 12px; font-weight: 600; }
        .activity-phase { text-transform: uppercase; color: #1f7a3a; } .phase-stale .activity-phase { color: #c77700; }
        .phase-ended { opacity: .7; } .phase-ended .activity-phase { color: var(--faint); }
        dl.content-state { display: grid; grid-template-columns: auto 1fr; gap: 2px 10px; margin: 6px 0 4px; }
        .activity-meta { font-size: 11px; color: var(--faint); }
        .card.outcome-suppressed, .card.outcome-expired, .card.outcome-replaced { background: transparent;
          color: #fff; padding: 2px 12px; }
        .call { display: flex; flex-direction: column; align-items: center; gap: 2px; padding: 10px;
          background: #1f7a3a; color: #fff; border-radius: 14px; margin-bottom: 6px; }
        .caller { font-size: 22px; font-weight: 600; } .call-kind, .end-reason { font-size: 12px; opacity: .9; }
        details { margin-top: 6px; font-size: 12px; } summary { cursor: pointer; color: var(--accent); }
        dl.timeline { display: grid; grid-template-columns: auto 1fr; gap: 2px 10px; margin: 6px 0; }
        dt { color: var(--faint); } dd { margin: 0; overflow-wrap: anywhere; }
        pre.document { max-height: 220px; overflow: auto; font-size: 11px; background: #0001; padding: 6px;
          border-radius: 8px; }
        form.send { margin-top: 14px; display: flex; flex-direction: column; gap: 6px; font-size: 12px; }
        form.send textarea { width: 100%; font: 12px monospace; border-radius: 8px; }
        form.send button { align-self: flex-start; border: 0; border-radius: 8px; padding: 6px 12px;
          background: var(--accent); color: #fff; }
        .live { font-size: 12px; color: var(--faint); }
        """

    /// Follows `/v1/events` (the browser reconnects by itself after a restart) and puts each new result at the top
    /// of its phone, built with DOM calls and `textContent` only; sends the test push of a phone's form.
    static let script = """
        (function () {
          "use strict";
          function phoneFor(token) {
            var phones = document.querySelectorAll(".phone");
            for (var i = 0; i < phones.length; i++) {
              if (phones[i].dataset.remote === token || phones[i].dataset.voip === token) { return phones[i]; }
            }
            return null;
          }
          function el(tag, cls, text) {
            var node = document.createElement(tag);
            if (cls) { node.className = cls; }
            if (text !== undefined && text !== null) { node.textContent = String(text); }
            return node;
          }
          function clock(ms) {
            if (!ms) { return "--:--"; }
            return new Date(ms).toISOString().slice(11, 19);
          }
          function shorten(value) {
            if (typeof value === "string" && value.length > 120 && value.indexOf(" ") < 0) {
              return value.slice(0, 24) + "\\u2026";
            }
            if (Array.isArray(value)) { return value.map(shorten); }
            if (value && typeof value === "object") {
              var copy = {};
              Object.keys(value).forEach(function (k) { copy[k] = shorten(value[k]); });
              return copy;
            }
            return value;
          }
          // The result's stored files as URLs of /v1/devices/{token}/attachments/{request}/{file}, by the rule the
          // server's page uses (AttachmentFiles.url): never a path of the server's disk in the page.
          function servable(name) {
            return name.length > 0 && name.charAt(0) !== "." && !/[\\/\\u0000-\\u001f\\u007f]/.test(name) &&
              new TextEncoder().encode(name).length <= 255;
          }
          function encode(text) {
            return encodeURIComponent(text).replace(/[!'()*]/g, function (c) {
              return "%" + c.charCodeAt(0).toString(16).toUpperCase();
            });
          }
          function fileURL(token, path) {
            if (!token || typeof path !== "string") { return null; }
            var parts = path.split("/");
            if (parts.length < 4 || parts[parts.length - 3] !== "attachments") { return null; }
            var request = parts[parts.length - 2], file = parts[parts.length - 1];
            if (!servable(request) || !servable(file)) { return null; }
            return "/v1/devices/" + encode(token) + "/attachments/" + encode(request) + "/" + encode(file);
          }
          function str(value) { return typeof value === "string" ? value : ""; }
          // The document with its stored files' paths as their URLs, or their names alone (LockScreenPage.linked).
          function linked(result, token) {
            if (!result || typeof result !== "object" || Array.isArray(result)) { return result; }
            function link(value) {
              if (typeof value !== "string") { return value; }
              var trimmed = value.replace(/\\/+$/, "");
              return fileURL(token, value) || (trimmed ? trimmed.slice(trimmed.lastIndexOf("/") + 1) : value);
            }
            var copy = Object.assign({}, result);
            if (Array.isArray(result.attachments)) {
              copy.attachments = result.attachments.map(function (item) {
                if (!item || typeof item !== "object" || Array.isArray(item) || !("path" in item)) { return item; }
                return Object.assign({}, item, { path: link(item.path) });
              });
            }
            var c = result.communication;
            if (c && typeof c === "object" && !Array.isArray(c)) {
              copy.communication = Object.assign({}, c);
              ["avatar_path", "group_avatar_path"].forEach(function (k) {
                if (k in c) { copy.communication[k] = link(c[k]); }
              });
            }
            return copy;
          }
          // What a communication notification shows of its sender and conversation (LockScreenPage.Conversation).
          function conversation(c) {
            if (!c || typeof c !== "object" || Array.isArray(c)) { return null; }
            var groupName = str(c.group_name);
            var group = groupName && typeof c.recipient_count === "number" && c.recipient_count > 1 ? groupName : null;
            return { sender: str(c.sender_name) || str(c.sender_handle), group: group,
              picture: (group && str(c.group_avatar_path)) || str(c.avatar_path) || null };
          }
          function firstCharacter(word) {
            if (window.Intl && Intl.Segmenter) {
              var first = new Intl.Segmenter().segment(word)[Symbol.iterator]().next();
              return first.done ? "" : first.value.segment;
            }
            return Array.from(word)[0] || "";
          }
          function initials(name) {
            var words = name.split(/\\s+/).filter(function (w) { return w.length > 0; });
            var picks = words.length > 1 ? [words[0], words[words.length - 1]] : words;
            var letters = "";
            picks.forEach(function (w) {
              var first = firstCharacter(w);
              if (/^\\p{Alphabetic}/u.test(first)) { letters += first.toUpperCase(); }
            });
            return letters;
          }
          function appInitial(bundle) {
            var parts = String(bundle).split(".").filter(function (p) { return p.length > 0; });
            var first = parts.length ? firstCharacter(parts[parts.length - 1]) : "";
            return first ? first.toUpperCase() : "?";
          }
          // A picture that does not decode is taken away (the initials under an avatar show again), as iOS shows
          // no broken image. Called once its src is set: an img without one is complete, with no width.
          function hideWhenBroken(image) {
            image.addEventListener("error", function () { image.classList.add("broken"); });
            if (image.complete && image.naturalWidth === 0) { image.classList.add("broken"); }
            return image;
          }
          document.querySelectorAll("img.avatar-picture, img.thumbnail").forEach(hideWhenBroken);
          function avatar(who, appName, token) {
            var box = el("div", "avatar");
            var letters = initials(who.sender);
            box.appendChild(letters ? el("span", "initials", letters) : el("span", "initials silhouette"));
            var url = fileURL(token, who.picture);
            if (url) {
              var picture = el("img", "avatar-picture");
              picture.alt = "";
              picture.src = url;
              box.appendChild(hideWhenBroken(picture));
            }
            box.appendChild(el("span", "app-icon", appInitial(appName)));
            return box;
          }
          function thumbnail(attachments, token) {
            var first = Array.isArray(attachments) ? attachments[0] : null;
            if (!first || typeof first !== "object" || first.thumbnail_hidden === true) { return null; }
            if (first.kind === "image") {
              var url = fileURL(token, first.path);
              if (!url) { return null; }
              var image = el("img", "thumbnail");
              image.alt = "";
              image.src = url;
              return hideWhenBroken(image);
            }
            var glyphs = { audio: "\\u266A", movie: "\\u25B6" };
            if (!glyphs.hasOwnProperty(first.kind)) { return null; }
            var glyph = el("span", "thumbnail glyph", glyphs[first.kind]);
            glyph.title = first.kind;
            return glyph;
          }
          function mediaLine(attachments) {
            var first = (Array.isArray(attachments) ? attachments : []).filter(function (item) {
              return item && (item.kind === "audio" || item.kind === "movie");
            })[0];
            if (!first) { return null; }
            var glyph = first.kind === "audio" ? "\\u266A" : "\\u25B6";
            if (typeof first.duration !== "number" || !isFinite(first.duration) || first.duration < 0) {
              return glyph + (first.kind === "audio" ? " voice note" : " video");
            }
            var whole = Math.round(first.duration), hours = Math.floor(whole / 3600);
            var minutes = Math.floor(whole / 60) % 60, seconds = whole % 60;
            var text = (seconds < 10 ? "0" : "") + seconds;
            text = hours > 0 ? hours + ":" + (minutes < 10 ? "0" : "") + minutes + ":" + text : minutes + ":" + text;
            return glyph + " " + text;
          }
          // The identifier Notification Center knows a card's notification by (a local notification's own, a push's
          // collapse id or request id); none for a card that showed nothing.
          function centerIdentifier(result) {
            if (!result.display) { return null; }
            if (result.outcome === "local") { return str(result.identifier); }
            return str(result.collapse_id) || str(result.request_id) || null;
          }
          // A local notification the push's extension showed, as a card of its own.
          function localCard(local, index, result) {
            var aps = {};
            if (local.thread_id) { aps["thread-id"] = local.thread_id; }
            return { outcome: "local", identifier: str(local.identifier), display: local.display,
              notification: { aps: aps }, recorded_at: result.recorded_at,
              apns_id: str(result.apns_id) + "#" + index, preview_hidden: local.preview_hidden === true,
              hidden_preview: local.hidden_preview, actions: local.actions,
              reason: "local: added by the extension with UNUserNotificationCenter.add" };
          }
          // Marks the phone's cards Notification Center no longer shows (removed, or replaced by a newer one with
          // the same identifier) and shows the app's badge, from GET /v1/devices/{token}/notification-center.
          // Within one push: its own card is the newest, then its local notifications, the last added first.
          function rank(card) {
            var at = card.dataset.id.indexOf("#");
            return at < 0 ? 1e9 : Number(card.dataset.id.slice(at + 1));
          }
          function standing(phone, center) {
            var shown = {};
            (center.delivered || []).forEach(function (n) { shown[n.identifier] = true; });
            var cards = Array.prototype.slice.call(phone.querySelectorAll("li.card[data-nc]"));
            cards.sort(function (a, b) {
              var order = Number(b.dataset.at || 0) - Number(a.dataset.at || 0);
              return order || rank(b) - rank(a);
            });
            var seen = {};
            cards.forEach(function (c) {
              var id = c.dataset.nc, state = null;
              if (seen[id]) { state = "replaced"; } else { seen[id] = true; if (!shown[id]) { state = "removed"; } }
              c.classList.remove("removed", "replaced");
              c.querySelectorAll(".mark.standing").forEach(function (old) { old.parentNode.removeChild(old); });
              var text = c.querySelector(".text");
              if (state && text) {
                c.classList.add(state);
                text.appendChild(el("div", "mark standing",
                  state === "removed" ? "removed from Notification Center" : "replaced by a newer one"));
              }
            });
            var badge = phone.querySelector(".app-badge");
            if (badge) {
              badge.textContent = center.badge > 0 ? String(center.badge) : "";
              badge.hidden = !(center.badge > 0);
            }
          }
          function card(result, appName, token) {
            var outcome = result.outcome || "unknown";
            var aps = (result.notification && result.notification.aps) || {};
            var li = el("li", "card outcome-" + outcome);
            li.dataset.thread = aps["thread-id"] || "";
            li.dataset.id = result.apns_id || "";
            var nc = centerIdentifier(result);
            if (nc !== null) { li.dataset.nc = nc; li.dataset.at = String(result.recorded_at || 0); }
            var report = result.call_report;
            if (report) {
              var call = el("div", "call");
              call.appendChild(el("span", "call-kind", report.has_video ? "Video call" : "Audio call"));
              var name = report.localized_caller_name ||
                (report.remote_handle && report.remote_handle.value) || "Unknown caller";
              call.appendChild(el("span", "caller", name));
              if (result.call && result.call.end_reason) {
                call.appendChild(el("span", "end-reason", "ended: " + result.call.end_reason));
              }
              li.appendChild(call);
            }
            var display = result.display;
            if (display) {
              var hidden = result.preview_hidden === true;
              var who = hidden ? null : conversation(result.communication);
              var banner = el("div", who ? "banner communication" : "banner");
              if (who) { banner.appendChild(avatar(who, appName, token)); }
              var text = el("div", "text");
              var app = el("div", "app");
              app.appendChild(el("span", null, appName));
              app.appendChild(el("time", null, clock(result.recorded_at)));
              text.appendChild(app);
              var lines = [];
              if (hidden) {
                var shown = result.hidden_preview || {};
                lines.push(["title", str(shown.title)], ["subtitle", str(shown.subtitle)],
                  ["body", str(shown.body) || "Notification"]);
              } else if (who) {
                lines.push(["title", who.sender || str(display.title)]);
                if (who.group) { lines.push(["subtitle group", who.group]); }
              } else {
                lines.push(["title", str(display.title)]);
              }
              if (!hidden) { lines.push(["subtitle", str(display.subtitle)], ["body", str(display.body)]); }
              lines.forEach(function (line) { if (line[1]) { text.appendChild(el("div", line[0], line[1])); } });
              if (hidden) { text.appendChild(el("div", "mark hidden-preview", "preview hidden (Show Previews)")); }
              var media = hidden ? null : mediaLine(result.attachments);
              if (media) { text.appendChild(el("div", "media-line", media)); }
              if (typeof aps.badge === "number") { text.appendChild(el("span", "badge", aps.badge)); }
              var word = String(result.reason || "").split(":")[0];
              if (outcome === "local") {
                text.appendChild(el("div", "mark", "posted by the extension"));
              } else if (outcome === "fallback") {
                text.appendChild(el("div", "mark", "fallback: the extension could not rewrite it"));
              } else if (outcome === "original") {
                text.appendChild(el("div", "mark", "shown as sent: " + word));
              }
              banner.appendChild(text);
              var thumb = hidden ? null : thumbnail(result.attachments, token);
              if (thumb) { banner.appendChild(thumb); }
              li.appendChild(banner);
              var actions = Array.isArray(result.actions) ? result.actions : [];
              if (actions.length > 0) {
                var buttonRow = el("div", "actions");
                actions.forEach(function (action) {
                  var options = Array.isArray(action.options) ? action.options.map(String) : [];
                  var title = str(action.title);
                  var input = action.text_input || {};
                  if (str(input.button_title)) { title += " … " + str(input.button_title); }
                  var button = el("button", ["action"].concat(options).join(" "), title);
                  button.type = "button";
                  button.disabled = true;
                  buttonRow.appendChild(button);
                });
                li.appendChild(buttonRow);
              }
            } else {
              var lines = { suppressed: "silenced by the extension", expired: "expired: APNs dropped it",
                replaced: "replaced by a newer push while offline" };
              var silent = el("div", "silent", lines[outcome] ||
                (outcome === "rejected" ? "rejected: " + String(result.reason || "").split(":")[0] : outcome));
              silent.appendChild(document.createTextNode(" "));
              silent.appendChild(el("time", null, clock(result.recorded_at)));
              li.appendChild(silent);
            }
            var details = el("details");
            details.appendChild(el("summary", null, "details"));
            if (typeof result["case"] === "string" && /^[0-9]{14}-[0-9a-f]{1,8}$/.test(result["case"])) {
              var save = el("a", "save-case", "save as case");
              save.href = "/v1/cases/" + result["case"];
              save.setAttribute("download", result["case"] + ".json");
              details.appendChild(save);
            }
            var dl = el("dl", "timeline");
            function row(name, value) {
              if (value === undefined || value === null) { return; }
              dl.appendChild(el("dt", null, name));
              dl.appendChild(el("dd", null, value));
            }
            var ext = result.extension || {};
            row("queued", result.queued_ms !== undefined ? result.queued_ms + " ms" : null);
            row("extension", ext.wall_ms !== undefined ? ext.wall_ms + " ms" : null);
            row("peak memory", ext.peak_rss_kb !== undefined ? ext.peak_rss_kb + " KB" : null);
            var sip = (ext.info && ext.info.sip_timings) || {};
            Object.keys(sip).forEach(function (k) { row("SIP " + k.replace(/_/g, " "), JSON.stringify(sip[k])); });
            if (ext.info && ext.info.call_id) { row("SIP Call-ID", ext.info.call_id); }
            if (ext.time_will_expire_sent) { row("expiry notice", "sent"); }
            row("verdict", result.latency_ms !== undefined ? result.latency_ms + " ms after acceptance" : null);
            var steps = (result.call && result.call.timeline_ms) || {};
            Object.keys(steps).forEach(function (k) { row("call " + k.replace(/_/g, " "), steps[k] + " ms"); });
            if (result.call && result.call.end_reason) { row("call ended", result.call.end_reason); }
            row("reason", result.reason);
            details.appendChild(dl);
            details.appendChild(el("pre", "document", JSON.stringify(shorten(linked(result, token)), null, 2)));
            li.appendChild(details);
            return li;
          }
          // A new notification joins its thread's stack (made if the thread had one notification), which moves to
          // the top, as iOS stacks them; without a thread it stands alone.
          function stackWith(list, fresh) {
            var thread = fresh.dataset.thread;
            if (!thread) { return fresh; }
            var found = null;
            for (var i = 0; i < list.children.length; i++) {
              if (list.children[i].dataset.thread === thread) { found = list.children[i]; break; }
            }
            if (!found) { return fresh; }
            var stack = found;
            if (!found.classList.contains("stack")) {
              stack = el("li", "stack");
              stack.dataset.thread = thread;
              stack.appendChild(el("ol", "stack-top"));
              var more = el("details", "stack-more");
              more.appendChild(el("summary", null, "0 more"));
              more.appendChild(el("ol", "stacked"));
              stack.appendChild(more);
              list.replaceChild(stack, found);
              stack.querySelector(".stack-top").appendChild(found);
            }
            var top = stack.querySelector(".stack-top");
            var stacked = stack.querySelector(".stacked");
            while (top.firstChild) { stacked.insertBefore(top.lastChild, stacked.firstChild); }
            top.appendChild(fresh);
            stack.querySelector(".stack-more > summary").textContent = stacked.children.length + " more";
            return stack;
          }
          if (window.EventSource) {
            var events = new EventSource("/v1/events");
            events.addEventListener("notification", function (event) {
              var result;
              try { result = JSON.parse(event.data); } catch (e) { return; }
              var phone = phoneFor(String(result.token || "").toLowerCase());
              if (!phone) { return; }
              var list = phone.querySelector(".notifications");
              if (list.querySelector('[data-id="' + (result.apns_id || "").replace(/"/g, "") + '"]')) { return; }
              var locals = (Array.isArray(result.local_notifications) ? result.local_notifications : [])
                .filter(function (local) { return local && local.shown === true; });
              locals.concat([null]).forEach(function (local, index) {
                var shown = local ? localCard(local, index, result) : result;
                var fresh = card(shown, phone.dataset.topic, phone.dataset.remote);
                list.insertBefore(stackWith(list, fresh), list.firstChild);
              });
              phone.querySelector(".clock").textContent = clock(result.recorded_at);
              var token = encodeURIComponent(phone.dataset.remote);
              fetch("/v1/devices/" + token + "/notification-center")
                .then(function (r) { return r.ok ? r.json() : null; })
                .then(function (center) { if (center) { standing(phone, center); } })
                .catch(function () {});
            });
          }
          document.querySelectorAll("form.send").forEach(function (form) {
            form.addEventListener("submit", function (event) {
              event.preventDefault();
              var phone = form.closest(".phone");
              var answer = form.querySelector(".answer");
              fetch(form.getAttribute("action"), { method: "POST", body: form.elements.payload.value,
                headers: { "apns-topic": phone.dataset.topic, "apns-push-type": "alert" } })
                .then(function (r) { return r.text().then(function (t) { answer.textContent = r.status + " " + t; }); })
                .catch(function (e) { answer.textContent = String(e); });
            });
          });
        })();
        """
}
