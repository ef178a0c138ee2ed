/* Keyboard navigation, as in trace browsers: on the history, j/k (or ↓/↑) move through the
 * rows and Enter opens the selected run; on a run page, j/k go to the older/newer run within
 * the same filter. Keys typed into a form field are left alone.
 */
(function () {
  "use strict";

  function typing(event) {
    var target = event.target;
    var tag = target && target.tagName;
    return tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || (target && target.isContentEditable);
  }

  function historyRows() {
    return Array.prototype.slice.call(document.querySelectorAll("table.history-table tbody tr"));
  }

  function select(rows, index) {
    rows.forEach(function (row) { row.classList.remove("selected"); });
    var row = rows[index];
    if (!row) return;
    row.classList.add("selected");
    var link = row.querySelector("a");
    if (link) link.focus();
    row.scrollIntoView({ block: "nearest" });
  }

  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.ctrlKey || event.metaKey || typing(event)) return;
    var down = event.key === "j" || event.key === "ArrowDown";
    var up = event.key === "k" || event.key === "ArrowUp";
    if (!down && !up) return;
    var rows = historyRows();
    if (rows.length && document.getElementById("history-filters")) {
      var current = rows.findIndex(function (row) { return row.classList.contains("selected"); });
      var next = current === -1 ? 0 : Math.max(0, Math.min(rows.length - 1, current + (down ? 1 : -1)));
      select(rows, next);
      event.preventDefault();
      return;
    }
    // Run page: only the letters, so arrows still scroll the page.
    if (event.key === "j" || event.key === "k") {
      var link = document.getElementById(event.key === "j" ? "run-older" : "run-newer");
      if (link) {
        event.preventDefault();
        window.location.assign(link.href);
      }
    }
  });
})();
