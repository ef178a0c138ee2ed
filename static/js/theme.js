/* Light or dark: the system's choice (prefers-color-scheme) unless the toggle picked one.
 *
 * Loaded in <head> without defer so the theme is set before the first paint (no flash).
 * The choice ("auto", "light", "dark") is kept in localStorage; "auto" follows the system
 * live. html[data-theme] always holds the resolved theme, which app.css styles.
 */
(function () {
  "use strict";

  var KEY = "controlui-theme";
  var CHOICES = ["auto", "dark", "light"];
  var LABELS = { auto: "◐ Auto", dark: "☾ Dark", light: "☀ Light" };
  var system = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;

  function choice() {
    try {
      var stored = window.localStorage.getItem(KEY);
      return CHOICES.indexOf(stored) === -1 ? "auto" : stored;
    } catch (error) {
      return "auto";
    }
  }

  function apply() {
    var picked = choice();
    var dark = picked === "dark" || (picked === "auto" && system && system.matches);
    document.documentElement.dataset.theme = dark ? "dark" : "light";
    var toggle = document.getElementById("theme-toggle");
    if (toggle) {
      toggle.textContent = LABELS[picked];
      toggle.setAttribute("aria-label", "Colour theme: " + picked + " (change)");
    }
  }

  apply();
  if (system && system.addEventListener) system.addEventListener("change", apply);
  document.addEventListener("DOMContentLoaded", function () {
    var toggle = document.getElementById("theme-toggle");
    if (!toggle) return;
    toggle.hidden = false;
    apply();
    toggle.addEventListener("click", function () {
      var next = CHOICES[(CHOICES.indexOf(choice()) + 1) % CHOICES.length];
      try {
        window.localStorage.setItem(KEY, next);
      } catch (error) {
        /* private mode: the choice lasts for this page only */
      }
      document.documentElement.dataset.theme = next === "auto" ? "" : next;
      apply();
    });
  });
})();
