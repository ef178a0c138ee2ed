/* Starts the vendored Swagger UI on /api/docs (settings come from data attributes). */
(function () {
  "use strict";

  var root = document.getElementById("swagger-ui");
  if (!root || typeof window.SwaggerUIBundle !== "function") return;
  var csrfToken = root.getAttribute("data-csrf-token");
  root.textContent = "";
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
