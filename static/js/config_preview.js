// "Preview impact" on the admin config form: posts the unsaved form to the dry-run view and
// reads its NDJSON stream (progress lines, then one result). Progress shows only when the
// dry run takes longer than a second.
(function () {
  "use strict";
  const button = document.getElementById("preview-button");
  if (!button) return;
  const progress = document.getElementById("preview-progress");
  const output = document.getElementById("preview-result");

  function element(tag, text, attrs) {
    const node = document.createElement(tag);
    if (text !== undefined) node.textContent = text;
    Object.entries(attrs || {}).forEach(([key, value]) => node.setAttribute(key, value));
    return node;
  }

  function describeDecision(decision) {
    const urls = decision.urls.map((u) =>
      `${u.url}: ${u.blocked === null ? "unknown" : u.blocked ? "blocked (" + u.reason + ")" : "allowed"}`);
    // The server names the scope's source with 1-based rule numbers ("global rule 1 (deny)").
    const rule = decision.scopeSource ? ` by ${decision.scopeSource}`
      : decision.ruleNumber === null ? "" : ` by rule ${decision.ruleNumber}`;
    return `${decision.outcome}${rule}${urls.length ? " — " + urls.join("; ") : ""}`;
  }

  function showResult(result) {
    output.replaceChildren();
    output.append(element("p", `${result.affectedRuns} of ${result.evaluated} runs affected`, { id: "preview-total" }));
    const counts = element("ul", undefined, { id: "preview-counts" });
    result.counts.forEach((item) => counts.append(element("li", item.text)));
    output.append(counts);
    if (!result.affected.length) return;
    const table = element("table", undefined, { id: "preview-affected" });
    const head = table.createTHead().insertRow();
    ["Run", "Changes", "Before", "After"].forEach((label) => head.append(element("th", label)));
    const body = table.createTBody();
    result.affected.forEach((run) => {
      const row = body.insertRow();
      const link = element("a", `#${run.runId}`, { href: `/decisions/${run.runId}/` });
      row.insertCell().append(link);
      row.insertCell().textContent = run.changes.join(", ");
      row.insertCell().textContent = describeDecision(run.before);
      row.insertCell().textContent = describeDecision(run.after);
    });
    output.append(table);
    if (result.affectedTruncated) output.append(element("p", "Only the first affected runs are listed."));
  }

  async function preview() {
    button.disabled = true;
    output.replaceChildren(element("p", "Evaluating…"));
    const timer = setTimeout(() => { progress.hidden = false; }, 1000);
    try {
      const response = await fetch(button.dataset.url, {
        method: "POST", body: new FormData(button.form), credentials: "same-origin",
      });
      if (!response.ok) {
        const problem = await response.json().catch(() => ({ error: response.statusText }));
        output.replaceChildren(element("p", problem.error || problem.detail, { class: "errornote" }));
        return;
      }
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let buffered = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffered += decoder.decode(value, { stream: true });
        let newline;
        while ((newline = buffered.indexOf("\n")) >= 0) {
          const frame = JSON.parse(buffered.slice(0, newline));
          buffered = buffered.slice(newline + 1);
          if (frame.type === "progress") progress.textContent = `Evaluated ${frame.done} of ${frame.total} runs…`;
          else if (frame.type === "result") showResult(frame);
          else if (frame.type === "error") output.replaceChildren(element("p", frame.error, { class: "errornote" }));
        }
      }
    } catch (error) {
      output.replaceChildren(element("p", `Preview failed: ${error}`, { class: "errornote" }));
    } finally {
      clearTimeout(timer);
      progress.hidden = true;
      button.disabled = false;
    }
  }

  button.addEventListener("click", preview);
})();
