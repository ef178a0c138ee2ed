/* Small helpers shared by the dashboard scripts (loaded before them).
 *
 * element() is the only way our scripts put message-derived text on a page: it always
 * goes through textContent, never innerHTML.
 */
(function () {
  "use strict";

  function element(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function socketUrl(path) {
    var scheme = window.location.protocol === "https:" ? "wss:" : "ws:";
    return scheme + "//" + window.location.host + path;
  }

  window.ControlUI = { element: element, socketUrl: socketUrl };
})();
