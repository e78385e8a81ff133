import { describe, expect, it } from "vitest";
import { databaseName } from "../../src/start-line.js";

describe("the database named in the start line", () => {
  it("is PostgreSQL's user, host and database, never its password or options", () => {
    const name = databaseName({ dataDir: "/data", databaseUrl: "postgres://svc:s3cret-pass@db.example:5432/svc?sslmode=require&password=also" });
    expect(name).toBe("PostgreSQL svc@db.example:5432/svc");
    expect(databaseName({ dataDir: "/data", databaseUrl: "host=db password=s3cret-pass" })).toBe("PostgreSQL (DATABASE_URL)");
  });

  it("is the embedded database's directory without DATABASE_URL", () => {
    expect(databaseName({ dataDir: "/data", databaseUrl: undefined })).toBe("embedded (PGlite) in /data/pgdata");
  });
});
