/* The main navigation collapses behind a "Menu" button on narrow screens.
 *
 * The collapsing is switched on here (class nav-collapsible), so without JavaScript the
 * navigation simply stays visible.
 */
(function () {
  "use strict";

  function setUp() {
    var bar = document.querySelector(".topbar");
    var toggle = document.getElementById("nav-toggle");
    var nav = document.getElementById("mainnav");
    if (!bar || !toggle || !nav) return;
    bar.classList.add("nav-collapsible");
    toggle.addEventListener("click", function () {
      var open = toggle.getAttribute("aria-expanded") !== "true";
      toggle.setAttribute("aria-expanded", String(open));
      bar.classList.toggle("nav-open", open);
    });
    document.addEventListener("keydown", function (event) {
      if (event.key === "Escape" && bar.classList.contains("nav-open")) {
        toggle.setAttribute("aria-expanded", "false");
        bar.classList.remove("nav-open");
        toggle.focus();
      }
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", setUp);
  } else {
    setUp();
  }
})();
