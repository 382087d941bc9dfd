// Watches a crawl with the Firecrawl JS SDK's watcher and prints its events, as JSON, once it is done.
// Usage: node --experimental-websocket watch.mjs <apiUrl> <crawlId> (Node 20 has WebSocket only behind the flag;
// without one the watcher polls over HTTP instead).
import Firecrawl from "@mendable/firecrawl-js";

const [apiUrl, id] = process.argv.slice(2);
const client = new Firecrawl({ apiUrl, apiKey: process.env.FIRECRAWL_API_KEY ?? "" });
const watcher = client.watcher(id, { pollInterval: 30, timeout: 120 });
const events = { websocket: typeof globalThis.WebSocket === "function", snapshots: [], documents: [] };
watcher.on("snapshot", (snapshot) => events.snapshots.push({ status: snapshot.status, data: snapshot.data.length }));
watcher.on("document", (document) => events.documents.push(document.metadata?.sourceURL));
watcher.on("done", (done) => { events.done = { ...done, data: done.data.length }; });
watcher.on("error", (error) => { events.error = error; });
await watcher.start();
watcher.close();
process.stdout.write(JSON.stringify(events));
