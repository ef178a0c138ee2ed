/* Overview live feed: every run recorded anywhere appears at the top of the list.
 *
 * Frames come from /ws/decisions/ as {"type": "decision", "run": {summary}}. Values are
 * put on the page with textContent only. The socket reconnects with a growing delay so a
 * restarted server is picked up without a reload.
 */
(function () {
  "use strict";

  var MAX_ITEMS = 50;
  var MAX_DELAY_MS = 15000;

  var socketUrl = window.ControlUI.socketUrl;
  var element = window.ControlUI.element;

  function detailUrl(template, runId) {
    // The template is the reversed URL of run 0, e.g. "/decisions/0/".
    return template.replace(/\/0\/$/, "/" + encodeURIComponent(String(runId)) + "/");
  }

  function feedItem(run, template) {
    var item = element("li", "fresh");
    item.dataset.runId = String(run.runId);
    var link = element("a", "", "#" + run.runId);
    link.href = detailUrl(template, run.runId);
    item.appendChild(link);
    item.appendChild(document.createTextNode(" "));
    var outcome = String(run.outcome || "unknown").replace(/[^a-z-]/g, "");
    item.appendChild(element("span", "badge badge-" + outcome, run.outcome));
    var parts = [];
    if (run.channel) parts.push(run.channel);
    if (run.chatType) parts.push(run.chatType);
    if (run.sessionKey) parts.push(run.sessionKey);
    parts.push(run.urlCount + " URL" + (run.urlCount === 1 ? "" : "s"));
    if (run.durationMs !== null && run.durationMs !== undefined) parts.push(run.durationMs + " ms");
    item.appendChild(element("span", "muted small", " " + parts.join(" · ") + " "));
    var when = element("time", "muted small", run.createdAt);
    when.setAttribute("datetime", run.createdAt);
    if (window.ControlUITime) window.ControlUITime.render(when);
    item.appendChild(when);
    return item;
  }

  function start(feed) {
    var status = document.getElementById("live-status");
    var empty = document.getElementById("live-empty");
    var template = feed.dataset.detailUrl;
    var delay = 500;

    function setStatus(text, state) {
      if (!status) return;
      status.textContent = text;
      status.dataset.state = state;
    }

    function connect() {
      var socket = new WebSocket(socketUrl(feed.dataset.wsPath));
      socket.addEventListener("open", function () {
        delay = 500;
        setStatus("live", "open");
        feed.dataset.state = "open";
      });
      socket.addEventListener("message", function (event) {
        var frame;
        try {
          frame = JSON.parse(event.data);
        } catch (error) {
          return;
        }
        if (!frame || frame.type !== "decision" || !frame.run) return;
        // Other live parts of the page (counters, chart, lists) listen for this.
        document.dispatchEvent(new CustomEvent("controlui:decision", { detail: frame.run }));
        if (!template) return;
        // A run already shown (rendered with the page, or pushed twice) moves to the top.
        var known = feed.querySelector("li[data-run-id='" + Number(frame.run.runId) + "']");
        if (known) feed.removeChild(known);
        feed.insertBefore(feedItem(frame.run, template), feed.firstChild);
        while (feed.children.length > MAX_ITEMS) feed.removeChild(feed.lastChild);
        if (empty) empty.hidden = true;
      });
      socket.addEventListener("close", function (event) {
        feed.dataset.state = "closed";
        if (event.code === 4401) {
          setStatus("signed out: reload to log in again", "closed");
          return;
        }
        setStatus("disconnected, retrying…", "retrying");
        window.setTimeout(connect, delay);
        delay = Math.min(delay * 2, MAX_DELAY_MS);
      });
    }

    connect();
  }

  document.addEventListener("DOMContentLoaded", function () {
    // The overview's feed, or any other page's live marker (e.g. the history).
    var feed = document.getElementById("live-feed") || document.getElementById("live-marker");
    if (feed) start(feed);
  });
})();
