// SPDX-License-Identifier: GPL-3.0-or-later
//
// The owner's page: gaend's Manager1 on the system bus through cockpit.dbus, as the logged-in
// user, under gaend's D-Bus policy and polkit. Every call it makes is listed in docs/cockpit.md;
// it has no other way in. Plain JavaScript, no build step.
/* global cockpit */
"use strict";

const SERVICE = "org.gaend";
const PATH = "/org/gaend/Manager";
const IFACE = "org.gaend.Manager1";
const DAY = 86400;

let client = null;
let manager = null;
let sharing = null; // the test result being shared: {id, type, date, onset}

function $(id) { return document.getElementById(id); }

function text(id, value) { $(id).textContent = value; }

function show(id, message) {
    const element = $(id);
    element.textContent = message || "";
    element.hidden = !message;
}

// What gaend's errors mean, as a lead before their own message (which says why).
const ERROR_LEADS = {
    VerificationFailed: "Verification failed",
    PublishFailed: "Publishing the keys failed",
    ClockUntrusted: "The clock is not trusted yet",
    NotConfigured: "Not configured",
    NotAuthorized: "Not authorized",
    NotEnabled: "Exposure Notification was never turned on",
    RateLimited: "No more checks allowed for now",
    InProgress: "A check is already running",
    BadParameter: "Not accepted",
    Failed: "Failed",
    Internal: "gaend failed",
};

// gaend's errors carry their reason in words; the bus's own refusals are named for the owner
// (dbus-daemon's message lists the rules, which helps nobody reading the page).
function describe(error) {
    if (!error) return "";
    const name = error.name || "";
    if (name === "org.freedesktop.DBus.Error.AccessDenied")
        return "Not allowed: only root and members of group gaend may do this.";
    if (name === "org.freedesktop.DBus.Error.ServiceUnknown" || error.problem === "not-found")
        return "gaend is not running.";
    const short = name.startsWith("org.gaend.Error.") ? name.slice("org.gaend.Error.".length) : "";
    const lead = ERROR_LEADS[short] || short;
    const message = error.message || error.problem || String(error);
    return lead ? lead + ": " + message : message;
}

function dayText(day) {
    return new Date(day + "T00:00:00Z").toLocaleDateString("en-GB", { day: "numeric", month: "long", timeZone: "UTC" });
}

function timeText(seconds) {
    if (!seconds) return "never";
    return new Date(seconds * 1000).toLocaleString("en-GB", {
        day: "numeric", month: "short", hour: "2-digit", minute: "2-digit", timeZone: "UTC", timeZoneName: "short"
    });
}

function count(number) { return Number(number || 0).toLocaleString("en-GB"); }

function ago(seconds) {
    if (!seconds) return "";
    const minutes = Math.round((Date.now() / 1000 - seconds) / 60);
    if (minutes < 1) return " (just now)";
    if (minutes < 120) return " (" + minutes + " min ago)";
    return " (" + Math.round(minutes / 60) + " h ago)";
}

// ---- At a glance -----------------------------------------------------------------------------

// The status's name; StatusReason says why when it is not active.
const STATUS_WORDS = {
    active: "Active: advertising and listening",
    disabled: "Off",
    "bluetooth-off": "Bluetooth off",
    paused: "Paused",
    unknown: "Starting",
    scanning: "Listening only, nothing broadcast",
    restricted: "Restricted",
};

function renderAnswer(p) {
    if (!("ExposureDays" in p)) {
        // GetAll leaves the answer out for users outside the owner's group (health data).
        text("answer", "The exposure answer is shown to its owner only");
        text("answer-detail", "Log in as root or as a member of group gaend to see it.");
        $("answer-card").className = "card answer unknown";
        return;
    }
    const days = p.ExposureDays || [];
    if (days.length === 0 && !p.LastDetectionTime) {
        // Nothing was checked: "no exposure" would be an answer gaend has not given.
        text("answer", "Not checked yet");
        text("answer-detail", "The answer appears after the first check of the key server's files.");
        $("answer-card").className = "card answer unknown";
        return;
    }
    if (days.length === 0 && p.LastDetectionError) {
        // A refused key file or a failed check: nothing found is not "no exposure".
        text("answer", "Not fully checked");
        text("answer-detail", "No exposure was found in what was checked, but the last check failed: " + p.LastDetectionError + ".");
        $("answer-card").className = "card answer unknown";
        return;
    }
    if (days.length === 0) {
        text("answer", "No exposure in the last 14 days");
        text("answer-detail", "As of the check on " + timeText(p.LastDetectionTime) + ".");
        $("answer-card").className = "card answer clear";
        return;
    }
    let sentence = "Exposure on " + dayText(days[days.length - 1]);
    if (p.ExposureClassification > 0) {
        sentence += ", classification " + p.ExposureClassification;
        if (p.ExposureClassificationName) sentence += " (" + p.ExposureClassificationName + ")";
    }
    text("answer", sentence);
    const others = days.length > 1 ? "Exposure days: " + days.map(dayText).join(", ") + ". " : "";
    text("answer-detail", others + "Follow your health authority's advice.");
    $("answer-card").className = "card answer exposed";
}

function render() {
    const p = manager.data || {};
    if (!manager.valid) {
        text("answer", "gaend is not reachable");
        text("answer-detail", "The service org.gaend is not on the system bus.");
        $("answer-card").className = "card answer unknown";
        return;
    }
    renderAnswer(p);
    const words = STATUS_WORDS[p.Status] || p.Status || "–";
    text("status", p.StatusReason ? words + ": " + p.StatusReason : words);
    let clock = p.ClockTrusted ? "Trusted" : "Not trusted: nothing is broadcast or recorded on it";
    // The key server's Date has whole seconds: under two seconds apart is as good as agreeing.
    if (Math.abs(p.ClockOffset || 0) >= 2000)
        clock += "; the key server's clock is " + Math.round(Math.abs(p.ClockOffset) / 1000) + " s " + (p.ClockOffset > 0 ? "ahead" : "behind");
    text("clock", clock);
    text("advertising", p.Advertising ? "Since " + timeText(p.AdvertisingSince) + (p.NextRotation ? "; next rotation " + timeText(p.NextRotation) : "") : "No");
    text("radio", p.RadioBackend || "none");
    text("sightings", count(p.SightingsToday) + " sightings" + (p.HeldSightings ? ", " + count(p.HeldSightings) + " held until the clock is trusted" : ""));
    text("key-server", p.KeyServer || "none configured");
    text("version", (p.Version || "–") + (p.Region ? ", region " + p.Region : ""));

    text("last-run", timeText(p.LastDetectionTime) + ago(p.LastDetectionTime));
    text("last-outcome", p.LastDetectionTime ? (p.LastDetectionError ? "Failed: " + p.LastDetectionError : "Succeeded") : "–");
    text("next-run", p.NextDetectionTime ? timeText(p.NextDetectionTime) + "; " + p.DetectionsRemaining + " runs left today" : "not scheduled");

    text("consent-state", p.Enabled
        ? "Exposure Notification is on (authorization: " + p.AuthorizationStatus + ")."
        : "Exposure Notification is off (authorization: " + p.AuthorizationStatus + ").");
    text("toggle-enabled", p.Enabled ? "Turn off" : "Turn on");
}

// ---- What was heard ----------------------------------------------------------------------------

const SVG = "http://www.w3.org/2000/svg";

function svg(name, attributes) {
    const element = document.createElementNS(SVG, name);
    for (const key in attributes) element.setAttribute(key, attributes[key]);
    return element;
}

let lastHeard = null;

// Sightings per UTC hour over the 14 days, one bar an hour, a tick at each UTC midnight. Drawn at
// the chart's own width in pixels, so that labels keep their size on a phone (fewer of them).
function drawHeard(heard) {
    lastHeard = heard;
    const hours = heard.hours || [];
    const chart = $("heard-chart");
    chart.replaceChildren();
    // The busiest hour's count is written above the bars, the days below them.
    const width = Math.max(240, chart.clientWidth || 700), height = 170, top = 20, bottom = 22;
    const labelEvery = width < 480 ? 3 : width < 800 ? 2 : 1;
    let midnights = 0;
    const most = Math.max(1, ...hours.map(h => h.sightings));
    const root = svg("svg", { viewBox: "0 0 " + width + " " + height, width, height, class: "heard" });
    const step = width / Math.max(1, hours.length);
    hours.forEach((hour, index) => {
        if (hour.start % DAY === 0) {
            root.appendChild(svg("line", { x1: index * step, x2: index * step, y1: top, y2: height - bottom, class: "midnight" }));
            // Every day, every other or every third as the width allows; none cut at the right edge.
            const labelled = midnights++ % labelEvery === 0;
            if (labelled && index * step + 44 <= width) {
                const label = svg("text", { x: index * step + 2, y: height - 6, class: "axis" });
                label.textContent = new Date(hour.start * 1000).toLocaleDateString("en-GB", { day: "numeric", month: "short", timeZone: "UTC" });
                root.appendChild(label);
            }
        }
        if (hour.sightings === 0) return;
        const h = Math.max(1, (height - top - bottom) * hour.sightings / most);
        // At least 2 px: one busy hour among 336 must still show.
        const bar = svg("rect", { x: index * step, y: height - bottom - h, width: Math.max(2, step * 0.9), height: h, class: "bar" });
        const title = svg("title", {});
        title.textContent = timeText(hour.start) + ": " + hour.sightings + " sightings of " + hour.distinct_rpis + " identifiers";
        bar.appendChild(title);
        root.appendChild(bar);
    });
    const peak = svg("text", { x: 2, y: 12, class: "axis" });
    peak.textContent = count(most) + " sightings in the busiest hour";
    root.appendChild(peak);
    chart.appendChild(root);
    chart.dataset.bars = String(hours.filter(h => h.sightings > 0).length);
    text("heard-summary", count(heard.sightings) + " sightings of " + count(heard.distinct_rpis) + " rotating identifiers in " +
        count(heard.scan_windows) + " scan windows since " + timeText(heard.since) +
        (heard.held_sightings ? "; " + count(heard.held_sightings) + " held until the clock is trusted" : "") + ".");
}

// Attenuation ranges for reading the windows (typical attenuation, dB): a nearer phone loses fewer.
const BUCKETS = [[0, 55, "under 55 dB (near)"], [55, 63, "55–63 dB"], [63, 73, "63–73 dB"], [73, 1000, "73 dB and more (far)"]];

function drawWindows(windows) {
    const list = $("windows");
    list.replaceChildren();
    if (windows.length === 0) {
        text("windows-summary", "No exposure window in the last 14 days.");
        return;
    }
    text("windows-summary", windows.length + " exposure window" + (windows.length === 1 ? "" : "s") + ": minutes near a key that was shared, by signal loss.");
    windows.sort((a, b) => a.day < b.day ? -1 : 1);
    for (const entry of windows) {
        const minutes = BUCKETS.map(() => 0);
        for (const scan of entry.scan_instances) {
            const bucket = BUCKETS.findIndex(([low, high]) => scan.typical_attenuation >= low && scan.typical_attenuation < high);
            minutes[bucket < 0 ? BUCKETS.length - 1 : bucket] += scan.seconds_since_last_scan / 60;
        }
        const item = document.createElement("div");
        item.className = "window";
        const heading = document.createElement("p");
        heading.textContent = dayText(entry.day) + ": " + Math.round(minutes.reduce((a, b) => a + b, 0)) + " min, " + entry.report_type +
            ", infectiousness " + entry.infectiousness;
        item.appendChild(heading);
        const total = Math.max(1, ...minutes);
        BUCKETS.forEach(([, , label], index) => {
            const row = document.createElement("div");
            row.className = "bucket";
            const name = document.createElement("span");
            name.textContent = label;
            const track = document.createElement("span");
            track.className = "track";
            const fill = document.createElement("span");
            fill.className = "fill";
            fill.style.width = (100 * minutes[index] / total) + "%";
            track.appendChild(fill);
            const value = document.createElement("span");
            value.textContent = Math.round(minutes[index]) + " min";
            row.append(name, track, value);
            item.appendChild(row);
        });
        list.appendChild(item);
    }
}

function call(method, args) {
    return client.call(PATH, IFACE, method, args);
}

function refreshHeard() {
    show("heard-error", "");
    call("GetHeard", [0])
        .then(([json]) => drawHeard(JSON.parse(json)))
        .catch(error => {
            text("heard-summary", "");
            show("heard-error", describe(error));
        });
    call("GetExposureWindows", [])
        .then(([json]) => drawWindows(JSON.parse(json)))
        .catch(error => text("windows-summary", describe(error)));
}

// ---- Detection ---------------------------------------------------------------------------------

function checkNow() {
    show("detection-error", "");
    $("check-now").disabled = true;
    $("progress").hidden = false;
    $("progress").removeAttribute("value");
    text("progress-text", "Downloading the key files…");
    call("DetectExposures", [""])
        .then(([json]) => {
            const result = JSON.parse(json);
            const days = result.exposure_days || [];
            // The chart and the windows are read again on DetectionFinished, which every run sends.
            const refused = result.refused_files || 0;
            const found = days.length ? "exposure on " + days.map(dayText).join(", ") : (refused ? "no exposure found in the files checked" : "no exposure");
            text("progress-text", "Done: " + found + (refused ? "; " + refused + " key file" + (refused === 1 ? " was" : "s were") + " refused (see Last outcome)" : "") + ".");
        })
        .catch(error => {
            text("progress-text", "");
            show("detection-error", describe(error));
        })
        .finally(() => {
            $("check-now").disabled = false;
            $("progress").hidden = true;
        });
}

function onProgress(done, total) {
    const progress = $("progress");
    progress.max = Math.max(1, total);
    progress.value = done;
    text("progress-text", "Matched " + done + " of " + total + " keys read so far");
}

// ---- Test results and sharing ------------------------------------------------------------------

function seconds(dateInput) {
    return dateInput.value ? Math.floor(Date.parse(dateInput.value + "T12:00:00Z") / 1000) : 0;
}

function refreshTests() {
    call("GetTestResults", [])
        .then(([results]) => {
            const list = $("test-results");
            list.replaceChildren();
            for (const result of results) {
                const v = key => result[key] ? result[key].v : undefined;
                const item = document.createElement("li");
                const label = document.createElement("span");
                const date = new Date(v("TestDate") * 1000).toISOString().slice(0, 10);
                label.textContent = v("Type") + " test of " + dayText(date) + (v("Shared") ? " — shared" : "");
                item.appendChild(label);
                if (!v("Shared") && v("Type") !== "negative") {
                    const button = document.createElement("button");
                    button.type = "button";
                    button.textContent = "Share…";
                    button.className = "share-button";
                    button.dataset.id = v("Id");
                    button.addEventListener("click", () => startShare({ id: v("Id"), type: v("Type"), date, onset: v("SymptomOnset") }));
                    item.appendChild(button);
                }
                list.appendChild(item);
            }
        })
        .catch(error => show("share-error", describe(error)));
}

function addTest(event) {
    event.preventDefault();
    show("share-error", "");
    show("share-message", "");
    const result = { TestDate: { t: "t", v: seconds($("test-date")) }, Type: { t: "s", v: $("test-type").value } };
    if ($("symptom-onset").value) result.SymptomOnset = { t: "t", v: seconds($("symptom-onset")) };
    call("AddTestResult", [result])
        .then(() => {
            show("share-message", "Test result recorded.");
            refreshTests();
        })
        .catch(error => show("share-error", describe(error)));
}

// What sharing sends, before it is sent: as the sample app's review step.
function startShare(result) {
    sharing = result;
    show("share-error", "");
    show("share-message", "");
    $("share-step").hidden = false;
    text("share-heading", "Share the keys for your " + result.type + " test of " + dayText(result.date));
    const since = new Date(Date.now() - 14 * DAY * 1000).toISOString().slice(0, 10);
    const lines = [
        "This device's daily keys from " + dayText(since) + " to today (one key a day; today's key is sent once it has ended).",
        "The test's type (" + result.type + ")" + (result.onset ? " and the day symptoms began" : "") + ", as the verification server certifies them.",
        "To the key server of " + (manager.data.Region ? "region " + manager.data.Region : "your health authority") + ". Nothing else: no name, no place, no contacts.",
    ];
    const summary = $("share-summary");
    summary.replaceChildren(...lines.map(line => { const p = document.createElement("p"); p.textContent = line; return p; }));
    $("code").focus();
}

function confirmShare() {
    const code = $("code").value.trim();
    if (!code) {
        show("share-error", "Enter the verification code your health authority gave you.");
        return;
    }
    $("share-confirm").disabled = true;
    show("share-error", "");
    call("ShareDiagnosisKeys", [sharing.id, code])
        .then(() => {
            $("share-step").hidden = true;
            $("code").value = "";
            show("share-message", "Your keys were shared. Thank you.");
            refreshTests();
        })
        .catch(error => show("share-error", describe(error)))
        .finally(() => { $("share-confirm").disabled = false; });
}

// ---- Consent -----------------------------------------------------------------------------------

function toggleEnabled() {
    show("consent-error", "");
    call("SetEnabled", [!manager.data.Enabled]).catch(error => show("consent-error", describe(error)));
}

function reset() {
    show("consent-error", "");
    $("reset-confirm").hidden = true;
    call("ResetAllData", [])
        .then(() => {
            refreshHeard();
            refreshTests();
        })
        .catch(error => show("consent-error", describe(error)));
}

// ---- Start -------------------------------------------------------------------------------------

function start() {
    client = cockpit.dbus(SERVICE, { bus: "system" });
    manager = client.proxy(IFACE, PATH);
    manager.addEventListener("changed", render);
    manager.wait(() => {
        render();
        refreshHeard();
        refreshTests();
    });
    // Signals reach members of group gaend only (the policy); others read the properties.
    client.subscribe({ interface: IFACE, path: PATH, member: "DetectionProgress" }, (path, iface, signal, args) => onProgress(args[0], args[1]));
    client.subscribe({ interface: IFACE, path: PATH, member: "DetectionFinished" }, (path, iface, signal, args) => {
        if (!args[0]) show("detection-error", "The check failed: " + args[1]);
        refreshHeard();
    });
    client.addEventListener("close", (event, options) => show("page-error", "Lost the connection to gaend: " + (options.problem || "closed")));

    const today = new Date().toISOString().slice(0, 10);
    $("test-date").value = today;
    $("test-date").max = today;
    $("symptom-onset").max = today;
    $("check-now").addEventListener("click", checkNow);
    $("test-form").addEventListener("submit", addTest);
    $("share-confirm").addEventListener("click", confirmShare);
    $("share-cancel").addEventListener("click", () => { $("share-step").hidden = true; sharing = null; });
    $("code").addEventListener("input", () => show("share-error", ""));
    $("toggle-enabled").addEventListener("click", toggleEnabled);
    $("reset").addEventListener("click", () => { $("reset-confirm").hidden = false; });
    $("reset-no").addEventListener("click", () => { $("reset-confirm").hidden = true; });
    $("reset-yes").addEventListener("click", reset);
    // Hours go by while the page is open: the chart is read again every ten minutes.
    window.setInterval(refreshHeard, 600000);
    window.addEventListener("resize", () => { if (lastHeard) drawHeard(lastHeard); });
}

document.addEventListener("DOMContentLoaded", start);
