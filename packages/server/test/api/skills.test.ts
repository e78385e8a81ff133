import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { collectPages } from "../support/paging.js";
import { useTestServer } from "../support/server.js";
import { ISO, sortedBy } from "./secrets-fixtures.js";
import { REVISION_ID, SKILL_ID, sendForm, skillFiles, skillMd, skillZip, tarGz, uploadSkill, zip, type Auth } from "./skills-fixtures.js";

const server = useTestServer();
const skillsPath = (orgId: string) => `/api/v1/orgs/${orgId}/skills`;

/** Archive keys in the blob store: what a refused upload must not add. */
async function storedArchives(): Promise<number> {
  return (await server.app.services.blobs.list("skills", undefined, 1000)).length;
}

async function refused(auth: Auth, orgId: string, archive: Buffer, message: RegExp) {
  const before = await storedArchives();
  const reply = await sendForm(server.url, "POST", skillsPath(orgId), auth, { owner: JSON.stringify({ kind: "org" }), archive: { file: archive } });
  expect(reply.status, reply.text).toBe(400);
  expect(reply.body).toEqual({ error: expect.any(String), code: "validation_failed", issues: [{ path: "/archive", message: expect.stringMatching(message) }] });
  expect(await storedArchives()).toBe(before);
}

describe("uploading skills", () => {
  it("takes a zip or a tar.gz, shows SKILL.md and the files, and makes the next revision for the same owner and name", async () => {
    const { token, org } = await server.api.userWithOrg();
    const auth = { token };
    const first = await uploadSkill(server.url, auth, org.id, { kind: "org" }, skillZip("release-notes"));
    expect(first).toEqual({
      id: expect.stringMatching(SKILL_ID),
      org_id: org.id,
      owner: { kind: "org" },
      name: "release-notes",
      revision_id: expect.stringMatching(REVISION_ID),
      revision: 1,
      description: "Use when testing release-notes.",
      skill_md: skillMd("release-notes"),
      files: [
        { path: "SKILL.md", size: Buffer.byteLength(skillMd("release-notes")) },
        { path: "templates/example.md", size: 10 },
      ],
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    });
    const md2 = skillMd("release-notes", "Use when writing release notes.", "Version two.\n");
    const second = await uploadSkill(server.url, auth, org.id, { kind: "org" }, await tarGz(skillFiles("release-notes", md2)));
    expect(second).toMatchObject({ id: first.id, revision: 2, description: "Use when writing release notes.", skill_md: md2, created_at: first.created_at });
    expect(second.revision_id).not.toBe(first.revision_id);
    const got = await server.api.get(`${skillsPath(org.id)}/${first.id}`, auth);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(second);

    // Another owner's skill of the same name is another skill.
    const mine = await uploadSkill(server.url, auth, org.id, { kind: "user" }, skillZip("release-notes"));
    expect(mine.id).not.toBe(first.id);
    expect(mine.owner).toEqual({ kind: "user", user_id: expect.stringMatching(/^usr_/) });
    expect(mine.revision).toBe(1);
  });

  it("finds SKILL.md at the root (with or without ./) or in a single top folder named as the skill", async () => {
    const { token, org } = await server.api.userWithOrg();
    const auth = { token };
    const root = await uploadSkill(server.url, auth, org.id, { kind: "org" }, zip([{ name: "SKILL.md", data: skillMd("at-root") }, { name: "docs/", data: "" }, { name: "docs/a.txt", data: "a" }]));
    expect(root.files).toEqual([{ path: "SKILL.md", size: expect.any(Number) }, { path: "docs/a.txt", size: 1 }]);
    const dotted = await tarGz([{ name: "./", type: "directory" }, { name: "./SKILL.md", data: skillMd("dotted") }]);
    expect((await uploadSkill(server.url, auth, org.id, { kind: "org" }, dotted)).name).toBe("dotted");
    const mac = zip([...skillFiles("from-finder"), { name: "__MACOSX/from-finder/._SKILL.md", data: "junk" }]);
    expect((await uploadSkill(server.url, auth, org.id, { kind: "org" }, mac)).files.map((f: any) => f.path)).toEqual(["SKILL.md", "templates/example.md"]);
    await refused(auth, org.id, zip(skillFiles("other-name", skillMd("the-name"))), /top folder "other-name" must be named as the skill, "the-name"/);
  });

  it("refuses archives with links, devices, escaping or absolute paths, and stores nothing", async () => {
    const { token, org } = await server.api.userWithOrg();
    const auth = { token };
    const good = skillFiles("safe");
    await refused(auth, org.id, zip([...good, { name: "safe/link", data: "/etc/passwd", mode: 0o120777 }]), /entry "safe\/link" is a link/);
    await refused(auth, org.id, await tarGz([...good, { name: "safe/link", type: "symlink", linkname: "/etc/passwd" }]), /is a link/);
    await refused(auth, org.id, await tarGz([...good, { name: "safe/hard", type: "link", linkname: "safe/SKILL.md" }]), /is a link/);
    await refused(auth, org.id, await tarGz([...good, { name: "safe/tty", type: "character-device", devmajor: 5, devminor: 0 }]), /device or special file/);
    await refused(auth, org.id, await tarGz([...good, { name: "safe/pipe", type: "fifo" }]), /device or special file/);
    await refused(auth, org.id, zip([...good, { name: "safe/../../evil.sh", data: "x" }]), /points outside the archive with \.\./);
    await refused(auth, org.id, await tarGz([...good, { name: "../evil.sh", data: "x" }]), /points outside the archive/);
    await refused(auth, org.id, zip([...good, { name: "..\\evil.sh", data: "x" }]), /points outside the archive/);
    await refused(auth, org.id, zip([...good, { name: "/etc/cron.d/evil", data: "x" }]), /absolute path/);
    await refused(auth, org.id, await tarGz([...good, { name: "/etc/cron.d/evil", data: "x" }]), /absolute path/);
    await refused(auth, org.id, zip([...good, { name: "C:/evil", data: "x" }]), /absolute path/);
    await refused(auth, org.id, zip([...good, { name: "safe/SKILL.md", data: "again" }]), /appears twice/);
  });

  it("enforces the entry, size and SKILL.md limits while reading, so a bomb never inflates", async () => {
    const { token, org } = await server.api.userWithOrg();
    const auth = { token };
    const many = Array.from({ length: 1000 }, (_, i) => ({ name: `many/f${i}.txt`, data: "x" }));
    await refused(auth, org.id, zip([{ name: "many/SKILL.md", data: skillMd("many") }, ...many]), /more than 1000 entries/);
    const zeros = Buffer.alloc(101 * 1024 * 1024);
    await refused(auth, org.id, zip([{ name: "SKILL.md", data: skillMd("bomb") }, { name: "zeros.bin", data: zeros }]), /extracts to more than 100 MiB/);
    // The central directory says 10 bytes; inflating stops at the lie rather than trusting it.
    await refused(auth, org.id, zip([{ name: "SKILL.md", data: skillMd("liar") }, { name: "zeros.bin", data: zeros, declaredSize: 10 }]), /not a valid zip file/);
    await refused(auth, org.id, await tarGz([{ name: "SKILL.md", data: skillMd("tarbomb") }, { name: "zeros.bin", data: zeros }]), /extracts to more than 100 MiB/);
    const huge = skillMd("huge", "Use when big.", "x".repeat(256 * 1024));
    await refused(auth, org.id, zip([{ name: "SKILL.md", data: huge }]), /SKILL\.md is larger than 256 KiB/);
  });

  it("refuses archives without a usable SKILL.md", async () => {
    const { token, org } = await server.api.userWithOrg();
    const auth = { token };
    await refused(auth, org.id, Buffer.from("just some text"), /neither a \.zip nor a \.tar\.gz/);
    await refused(auth, org.id, Buffer.from([0x1f, 0x8b, 1, 2, 3]), /not a valid \.tar\.gz/);
    await refused(auth, org.id, zip([{ name: "README.md", data: "hi" }]), /no SKILL\.md at the archive's root or inside its single top folder/);
    await refused(auth, org.id, zip([...skillFiles("one"), { name: "two/x.md", data: "x" }]), /no SKILL\.md/);
    await refused(auth, org.id, zip([{ name: "SKILL.md", data: "No front matter here." }]), /must start with YAML front matter/);
    await refused(auth, org.id, zip([{ name: "SKILL.md", data: "---\nname: [unclosed\n---\n" }]), /not valid YAML/);
    await refused(auth, org.id, zip([{ name: "SKILL.md", data: skillMd("Bad_Name") }]), /front matter name must be/);
    await refused(auth, org.id, zip([{ name: "SKILL.md", data: skillMd("x".repeat(65)) }]), /front matter name must be/);
    await refused(auth, org.id, zip([{ name: "SKILL.md", data: "---\nname: no-description\n---\nbody" }]), /must have a description/);
    await refused(auth, org.id, zip([{ name: "SKILL.md", data: skillMd("long", "d".repeat(1025)) }]), /description is longer than 1024 characters/);
    await refused(auth, org.id, zip([{ name: "SKILL.md", data: Buffer.from([0x2d, 0x2d, 0x2d, 0x0a, 0xff, 0xfe]) }]), /not valid UTF-8/);
    await refused(auth, org.id, zip([{ name: "SKILL.md", data: `${skillMd("nul")}\u0000` }]), /cannot be stored/);
  });

  it("refuses an archive over 25 MiB with 413 and malformed forms with 4xx in the envelope", async () => {
    const { token, org } = await server.api.userWithOrg();
    const auth = { token };
    const path = skillsPath(org.id);
    const big = await sendForm(server.url, "POST", path, auth, { owner: '{"kind":"org"}', archive: { file: randomBytes(25 * 1024 * 1024 + 1) } });
    expect(big.status, big.text).toBe(413);
    expect(big.body).toEqual({ error: expect.stringContaining("25 MiB"), code: "request_too_large" });

    const json = await server.api.post(path, { owner: { kind: "org" } }, auth);
    expect(json.status).toBe(415);
    expect(json.body.code).toBe("unsupported_media_type");
    const cases: Array<[Record<string, any>, string, RegExp]> = [
      [{ owner: '{"kind":"org"}' }, "/archive", /is required/],
      [{ archive: { file: skillZip("x") } }, "/owner", /is required/],
      [{ owner: "org", archive: { file: skillZip("x") } }, "/owner", /not valid JSON/],
      [{ owner: '{"kind":"team"}', archive: { file: skillZip("x") } }, "/owner/kind", /must be one of/],
      [{ owner: '{"kind":"project"}', archive: { file: skillZip("x") } }, "/owner/project_id", /is required/],
      [{ owner: '{"kind":"org"}', archive: "not a file" }, "/archive", /must be a file part/],
      [{ owner: '{"kind":"org"}', color: "red", archive: { file: skillZip("x") } }, "/color", /unknown field/],
    ];
    for (const [fields, at, message] of cases) {
      const reply = await sendForm(server.url, "POST", path, auth, fields);
      expect(reply.status, `${JSON.stringify(Object.keys(fields))}: ${reply.text}`).toBe(400);
      expect(reply.body).toEqual({ error: expect.any(String), code: "validation_failed", issues: [{ path: at, message: expect.stringMatching(message) }] });
    }
    expect(await server.api.get(path, auth)).toMatchObject({ status: 200, body: { data: [] } });
  });
});

describe("updating and deleting", () => {
  it("replaces only SKILL.md and keeps the other files, or takes a whole archive of the same name", async () => {
    const { token, org } = await server.api.userWithOrg();
    const auth = { token };
    const skill = await uploadSkill(server.url, auth, org.id, { kind: "org" }, skillZip("notes"));
    const path = `${skillsPath(org.id)}/${skill.id}`;
    const md = skillMd("notes", "Use when taking notes.", "Updated body.\n");
    const updated = await sendForm(server.url, "POST", path, auth, { skill_md: md });
    expect(updated.status, updated.text).toBe(200);
    // FormData sends text fields with CRLF line breaks (the HTML form rules); svc keeps the text as sent.
    const sent = md.replaceAll("\n", "\r\n");
    expect(updated.body).toMatchObject({ id: skill.id, revision: 2, description: "Use when taking notes.", skill_md: sent });
    expect(updated.body.files).toEqual([{ path: "SKILL.md", size: Buffer.byteLength(sent) }, { path: "templates/example.md", size: 10 }]);
    // As a file part too, as curl -F skill_md=@SKILL.md sends it.
    const asFile = await sendForm(server.url, "POST", path, auth, { skill_md: { file: Buffer.from(skillMd("notes")), filename: "SKILL.md" } });
    expect(asFile.body).toMatchObject({ revision: 3, skill_md: skillMd("notes") });
    const archived = await sendForm(server.url, "POST", path, auth, { archive: { file: await tarGz([{ name: "SKILL.md", data: skillMd("notes") }]) } });
    expect(archived.body).toMatchObject({ revision: 4, files: [{ path: "SKILL.md", size: expect.any(Number) }] });

    const renamed = await sendForm(server.url, "POST", path, auth, { skill_md: skillMd("other") });
    expect(renamed.status).toBe(400);
    expect(renamed.body.issues).toEqual([{ path: "/skill_md", message: expect.stringContaining('this skill is "notes"') }]);
    const otherArchive = await sendForm(server.url, "POST", path, auth, { archive: { file: skillZip("other") } });
    expect(otherArchive.body.issues).toEqual([{ path: "/archive", message: expect.stringContaining('this skill is "notes"') }]);
    const both = await sendForm(server.url, "POST", path, auth, { skill_md: md, archive: { file: skillZip("notes") } });
    expect(both.status).toBe(400);
    const none = await sendForm(server.url, "POST", path, auth, {});
    expect(none.status).toBe(400);
    expect(none.body.issues).toEqual([{ path: "", message: "send exactly one of archive and skill_md" }]);
    expect((await server.api.get(path, auth)).body.revision).toBe(4);
  });

  it("deletes a skill with its archives", async () => {
    const { token, org } = await server.api.userWithOrg();
    const auth = { token };
    const before = await storedArchives();
    const skill = await uploadSkill(server.url, auth, org.id, { kind: "org" }, skillZip("gone"));
    await sendForm(server.url, "POST", `${skillsPath(org.id)}/${skill.id}`, auth, { skill_md: skillMd("gone", "Again.") });
    expect(await storedArchives()).toBe(before + 2);
    expect((await server.api.delete(`${skillsPath(org.id)}/${skill.id}`, auth)).status).toBe(204);
    expect(await storedArchives()).toBe(before);
    expect((await server.api.get(`${skillsPath(org.id)}/${skill.id}`, auth)).status).toBe(404);
    expect((await server.api.delete(`${skillsPath(org.id)}/${skill.id}`, auth)).status).toBe(404);
  });
});

describe("listing", () => {
  it("filters by name glob and owner, and pages in every sort order", async () => {
    const { token, org, project } = await server.api.userWithOrg();
    const auth = { token };
    const made = [];
    for (const [name, owner] of [["alpha", { kind: "org" }], ["beta", { kind: "project", project_id: project.id }], ["gamma", { kind: "user" }], ["alpine", { kind: "org" }], ["delta", { kind: "org" }]] as const) {
      made.push(await uploadSkill(server.url, auth, org.id, owner, skillZip(name)));
    }
    const summaries = made.map(({ skill_md: _md, files: _files, ...rest }) => rest);
    const path = skillsPath(org.id);
    for (const sort of ["-created_at", "created_at", "name", "-name", "updated_at", "-updated_at"]) {
      const items = await collectPages(server.api, `${path}?limit=2&sort=${sort}`, auth);
      expect(items, sort).toEqual(sortedBy(summaries, sort));
    }
    expect(await collectPages(server.api, path, auth)).toEqual(sortedBy(summaries, "-created_at"));
    const names = async (query: string) => (await collectPages(server.api, `${path}?${query}`, auth)).map((s) => s.name);
    expect(await names("name=ALP*")).toEqual(["alpine", "alpha"]);
    expect(await names("name=?eta")).toEqual(["beta"]);
    expect(await names("owner_kind=org")).toEqual(["delta", "alpine", "alpha"]);
    expect(await names(`owner_kind=project&owner_project_id=${project.id}`)).toEqual(["beta"]);
    expect(await names("owner_kind=user")).toEqual(["gamma"]);
    for (const query of ["owner_kind=project", `owner_kind=org&owner_project_id=${project.id}`, `owner_project_id=${project.id}`, "owner_kind=team", "sort=size", "extra=1"]) {
      const reply = await server.api.get(`${path}?${query}`, auth);
      expect(reply.status, query).toBe(400);
      expect(reply.body.code, query).toBe("invalid_request");
    }
  });
});

describe("access", () => {
  it("lets a viewer list and read but not upload; hides skills from other orgs and other users", async () => {
    const owner = await server.api.userWithOrg();
    const orgId = owner.org.id;
    const auth = { token: owner.token };
    const orgSkill = await uploadSkill(server.url, auth, orgId, { kind: "org" }, skillZip("shared"));
    const projectSkill = await uploadSkill(server.url, auth, orgId, { kind: "project", project_id: owner.project.id }, skillZip("local"));
    const ownerOnly = await uploadSkill(server.url, auth, orgId, { kind: "user" }, skillZip("private"));

    const viewer = await server.api.orgMember(auth, orgId, "member");
    const role = await server.api.put(`/api/v1/orgs/${orgId}/members/${viewer.userId}/projects/${owner.project.id}`, { role: "viewer" }, auth);
    expect(role.status, role.text).toBe(200);
    const asViewer = { token: viewer.token };
    const listed = await collectPages(server.api, skillsPath(orgId), asViewer);
    expect(listed.map((s) => s.name).sort()).toEqual(["local", "shared"]);
    expect((await server.api.get(`${skillsPath(orgId)}/${projectSkill.id}`, asViewer)).status).toBe(200);
    expect((await server.api.get(`/api/v1/orgs/${orgId}/projects/${owner.project.id}/skills`, asViewer)).body.data.map((i: any) => i.skill.name)).toEqual(["local"]);
    for (const owner_ of [{ kind: "org" }, { kind: "project", project_id: owner.project.id }]) {
      const reply = await sendForm(server.url, "POST", skillsPath(orgId), asViewer, { owner: JSON.stringify(owner_), archive: { file: skillZip("nope") } });
      expect(reply.status, reply.text).toBe(403);
      expect(reply.body).toEqual({ error: expect.any(String), code: "forbidden" });
    }
    const update = await sendForm(server.url, "POST", `${skillsPath(orgId)}/${orgSkill.id}`, asViewer, { skill_md: skillMd("shared") });
    expect(update.status).toBe(403);
    expect((await server.api.delete(`${skillsPath(orgId)}/${orgSkill.id}`, asViewer)).status).toBe(403);
    // Another member's user skill does not exist for the viewer.
    expect((await server.api.get(`${skillsPath(orgId)}/${ownerOnly.id}`, asViewer)).status).toBe(404);
    // A viewer may still own skills of their own.
    expect((await uploadSkill(server.url, asViewer, orgId, { kind: "user" }, skillZip("viewer-notes"))).owner.kind).toBe("user");

    const key = await server.api.orgKey(owner.session, orgId, "admin");
    const keyUpload = await sendForm(server.url, "POST", skillsPath(orgId), { token: key.token }, { owner: '{"kind":"user"}', archive: { file: skillZip("k") } });
    expect(keyUpload.status).toBe(403);

    const other = await server.api.userWithOrg("Other");
    const asOther = { token: other.token };
    for (const path of [`${skillsPath(orgId)}/${orgSkill.id}`, skillsPath(orgId), `${skillsPath(orgId)}/${orgSkill.id}/grants`]) {
      const reply = await server.api.get(path, asOther);
      expect(reply.status, path).toBe(404);
      expect(reply.body.code).toBe("not_found");
    }
    const foreign = await sendForm(server.url, "POST", `${skillsPath(orgId)}/${orgSkill.id}`, asOther, { skill_md: skillMd("shared") });
    expect(foreign.status).toBe(404);
    expect((await server.api.delete(`${skillsPath(orgId)}/${orgSkill.id}`, asOther)).status).toBe(404);
  });
});
