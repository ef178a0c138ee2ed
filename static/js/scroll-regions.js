/* A box that scrolls sideways (a wide table on a phone) must be reachable by keyboard, or
 * its hidden columns are out of reach without a mouse: such a box gets tabindex="0" and a
 * name, from the table's caption or the nearest heading. Boxes that fit get nothing, so the
 * tab order stays short. Re-checked when the window is resized.
 *
 * In the admin it also names Django's empty header cells (the tabular inline's "original"
 * column and its delete column) for screen readers.
 */
(function () {
  "use strict";

  var SELECTOR = ".table-wrap, .inline-group .tabular, .inline-group, #changelist .results";

  function nameFor(box) {
    var caption = box.querySelector("caption, h2, h3");
    var text = caption ? caption.textContent.trim() : "";
    return text ? text + " (scrolls sideways)" : "Table (scrolls sideways)";
  }

  function mark() {
    document.querySelectorAll(SELECTOR).forEach(function (box) {
      var scrolls = box.scrollWidth > box.clientWidth + 1;
      var style = window.getComputedStyle(box);
      var clips = style.overflowX === "auto" || style.overflowX === "scroll";
      if (scrolls && clips) {
        box.setAttribute("tabindex", "0");
        if (!box.hasAttribute("role")) box.setAttribute("role", "region");
        if (!box.hasAttribute("aria-label")) box.setAttribute("aria-label", nameFor(box));
      } else if (box.getAttribute("tabindex") === "0" && box.dataset.keepTabindex === undefined) {
        box.removeAttribute("tabindex");
      }
    });
  }

  function nameEmptyHeaders() {
    document.querySelectorAll("th").forEach(function (cell) {
      if (cell.textContent.trim() || cell.querySelector("[aria-label], img[alt]")) return;
      var label = document.createElement("span");
      label.className = "visually-hidden";
      label.textContent = cell.classList.contains("original") ? "Row" : "Delete";
      cell.appendChild(label);
    });
  }

  function start() {
    nameEmptyHeaders();
    mark();
    var timer = null;
    window.addEventListener("resize", function () {
      window.clearTimeout(timer);
      timer = window.setTimeout(mark, 150);
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
