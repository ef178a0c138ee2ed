/* Live parts of the overview and the history, driven by live.js's "controlui:decision" events.
 *
 * Overview: counters, chart, top lists and recent runs are re-read from the server (the same
 * page, same period) at most every 2 s while runs arrive, and swapped in place: the server
 * renders and escapes them exactly as on a reload.
 * History (first page): the filtered API is asked how many runs newer than the top row match,
 * and "N new runs — show" appears; showing reloads the page.
 */
(function () {
  "use strict";

  var DEBOUNCE_MS = 2000;
  var OVERVIEW_PARTS = [".overview-totals", "#outcome-chart", "#top-lists", "#recent-section"];

  function debounce(action) {
    var timer = null;
    return function () {
      if (timer) return;
      timer = window.setTimeout(function () {
        timer = null;
        action();
      }, DEBOUNCE_MS);
    };
  }

  function renderTimes(root) {
    if (!window.ControlUITime) return;
    var nodes = root.querySelectorAll("time[datetime]");
    for (var i = 0; i < nodes.length; i++) window.ControlUITime.render(nodes[i]);
  }

  function refreshOverview(root) {
    return fetch(window.location.href, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (response) {
        if (!response.ok) throw new Error("HTTP " + response.status);
        return response.text();
      })
      .then(function (html) {
        var fresh = new DOMParser().parseFromString(html, "text/html");
        OVERVIEW_PARTS.forEach(function (selector) {
          var current = document.querySelector(selector);
          var next = fresh.querySelector(selector);
          if (current && next) {
            var adopted = document.importNode(next, true);
            current.replaceWith(adopted);
            renderTimes(adopted);
          }
        });
        root.dataset.refreshed = String(Number(root.dataset.refreshed || "0") + 1);
      })
      .catch(function () {
        /* the next run tries again */
      });
  }

  var FILTERS = ["outcome", "status", "channel", "chatType", "sessionKey", "sessionMatch", "url", "q", "since", "until", "command"];

  function refreshHistory(banner) {
    var here = new URLSearchParams(window.location.search);
    var query = new URLSearchParams();
    FILTERS.forEach(function (name) {
      if (here.get(name)) query.set(name, here.get(name));
    });
    query.set("limit", "200");
    var top = Number(banner.dataset.topRunId || "0");
    return fetch("/api/decisions?" + query.toString(), { credentials: "same-origin" })
      .then(function (response) {
        if (!response.ok) throw new Error("HTTP " + response.status);
        return response.json();
      })
      .then(function (page) {
        var count = page.items.filter(function (item) { return item.runId > top; }).length;
        if (!count) return;
        var more = count >= 200 ? "200+" : String(count);
        banner.querySelector("a").textContent = more + " new run" + (count === 1 ? "" : "s") + " — show";
        banner.hidden = false;
      })
      .catch(function () {
        /* the next run tries again */
      });
  }

  document.addEventListener("DOMContentLoaded", function () {
    var overview = document.getElementById("overview-live");
    if (overview) {
      document.addEventListener("controlui:decision", debounce(function () { refreshOverview(overview); }));
    }
    var banner = document.getElementById("new-runs");
    // Only the first page: older pages are not where new runs appear.
    if (banner && !new URLSearchParams(window.location.search).get("cursor")) {
      document.addEventListener("controlui:decision", debounce(function () { refreshHistory(banner); }));
      banner.querySelector("a").addEventListener("click", function (event) {
        event.preventDefault();
        window.location.reload();
      });
    }
  });
})();
