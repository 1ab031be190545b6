// Fails when src/api/schema.d.ts is not what openapi-typescript generates from openapi.json
// (run `npm run gen:api` after refreshing the snapshot).
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const web = fileURLToPath(new URL("..", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "ars-api-"));
try {
  const fresh = join(dir, "schema.d.ts");
  execFileSync(
    process.execPath,
    [join(web, "node_modules/openapi-typescript/bin/cli.js"), join(web, "openapi.json"), "-o", fresh],
    { stdio: ["ignore", "ignore", "inherit"] },
  );
  const committed = readFileSync(join(web, "src/api/schema.d.ts"), "utf8");
  if (readFileSync(fresh, "utf8") !== committed) {
    console.error("src/api/schema.d.ts is stale: run `npm run gen:api` and commit the result.");
    process.exit(1);
  }
  console.log("src/api/schema.d.ts matches openapi.json");
} finally {
  rmSync(dir, { recursive: true, force: true });
}
