/* Starts the vendored Swagger UI on /api/docs (settings come from data attributes). */
(function () {
  "use strict";

  var root = document.getElementById("swagger-ui");
  if (!root || typeof window.SwaggerUIBundle !== "function") return;
  var csrfToken = root.getAttribute("data-csrf-token");
  root.textContent = "";
  // Swagger UI's markup, made accessible after each render (its components cannot be
  // changed from outside): the path link inside each operation's toggle button is a second
  // control nested in the first (the button already opens it, and deep links still update
  // the address), tag headings follow the page's h1 as level 2, and the blocks around the
  // operations are named regions so no content sits outside a landmark.
  function tidy() {
    root.querySelectorAll(".opblock-summary-control a[href]").forEach(function (link) {
      link.removeAttribute("href");
    });
    root.querySelectorAll("h3.opblock-tag, section.models h4").forEach(function (heading) {
      heading.setAttribute("aria-level", "2");
    });
    root.querySelectorAll(".opblock h4").forEach(function (heading) {
      heading.setAttribute("aria-level", "3");
    });
    [
      [".information-container", "About this API"],
      [".scheme-container", "Servers and authorization"],
      ["section.models", "Schemas"],
    ].forEach(function (pair) {
      root.querySelectorAll(pair[0]).forEach(function (node) {
        if (!node.hasAttribute("role")) {
          node.setAttribute("role", "region");
          node.setAttribute("aria-label", pair[1]);
        }
      });
    });
  }
  var pending = false;
  new MutationObserver(function () {
    if (pending) return;
    pending = true;
    window.requestAnimationFrame(function () { pending = false; tidy(); });
  }).observe(root, { childList: true, subtree: true });

  window.SwaggerUIBundle({
    url: root.getAttribute("data-openapi-url"),
    domNode: root,
    layout: "BaseLayout",
    deepLinking: true,
    presets: [window.SwaggerUIBundle.presets.apis],
    // Session-authenticated requests from "Try it out" need Django's CSRF header.
    requestInterceptor: function (request) {
      if (csrfToken) request.headers["X-CSRFToken"] = csrfToken;
      return request;
    },
  });
})();
