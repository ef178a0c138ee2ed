/* "Try an enrichment" form: sends the message through /ws/enrich/ and shows the progress
 * frames, then the result (or the error) of that request.
 *
 * One socket is opened lazily and kept; each submit gets its own request id, and frames for
 * other ids are ignored. Everything shown goes through textContent.
 */
(function () {
  "use strict";

  var FIELDS = ["channel", "chatType", "sessionKey"];

  var socketUrl = window.ControlUI.socketUrl;
  var element = window.ControlUI.element;

  function start(form) {
    var progress = document.getElementById("enrich-progress");
    var result = document.getElementById("enrich-result");
    var submit = document.getElementById("enrich-submit");
    var socket = null;
    var opening = null;
    var counter = 0;
    var currentId = null;

    function open() {
      if (socket && socket.readyState === WebSocket.OPEN) return Promise.resolve(socket);
      if (opening) return opening;
      opening = new Promise(function (resolve, reject) {
        var candidate = new WebSocket(socketUrl(form.dataset.wsPath));
        candidate.addEventListener("open", function () {
          socket = candidate;
          opening = null;
          resolve(candidate);
        });
        candidate.addEventListener("message", function (event) {
          handle(event.data);
        });
        candidate.addEventListener("close", function (event) {
          if (socket === candidate) socket = null;
          if (opening) {
            opening = null;
            reject(new Error("could not connect (code " + event.code + ")"));
          } else if (currentId) {
            showError("the connection closed before the result arrived");
          }
        });
      });
      return opening;
    }

    var ticker = null;

    function finish(state) {
      result.dataset.state = state;
      currentId = null;
      submit.disabled = false;
      if (ticker) window.clearInterval(ticker);
      ticker = null;
    }

    // Long runs show how long they have been running, not just "Running…".
    function startTicker(started) {
      var label = element("p", "muted", "Running… 0 s");
      label.id = "enrich-elapsed";
      result.replaceChildren(label);
      ticker = window.setInterval(function () {
        label.textContent = "Running… " + Math.round((Date.now() - started) / 1000) + " s";
      }, 1000);
    }

    // Leaving the page closes the socket, which cancels the run: say so first.
    window.addEventListener("beforeunload", function (event) {
      if (currentId === null) return;
      event.preventDefault();
      event.returnValue = "";
    });

    function showError(message) {
      result.replaceChildren(element("p", "error", "Error: " + message));
      finish("error");
    }

    // Why a URL gave nothing: a DNS failure (not a policy refusal), a refusal by the SSRF
    // policy, or the last failed attempt's reason. The run page says more per attempt.
    function outcomeReasons(links) {
      if (!links || !links.urls) return [];
      var reasons = [];
      links.urls.forEach(function (url) {
        if (url.chosen) return;
        var why = "";
        if (url.blocked && url.reason === "hostname does not resolve") {
          why = "DNS failure: the host does not resolve";
        } else if (url.blocked) {
          why = "blocked by the SSRF policy: " + (url.reason || "no reason recorded");
        } else if (url.attempts && url.attempts.length) {
          var last = url.attempts[url.attempts.length - 1];
          why = "every CLI entry failed; last: " + (last.reason || last.outcome);
        } else {
          why = "no CLI entry ran";
        }
        reasons.push(url.url + " — " + why);
      });
      if (!reasons.length && links.outcome === "skipped") reasons.push("No CLI entry is configured.");
      return reasons;
    }

    function showResult(frame) {
      var nodes = [];
      var heading = element("p");
      heading.appendChild(document.createTextNode("Recorded as "));
      var link = element("a", "", "run #" + frame.runId);
      link.href = form.dataset.detailUrl.replace(/\/0\/$/, "/" + frame.runId + "/");
      heading.appendChild(link);
      var outcome = frame.links && frame.links.outcome ? String(frame.links.outcome) : "";
      if (outcome) {
        heading.appendChild(document.createTextNode(" "));
        heading.appendChild(element("span", "badge badge-" + outcome.replace(/[^a-z-]/g, ""), outcome));
      }
      nodes.push(heading);
      var reasons = outcomeReasons(frame.links);
      if (reasons.length) {
        var list = element("ul", "enrich-reasons");
        list.id = "enrich-reasons";
        reasons.forEach(function (text) { list.appendChild(element("li", "", text)); });
        nodes.push(list);
      }
      nodes.push(element("pre", "enrich-body", frame.body));
      result.replaceChildren.apply(result, nodes);
      finish("done");
    }

    function handle(data) {
      var frame;
      try {
        frame = JSON.parse(data);
      } catch (error) {
        return;
      }
      if (!frame || frame.id !== currentId) return;
      if (frame.type === "progress") {
        var text = (frame.stage ? "[" + frame.stage + "] " : "") + (frame.text || "");
        if (frame.url && (frame.text || "").indexOf(frame.url) === -1) text += " " + frame.url;
        progress.appendChild(element("li", "", text));
      } else if (frame.type === "result") {
        showResult(frame);
      } else if (frame.type === "error") {
        showError(frame.error);
      }
    }

    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var body = form.elements.body.value;
      if (!body.trim()) return;
      var message = { body: body };
      FIELDS.forEach(function (name) {
        var value = form.elements[name].value.trim();
        if (value) message[name] = value;
      });
      counter += 1;
      currentId = "page-" + Date.now() + "-" + counter;
      progress.replaceChildren();
      startTicker(Date.now());
      result.dataset.state = "running";
      submit.disabled = true;
      var requestId = currentId;
      open().then(
        function (ready) {
          ready.send(JSON.stringify({ type: "enrich", id: requestId, message: message }));
        },
        function (error) {
          showError(error.message);
        }
      );
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    var form = document.getElementById("enrich-form");
    if (form) start(form);
  });
})();
