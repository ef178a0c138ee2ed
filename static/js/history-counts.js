/* History with a word or URL fragment: the rows come first, and the count, the facet counts
 * and the duration chart are read after them.
 *
 * #counts-pending names the page's counts alone (/decisions/counts/ with the same query:
 * the page's own count, facets and chart fragments, rendered and escaped as on a reload,
 * without the rows) and the same page with counts=1. The counts are fetched once and replace
 * the pending ones here. Boxes ticked meanwhile stay ticked. Without scripts, and to try
 * again after a failure, the link opens the page with counts=1.
 */
(function () {
  "use strict";

  var pending = document.getElementById("counts-pending");
  if (!pending || !pending.dataset.countsUrl || !pending.dataset.countsPart) return;

  function ticked(root) {
    var states = {};
    var boxes = root.querySelectorAll("input[type=checkbox]");
    for (var i = 0; i < boxes.length; i++) {
      states[boxes[i].name + "\u0000" + boxes[i].value] = boxes[i].checked;
    }
    return states;
  }

  function keepTicked(root, states) {
    var boxes = root.querySelectorAll("input[type=checkbox]");
    for (var i = 0; i < boxes.length; i++) {
      var key = boxes[i].name + "\u0000" + boxes[i].value;
      if (key in states) boxes[i].checked = states[key];
    }
  }

  // The counted page's part takes the pending one's place; a part it has not (no run with a
  // duration: no chart) takes the pending one away.
  function swap(fresh, id, before) {
    var current = document.getElementById(id);
    var next = fresh.getElementById(id);
    if (!current) return;
    if (!next) {
      current.remove();
      return;
    }
    var adopted = document.importNode(next, true);
    if (before) before(adopted, current);
    current.replaceWith(adopted);
  }

  // A live region is filled in place, not replaced: a new element is not announced.
  function refill(fresh, id) {
    var current = document.getElementById(id);
    var next = fresh.getElementById(id);
    if (!current || !next) return;
    var names = Array.prototype.map.call(current.attributes, function (attr) { return attr.name; });
    names.forEach(function (name) {
      if (!next.hasAttribute(name)) current.removeAttribute(name);
    });
    Array.prototype.forEach.call(next.attributes, function (attr) {
      current.setAttribute(attr.name, attr.value);
    });
    var children = Array.prototype.map.call(next.childNodes, function (node) {
      return document.importNode(node, true);
    });
    current.replaceChildren.apply(current, children);
  }

  function failed() {
    var note = document.getElementById("counts-note") || document.getElementById("facet-note");
    if (!note) return;
    note.removeAttribute("aria-busy");
    note.textContent = "· the counts could not be read: ";
    var again = document.createElement("a");
    again.href = pending.dataset.countsUrl;
    again.textContent = "try again";
    note.appendChild(again);
  }

  fetch(pending.dataset.countsPart, { credentials: "same-origin", headers: { Accept: "text/html" } })
    .then(function (response) {
      if (!response.ok) throw new Error("HTTP " + response.status);
      return response.text();
    })
    .then(function (html) {
      var fresh = new DOMParser().parseFromString(html, "text/html");
      if (!fresh.getElementById("facet-counts")) throw new Error("no counts in the answer");
      swap(fresh, "facet-counts", function (adopted, current) {
        keepTicked(adopted, ticked(current));
      });
      refill(fresh, "result-count");
      swap(fresh, "durations");
      refill(fresh, "counts-note");
      pending.remove();
    })
    .catch(failed);
})();
