/* History filters: empty fields stay out of the URL (?channel=slack, not ?outcome=&channel=slack…).
 *
 * Disabled controls are not submitted; they are re-enabled right after, so going back to the
 * page (bfcache) shows a usable form.
 */
(function () {
  "use strict";

  var form = document.getElementById("history-filters");
  if (!form) return;
  form.addEventListener("submit", function () {
    var emptied = [];
    Array.prototype.forEach.call(form.elements, function (control) {
      if (!control.name || control.disabled) return;
      var empty = control.value === "";
      // "starts with" is the default way to match a session key: only "contains" is sent,
      // and only with a session key to match.
      if (control.name === "sessionMatch") {
        empty = control.value === "prefix" || form.elements.sessionKey.value === "";
      }
      if (empty) {
        control.disabled = true;
        emptied.push(control);
      }
    });
    window.setTimeout(function () {
      emptied.forEach(function (control) { control.disabled = false; });
    }, 0);
  });
})();
