// Calls methods of the Firecrawl JS SDK against a server and prints what each returned or raised, as JSON.
// Usage: node call.mjs <apiUrl> '<json array of {client?: "v2"|"v1", method, args}>'; an argument "$0" is the
// id the previous call returned (a started crawl's), and one with `dataBase64` (a parse's file) has those bytes
// as its `data`.
import Firecrawl, { FirecrawlAppV1 } from "@mendable/firecrawl-js";

const [apiUrl, callsJson] = process.argv.slice(2);
const calls = JSON.parse(callsJson);
const apiKey = process.env.FIRECRAWL_API_KEY ?? ""; // empty: no key (v2 then sends no Authorization header)
const clients = { v2: new Firecrawl({ apiUrl, apiKey, maxRetries: 1 }), v1: new FirecrawlAppV1({ apiUrl, apiKey }) };

const bytes = (a) => {
  if (!a || typeof a !== "object" || typeof a.dataBase64 !== "string") return a;
  const { dataBase64, ...file } = a;
  return { ...file, data: Buffer.from(dataBase64, "base64") };
};

const outcomes = [];
let lastId = null;
for (const call of calls) {
  try {
    const args = (call.args ?? []).map((a) => (a === "$0" ? lastId : bytes(a)));
    const result = await clients[call.client ?? "v2"][call.method](...args);
    if (result && typeof result === "object" && typeof result.id === "string") lastId = result.id;
    outcomes.push({ ok: true, result });
  } catch (error) {
    outcomes.push({
      ok: false,
      error: { name: error?.name, message: String(error?.message ?? error), status: error?.status, code: error?.code },
    });
  }
}
process.stdout.write(JSON.stringify(outcomes));
