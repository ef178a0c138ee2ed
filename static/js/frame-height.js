/*
 * Canvas frames rendered by the server carry their height in data-height; it is applied
 * here because the Content-Security-Policy allows no inline style attributes.
 */
(function () {
  "use strict";
  document.querySelectorAll("iframe[data-height]").forEach(function (frame) {
    var height = parseInt(frame.dataset.height, 10);
    if (height > 0) {
      frame.style.height = height + "px";
      frame.style.minHeight = height + "px";
    }
  });
})();
