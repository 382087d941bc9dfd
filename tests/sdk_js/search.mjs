// Runs Firecrawl JS SDK search calls against a server and prints what the SDK returned, as JSON.
// Usage: node search.mjs <apiUrl> '<json array of {client: "v2"|"v1", query, options}>'
import Firecrawl, { FirecrawlAppV1 } from "@mendable/firecrawl-js";

const [apiUrl, callsJson] = process.argv.slice(2);
const calls = JSON.parse(callsJson);
const v2 = new Firecrawl({ apiUrl, maxRetries: 1 });
const v1 = new FirecrawlAppV1({ apiUrl, apiKey: "" });

const outcomes = [];
for (const call of calls) {
  try {
    const client = call.client === "v1" ? v1 : v2;
    const result = await client.search(call.query, call.options ?? {});
    outcomes.push({ ok: true, result });
  } catch (error) {
    outcomes.push({
      ok: false,
      error: { name: error?.name, message: String(error?.message ?? error), status: error?.status, code: error?.code },
    });
  }
}
process.stdout.write(JSON.stringify(outcomes));
