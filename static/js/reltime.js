/* Relative times everywhere: every <time datetime> reads "5 min ago", with the exact UTC
 * instant on hover (title). The server renders the exact UTC time, so without JavaScript
 * pages still say when. Texts refresh every 30 s; times added later (live feed, live rows)
 * call ControlUITime.render(element).
 */
(function () {
  "use strict";

  var UNITS = [
    [60, "s", 1],
    [3600, "min", 60],
    [86400, "h", 3600],
    [86400 * 30, "d", 86400],
  ];

  function pad(value) {
    return value < 10 ? "0" + value : String(value);
  }

  function exactUtc(date) {
    return (
      date.getUTCFullYear() + "-" + pad(date.getUTCMonth() + 1) + "-" + pad(date.getUTCDate()) +
      " " + pad(date.getUTCHours()) + ":" + pad(date.getUTCMinutes()) + ":" +
      pad(date.getUTCSeconds()) + " UTC"
    );
  }

  function relative(date, now) {
    var seconds = Math.round((now - date.getTime()) / 1000);
    if (Math.abs(seconds) < 10) return "just now";
    var future = seconds < 0;
    var span = Math.abs(seconds);
    for (var i = 0; i < UNITS.length; i++) {
      if (span < UNITS[i][0]) {
        var amount = Math.floor(span / UNITS[i][2]);
        var text = amount + " " + UNITS[i][1];
        return future ? "in " + text : text + " ago";
      }
    }
    return exactUtc(date).slice(0, 10);
  }

  function render(node, now) {
    var value = node.getAttribute("datetime");
    var date = value ? new Date(value) : null;
    if (!date || isNaN(date.getTime())) return;
    node.textContent = relative(date, now || Date.now());
    node.title = exactUtc(date);
    node.classList.add("reltime");
  }

  function renderAll() {
    var now = Date.now();
    var nodes = document.querySelectorAll("time[datetime]:not([data-absolute])");
    for (var i = 0; i < nodes.length; i++) render(nodes[i], now);
  }

  window.ControlUITime = { render: render, relative: relative, exactUtc: exactUtc };
  document.addEventListener("DOMContentLoaded", function () {
    renderAll();
    window.setInterval(renderAll, 30000);
  });
})();
