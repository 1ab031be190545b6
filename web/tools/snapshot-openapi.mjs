// Refreshes web/openapi.json from a running server: `npm run snapshot:api [-- http://host:port]`.
// The snapshot is the server's document re-indented (2 spaces) so that reviews show real diffs.
import { writeFile } from "node:fs/promises";

const base = process.argv[2] ?? "http://127.0.0.1:8080";
const response = await fetch(new URL("/api/openapi.json", base));
if (!response.ok) {
  console.error(`GET /api/openapi.json answered ${response.status}`);
  process.exit(1);
}
const document = await response.json();
await writeFile(new URL("../openapi.json", import.meta.url), `${JSON.stringify(document, null, 2)}\n`);
console.log(`openapi.json updated from ${base}`);
