// The build emits JavaScript only; SQL migrations and static pages ship beside it.
import { cpSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
for (const dir of ["db/migrations"]) {
  cpSync(join(root, "src", dir), join(root, "dist", dir), { recursive: true });
}
