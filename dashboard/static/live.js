// live.js: the dashboard's only script, and optional: every page works
// without it. It does three things.
//
// 1. Refresh: when the page's refresh switch is on (body data-refresh =
//    seconds), fetch the same URL again every so many seconds and swap the
//    new <main> in, keeping the scroll position, the ticked checkboxes and
//    the field being typed in. It pauses while the tab is hidden or a
//    field has focus. Without this script a <noscript> meta refresh
//    reloads the page instead.
// 2. The switches apply at once on change (the Apply button stays for
//    browsers without the script).
// 3. The zone switch offers the browser's own zone.
(function () {
  "use strict";
  var body = document.body;
  var prefs = document.getElementById("prefs");
  var tz = document.getElementById("tz");
  if (tz) {
    var own = Intl.DateTimeFormat().resolvedOptions().timeZone;
    var have = Array.prototype.some.call(tz.options, function (o) { return o.value === own; });
    if (own && !have) {
      var o = document.createElement("option");
      o.value = own;
      o.textContent = own + " (this browser)";
      tz.appendChild(o);
    }
  }
  if (prefs) {
    prefs.addEventListener("change", function () { prefs.submit(); });
    var apply = document.getElementById("prefs-apply");
    if (apply) apply.hidden = true;
  }
  var seconds = parseInt(body.getAttribute("data-refresh") || "0", 10);
  if (!seconds) return;

  function ticked() {
    var boxes = document.querySelectorAll("main input[type=checkbox], main input[type=radio]");
    var keep = {};
    boxes.forEach(function (b) { keep[b.name + "=" + b.value] = b.checked; });
    return keep;
  }
  function busy() {
    var a = document.activeElement;
    return document.hidden || (a && /^(INPUT|SELECT|TEXTAREA)$/.test(a.tagName) && a.type !== "checkbox" && a.type !== "radio");
  }
  function refresh() {
    if (busy()) { schedule(); return; }
    fetch(location.href, { credentials: "same-origin", headers: { "X-Refresh": "1" } })
      .then(function (r) { if (!r.ok) throw new Error(r.status); return r.text(); })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        var fresh = doc.getElementById("main");
        var main = document.getElementById("main");
        if (!fresh || !main) return;
        var keep = ticked();
        var x = window.scrollX, y = window.scrollY;
        main.replaceWith(fresh);
        document.querySelectorAll("main input[type=checkbox], main input[type=radio]").forEach(function (b) {
          var k = b.name + "=" + b.value;
          if (k in keep) b.checked = keep[k];
        });
        document.dispatchEvent(new Event("dashboard:refreshed"));
        window.scrollTo(x, y);
        body.setAttribute("data-refreshed", String(Date.now()));
      })
      .catch(function () { /* the next tick tries again */ })
      .then(schedule);
  }
  var timer = 0;
  function schedule() { clearTimeout(timer); timer = setTimeout(refresh, seconds * 1000); }
  schedule();
})();
