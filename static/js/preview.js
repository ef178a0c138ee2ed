/* Rich output preview, and safe Markdown for stored messages.
 *
 * Message content is assistant-controlled, so it only ever reaches the page through
 * textContent and attribute setters on elements we create: never innerHTML, never a
 * link that is not http(s), never an iframe src or sandbox the server did not compute.
 */
(function () {
  "use strict";

  var EXAMPLE = [
    "[[reply_to_current]] Here is the **status board** you asked for.",
    "",
    "It refreshes every minute; see `status.json` for the raw data or",
    "[the runbook](https://example.com/runbook).",
    "",
    "[embed ref=\"example-status\" title=\"Service status\" height=\"360\" /]",
    "[[audio_as_voice]]",
    "MEDIA:https://example.com/status-summary.ogg",
  ].join("\n");
  var EXAMPLE_VIEW_ID = "example-status";
  var EXAMPLE_CANVAS_HTML = [
    "<!doctype html><meta charset=\"utf-8\"><title>Service status</title>",
    "<style>body{font:15px system-ui,sans-serif;margin:1rem;color:#1d2330}",
    "td{padding:.3rem .8rem;border-bottom:1px solid #dde2e8}.ok{color:#1f7a4d}</style>",
    "<h1>Service status</h1><table>",
    "<tr><td>Gateway</td><td class=\"ok\">operational</td></tr>",
    "<tr><td>Link enrichment</td><td class=\"ok\">operational</td></tr>",
    "<tr><td>Media understanding</td><td class=\"ok\">operational</td></tr></table>",
  ].join("");
  var DEBOUNCE_MS = 250;
  var MAX_INLINE_DEPTH = 4;

  var element = window.ControlUI.element;

  function httpUrl(raw) {
    try {
      var url = new URL(raw);
      if (url.protocol === "http:" || url.protocol === "https:") return url.href;
    } catch (error) {
      /* not a URL: shown as text */
    }
    return null;
  }

  function link(href, label) {
    var anchor = element("a", "", label);
    anchor.href = href;
    anchor.rel = "noopener noreferrer nofollow";
    anchor.target = "_blank";
    return anchor;
  }

  // ---- inline Markdown: code spans, bold, italic, links, bare URLs ----------------------
  var INLINE = new RegExp(
    [
      "`([^`\\n]+)`", // 1 code span
      "\\*\\*(?=\\S)([^\\n]*?\\S)\\*\\*", // 2 bold
      "(?:^|(?<=[^A-Za-z0-9_]))__(?=\\S)([^\\n]*?\\S)__(?![A-Za-z0-9_])", // 3 bold
      "\\*(?=[^\\s*])([^*\\n]*?[^\\s*])\\*", // 4 italic
      "(?:^|(?<=[^A-Za-z0-9_]))_(?=[^\\s_])([^_\\n]*?[^\\s_])_(?![A-Za-z0-9_])", // 5 italic
      "\\[([^\\[\\]\\n]+)\\]\\(([^()\\s]+)\\)", // 6 label, 7 destination
      "(https?:\\/\\/[^\\s<>\"'`]*[^\\s<>\"'`.,;:!?)\\]])", // 8 bare URL
    ].join("|"),
    "g"
  );

  function appendInline(parent, text, depth) {
    if (depth > MAX_INLINE_DEPTH) {
      parent.appendChild(document.createTextNode(text));
      return;
    }
    var pattern = new RegExp(INLINE.source, "g");
    var last = 0;
    var match;
    while ((match = pattern.exec(text)) !== null) {
      if (match.index > last) parent.appendChild(document.createTextNode(text.slice(last, match.index)));
      parent.appendChild(inlineNode(match, depth));
      last = pattern.lastIndex;
    }
    if (last < text.length) parent.appendChild(document.createTextNode(text.slice(last)));
  }

  function inlineNode(match, depth) {
    if (match[1] !== undefined) return element("code", "", match[1]);
    var strong = match[2] !== undefined ? match[2] : match[3];
    if (strong !== undefined) {
      var bold = element("strong");
      appendInline(bold, strong, depth + 1);
      return bold;
    }
    var emphasis = match[4] !== undefined ? match[4] : match[5];
    if (emphasis !== undefined) {
      var italic = element("em");
      appendInline(italic, emphasis, depth + 1);
      return italic;
    }
    if (match[6] !== undefined) {
      var href = httpUrl(match[7]);
      if (!href) return document.createTextNode(match[0]);
      var anchor = link(href, "");
      appendInline(anchor, match[6], depth + 1);
      return anchor;
    }
    var bare = httpUrl(match[8]);
    return bare ? link(bare, match[8]) : document.createTextNode(match[0]);
  }

  // ---- block Markdown: fences, headings, lists, quotes, paragraphs ---------------------
  var FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/;
  var HEADING = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
  var BULLET = /^\s*[-*+]\s+(.*)$/;
  var NUMBERED = /^\s*\d{1,9}[.)]\s+(.*)$/;
  var QUOTE = /^\s*>\s?(.*)$/;

  function renderMarkdown(text) {
    var fragment = document.createDocumentFragment();
    var lines = String(text).replace(/\r\n?/g, "\n").split("\n");
    var index = 0;
    var paragraph = [];

    function flushParagraph() {
      if (!paragraph.length) return;
      var node = element("p");
      paragraph.forEach(function (line, position) {
        if (position) node.appendChild(element("br"));
        appendInline(node, line, 0);
      });
      fragment.appendChild(node);
      paragraph = [];
    }

    function collectList(pattern, tag) {
      var list = element(tag);
      while (index < lines.length && pattern.test(lines[index])) {
        var item = element("li");
        appendInline(item, lines[index].match(pattern)[1], 0);
        list.appendChild(item);
        index += 1;
      }
      fragment.appendChild(list);
    }

    while (index < lines.length) {
      var line = lines[index];
      var fence = line.match(FENCE);
      if (fence && !(fence[1][0] === "`" && fence[2].indexOf("`") !== -1)) {
        flushParagraph();
        var body = [];
        var closing = new RegExp("^ {0,3}" + fence[1][0] + "{" + fence[1].length + ",}\\s*$");
        index += 1;
        while (index < lines.length && !closing.test(lines[index])) {
          body.push(lines[index]);
          index += 1;
        }
        index += 1; // the closing fence (or past the end: an unclosed fence runs to the end)
        var pre = element("pre");
        var code = element("code", "", body.join("\n"));
        var language = fence[2].trim().split(/\s+/)[0];
        if (language) code.dataset.language = language;
        pre.appendChild(code);
        fragment.appendChild(pre);
        continue;
      }
      if (!line.trim()) {
        flushParagraph();
        index += 1;
        continue;
      }
      var heading = line.match(HEADING);
      if (heading) {
        flushParagraph();
        var level = Math.min(heading[1].length + 2, 6);
        var title = element("h" + level, "md-heading");
        appendInline(title, heading[2], 0);
        fragment.appendChild(title);
        index += 1;
        continue;
      }
      if (BULLET.test(line) || NUMBERED.test(line)) {
        flushParagraph();
        if (BULLET.test(line)) collectList(BULLET, "ul");
        else collectList(NUMBERED, "ol");
        continue;
      }
      if (QUOTE.test(line)) {
        flushParagraph();
        var quoted = [];
        while (index < lines.length && QUOTE.test(lines[index])) {
          quoted.push(lines[index].match(QUOTE)[1]);
          index += 1;
        }
        var quote = element("blockquote");
        quote.appendChild(renderMarkdown(quoted.join("\n")));
        fragment.appendChild(quote);
        continue;
      }
      paragraph.push(line);
      index += 1;
    }
    flushParagraph();
    return fragment;
  }

  // ---- one rendered message -------------------------------------------------------------
  function badges(data) {
    var row = element("div", "rich-badges");
    if (data.replyToId) {
      row.appendChild(element("span", "badge badge-info rich-badge-reply", "Reply to " + data.replyToId));
    } else if (data.replyToCurrent) {
      row.appendChild(element("span", "badge badge-info rich-badge-reply", "Reply to current message"));
    }
    if (data.audioAsVoice) row.appendChild(element("span", "badge badge-ok rich-badge-voice", "Voice note"));
    return row;
  }

  function mediaList(urls) {
    var section = element("section", "rich-media");
    section.setAttribute("aria-label", "Attachments");
    section.appendChild(element("h3", "", "Attachments (" + urls.length + ")"));
    var list = element("ul");
    urls.forEach(function (url) {
      var item = element("li");
      item.appendChild(element("code", "", url));
      list.appendChild(item);
    });
    section.appendChild(list);
    return section;
  }

  function canvasCard(frame) {
    var card = element("figure", "canvas-card");
    card.dataset.kind = "canvas";
    card.appendChild(element("figcaption", "", frame.title));
    if (!frame.src) {
      // A refused embed is a compact notice with its reason, never a blank frame.
      card.classList.add("embed-refused");
      card.appendChild(element("p", "embed-refused-reason",
        "Not shown: " + (frame.refused || "this embed's URL is not allowed in the dashboard") + "."));
      return card;
    }
    var iframe = element("iframe", "canvas-frame");
    // The sandbox must be in place before the frame navigates anywhere.
    iframe.setAttribute("sandbox", frame.sandbox);
    iframe.setAttribute("referrerpolicy", "no-referrer");
    iframe.title = frame.title;
    iframe.style.height = frame.height + "px";
    iframe.style.minHeight = frame.height + "px";
    iframe.setAttribute("src", frame.src);
    card.appendChild(iframe);
    return card;
  }

  function embedNotices(notices) {
    var list = element("ul", "embed-notices");
    notices.forEach(function (notice) {
      var item = element("li", "embed-refused");
      item.appendChild(element("p", "embed-refused-reason", notice.reason));
      item.appendChild(element("code", "small", notice.source));
      list.appendChild(item);
    });
    return list;
  }

  function renderMessage(container, data) {
    var article = element("article", "rich-message-body");
    article.appendChild(badges(data));
    if (data.text) {
      var text = element("div", "rich-text");
      text.appendChild(renderMarkdown(data.text));
      article.appendChild(text);
    } else {
      article.appendChild(element("p", "muted", "(no visible text)"));
    }
    if (data.mediaUrls && data.mediaUrls.length) article.appendChild(mediaList(data.mediaUrls));
    (data.iframes || []).forEach(function (frame) {
      article.appendChild(canvasCard(frame));
    });
    if (data.embedNotices && data.embedNotices.length) article.appendChild(embedNotices(data.embedNotices));
    container.replaceChildren(article);
  }

  function errorText(body, status) {
    if (body && typeof body.detail === "string") return body.detail;
    if (body && Array.isArray(body.detail)) {
      return body.detail
        .map(function (issue) {
          var where = (issue.loc || []).filter(function (part) { return part !== "body" && part !== "payload"; });
          return (where.length ? where.join(".") + ": " : "") + issue.msg;
        })
        .join("; ");
    }
    return "The server answered " + status + ".";
  }

  // ---- the preview page -----------------------------------------------------------------
  function setUpPreview(form) {
    var textarea = form.querySelector("#preview-text");
    var currentId = form.querySelector("#preview-current-id");
    var sessionKey = form.querySelector("#preview-session-key");
    var storeButton = form.querySelector("#preview-store");
    var stored = form.querySelector("#preview-stored");
    var status = document.getElementById("preview-status");
    var output = document.getElementById("preview-output");
    var csrf = form.querySelector("[name=csrfmiddlewaretoken]").value;
    var timer = null;
    var sequence = 0;
    var inFlight = null;

    function post(url, payload, signal) {
      return fetch(url, {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRFToken": csrf, Accept: "application/json" },
        body: JSON.stringify(payload),
        signal: signal,
      }).then(function (response) {
        return response.json().then(
          function (body) { return { response: response, body: body }; },
          function () { return { response: response, body: null }; }
        );
      });
    }

    function payload() {
      var data = { text: textarea.value };
      if (currentId.value.trim()) data.currentMessageId = currentId.value.trim();
      if (sessionKey.value.trim()) data.sessionKey = sessionKey.value.trim();
      return data;
    }

    function update() {
      var mine = ++sequence;
      if (inFlight) inFlight.abort();
      storeButton.disabled = !textarea.value.trim();
      if (!textarea.value.trim()) {
        inFlight = null;
        output.replaceChildren();
        output.dataset.state = "empty";
        status.textContent = "Start typing to see the rendered message.";
        return;
      }
      inFlight = new AbortController();
      status.textContent = "Rendering…";
      post(form.dataset.renderUrl, payload(), inFlight.signal)
        .then(function (result) {
          if (mine !== sequence) return;
          if (!result.response.ok) {
            output.dataset.state = "error";
            status.textContent = "Could not render: " + errorText(result.body, result.response.status);
            return;
          }
          renderMessage(output, result.body);
          output.dataset.state = "rendered";
          var blocks = result.body.blocks.length;
          var media = result.body.mediaUrls.length;
          var refused = (result.body.iframes || []).filter(function (frame) { return !frame.src; }).length +
            (result.body.embedNotices || []).length;
          status.textContent =
            "Rendered: " + blocks + " canvas block" + (blocks === 1 ? "" : "s") + ", " +
            media + " attachment" + (media === 1 ? "" : "s") +
            (refused ? ", " + refused + " embed" + (refused === 1 ? "" : "s") + " not shown (see why below)" : "") + ".";
        })
        .catch(function (error) {
          if (error.name === "AbortError" || mine !== sequence) return;
          output.dataset.state = "error";
          status.textContent = "Could not reach the server: " + error.message;
        });
    }

    function schedule() {
      clearTimeout(timer);
      timer = setTimeout(update, DEBOUNCE_MS);
    }

    function store() {
      storeButton.disabled = true;
      stored.replaceChildren(document.createTextNode("Storing…"));
      post(form.dataset.storeUrl, payload())
        .then(function (result) {
          if (!result.response.ok) {
            stored.textContent = "Not stored: " + errorText(result.body, result.response.status);
            return;
          }
          var record = result.body;
          storedText = payload().text;
          stored.replaceChildren(document.createTextNode("Stored as message #" + record.id + ". "));
          var view = element("a", "", "View message #" + record.id);
          view.href = record.url;
          stored.appendChild(view);
        })
        .catch(function (error) {
          stored.textContent = "Not stored: " + error.message;
        })
        .finally(function () {
          storeButton.disabled = !textarea.value.trim();
        });
    }

    // "Stored as message #5" describes the text as it was stored: after an edit, say so.
    var storedText = null;
    function markEdited() {
      if (storedText !== null && textarea.value !== storedText) {
        stored.replaceChildren(
          document.createTextNode("Edited since it was stored; store again to keep the changes.")
        );
        storedText = null;
      }
    }

    textarea.addEventListener("input", schedule);
    textarea.addEventListener("input", markEdited);
    currentId.addEventListener("input", schedule);
    storeButton.addEventListener("click", store);
    // The example embeds a canvas that exists: it is stored (or refreshed) first, so the
    // iframe shows the example page instead of a 404.
    form.querySelector("#preview-example").addEventListener("click", function () {
      var document_ = {
        viewId: EXAMPLE_VIEW_ID,
        title: "Service status (example)",
        html: EXAMPLE_CANVAS_HTML,
      };
      post(form.dataset.canvasUrl, document_)
        .then(function (result) {
          if (!result.response.ok) throw new Error(errorText(result.body, result.response.status));
        })
        .catch(function (error) {
          status.textContent = "The example canvas could not be stored: " + error.message;
        })
        .finally(function () {
          textarea.value = EXAMPLE;
          textarea.focus();
          markEdited();
          update();
        });
    });
    form.addEventListener("submit", function (event) {
      event.preventDefault();
    });
    if (textarea.value.trim()) update();
  }

  function enhanceStoredText() {
    document.querySelectorAll("[data-markdown]").forEach(function (node) {
      var source = node.textContent;
      node.replaceChildren(renderMarkdown(source));
      node.classList.remove("rich-text-plain");
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    var form = document.getElementById("preview-form");
    if (form) setUpPreview(form);
    enhanceStoredText();
  });

  window.ControlUiRichText = { renderMarkdown: renderMarkdown };
})();
