// Runs one link-model CLI through OpenClaw's own runCommandWithTimeout with the options its
// link runner passes (dist/link-understanding/apply.runtime.js): the page as stdin input, the
// two OPENCLAW_LINK_* variables, the process tree killed on timeout. Prints the result as JSON.
// usage: node run_like_openclaw.mjs EXEC_MODULE EXPORT_NAME PAGE_FILE ARGV_JSON URL FINAL_URL
import { readFileSync } from "node:fs";

const [modulePath, exportName, pagePath, argvJson, url, finalUrl] = process.argv.slice(2);
const runCommandWithTimeout = (await import(modulePath))[exportName];
// OpenClaw decodes the fetched body as UTF-8 text before handing it over.
const input = readFileSync(pagePath, "utf8");
try {
  const result = await runCommandWithTimeout(JSON.parse(argvJson), {
    timeoutMs: 30000,
    input,
    killProcessTree: true,
    env: { OPENCLAW_LINK_FINAL_URL: finalUrl, OPENCLAW_LINK_URL: url },
  });
  console.log(JSON.stringify({ code: result.code, stdout: result.stdout, stderr: result.stderr }));
} catch (error) {
  console.log(JSON.stringify({ error: String(error) }));
}
