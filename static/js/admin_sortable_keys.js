// Keyboard ordering for the admin's sortable inlines. django-admin-sortable2 drags saved rows
// by their handle (mouse or touch); here each saved row also gets "Move up" / "Move down"
// buttons and the library's "first" / "last" arrows become reachable with Tab and Enter.
// A move writes the hidden position inputs (1, 2, 3 … in the order shown) as a drag does,
// and a polite live region says where the row went. When the form comes back with errors,
// rows are first shown in the order their position inputs hold, so what is seen is what
// a save stores.
(function () {
  "use strict";

  function savedRows(tbody) {
    return Array.prototype.slice.call(tbody.querySelectorAll("tr.has_original"));
  }

  function renumber(tbody) {
    savedRows(tbody).forEach(function (row, index) {
      var input = row.querySelector("input._reorder_");
      if (input) input.value = String(index + 1);
      // Scope rules show their number (read from 1, as every page says "rule N").
      var number = row.querySelector(".rule-number");
      if (number) number.textContent = String(index + 1);
    });
  }

  function renumberShown(tbody) {
    savedRows(tbody).forEach(function (row, index) {
      var number = row.querySelector(".rule-number");
      if (number && number.textContent !== String(index + 1)) number.textContent = String(index + 1);
    });
  }

  function label(row) {
    var original = row.querySelector("td.original p");
    var text = original ? original.firstChild && original.firstChild.textContent : "";
    return (text || "row").trim();
  }

  function statusFor(fieldset) {
    var status = fieldset.querySelector(".sort-status");
    if (!status) {
      status = document.createElement("p");
      status.className = "sort-status";
      status.setAttribute("role", "status");
      status.setAttribute("aria-live", "polite");
      fieldset.appendChild(status);
    }
    return status;
  }

  function announce(fieldset, tbody, row) {
    var rows = savedRows(tbody);
    statusFor(fieldset).textContent =
      label(row) + ": position " + (rows.indexOf(row) + 1) + " of " + rows.length +
      " (saved when you save the form)";
  }

  function move(fieldset, tbody, row, step) {
    var rows = savedRows(tbody);
    var index = rows.indexOf(row);
    var target = rows[index + step];
    if (!target) return false;
    if (step < 0) tbody.insertBefore(row, target);
    else tbody.insertBefore(row, target.nextSibling);
    renumber(tbody);
    announce(fieldset, tbody, row);
    return true;
  }

  function button(text, name) {
    var node = document.createElement("button");
    node.type = "button";
    node.className = "sort-step";
    node.textContent = text;
    node.setAttribute("aria-label", name);
    node.title = name;
    return node;
  }

  function showStoredOrder(tbody) {
    var rows = savedRows(tbody);
    var keyed = rows.map(function (row, index) {
      var input = row.querySelector("input._reorder_");
      var value = input ? parseInt(input.value, 10) : NaN;
      return { row: row, key: isNaN(value) ? index : value, index: index };
    });
    keyed.sort(function (a, b) { return a.key - b.key || a.index - b.index; });
    var anchor = rows.length ? rows[rows.length - 1].nextSibling : null;
    keyed.forEach(function (item) { tbody.insertBefore(item.row, anchor); });
  }

  function setUp(fieldset) {
    var tbody = fieldset.querySelector("table tbody");
    if (!tbody) return;
    showStoredOrder(tbody);
    // A drag (the library's own code) reorders rows too: keep the shown numbers in step.
    new MutationObserver(function () { renumberShown(tbody); }).observe(tbody, { childList: true });
    savedRows(tbody).forEach(function (row) {
      var sort = row.querySelector("td.original span.sort");
      if (!sort) return;
      // The library's arrows are <i role="button">: make them focusable and pressable.
      sort.querySelectorAll("i.move-begin, i.move-end").forEach(function (arrow) {
        arrow.tabIndex = 0;
        arrow.addEventListener("keydown", function (event) {
          if (event.key !== "Enter" && event.key !== " ") return;
          event.preventDefault();
          arrow.click();
          arrow.focus();
        });
        arrow.addEventListener("click", function () {
          // The library moves the row on the same click; announce where it ended.
          window.setTimeout(function () { announce(fieldset, tbody, row); }, 0);
        });
      });
      var up = button("▲", "Move up: " + label(row));
      var down = button("▼", "Move down: " + label(row));
      up.addEventListener("click", function () { if (move(fieldset, tbody, row, -1)) up.focus(); });
      down.addEventListener("click", function () { if (move(fieldset, tbody, row, 1)) down.focus(); });
      var steps = document.createElement("span");
      steps.className = "sort-steps";
      steps.append(up, down);
      sort.parentNode.insertBefore(steps, sort);
    });
  }

  function start() {
    document.querySelectorAll("fieldset.sortable").forEach(setUp);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
