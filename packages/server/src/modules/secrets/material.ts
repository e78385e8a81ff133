import type { SecretEnvelope } from "../../db/schema/secrets.js";
import type { EnvelopeCipher } from "../../platform/crypto/envelope.js";
import { AppError, type Issue } from "../../platform/errors.js";
import type { SecretKind, SecretMaterial } from "./schemas.js";

/** Which sealed value this is. Changing this string makes every stored version unreadable. */
export interface SealedVersion {
  orgId: string;
  secretId: string;
  versionNumber: number;
  kind: SecretKind;
}

/**
 * The associated data bound into both GCM layers: a ciphertext copied to another secret, another
 * version or another org fails to open instead of yielding someone else's value.
 */
function associatedData(version: SealedVersion): string {
  return `svc.secret.v1:${version.orgId}:${version.secretId}:${version.versionNumber}:${version.kind}`;
}

export function sealMaterial(cipher: EnvelopeCipher, version: SealedVersion, material: SecretMaterial): SecretEnvelope {
  return cipher.seal(Buffer.from(JSON.stringify(material), "utf8"), associatedData(version));
}

export function openMaterial(cipher: EnvelopeCipher, version: SealedVersion, envelope: SecretEnvelope): SecretMaterial {
  const material = JSON.parse(cipher.open(envelope, associatedData(version)).toString("utf8")) as SecretMaterial;
  if (material.kind !== version.kind) throw new Error(`secret ${version.secretId} v${version.versionNumber} holds another kind`);
  return material;
}

/** The names of the fields a material carries, without `kind`, sorted: what a client may see of it. */
export function payloadKeys(material: SecretMaterial): string[] {
  return Object.keys(material)
    .filter((key) => key !== "kind")
    .sort();
}

/**
 * Rules the schema cannot say. Each problem is reported as an issue under `pointer` (where the
 * material sits in the request body), so a client sees the same shape as a schema failure.
 */
export function checkMaterial(material: SecretMaterial, pointer: string): void {
  const issues: Issue[] = [];
  if (material.kind === "oauth_token_set" && material.refresh) {
    if (!isHttpsOrLoopback(material.refresh.token_endpoint)) {
      issues.push({ path: `${pointer}/refresh/token_endpoint`, message: "must use https (http only on a loopback host)" });
    }
  }
  if (material.kind === "aws_credentials" && material.external_id !== undefined && material.role_arn === undefined) {
    issues.push({ path: `${pointer}/role_arn`, message: "is required when external_id is given" });
  }
  if (issues.length > 0) throw new AppError("validation_failed", "secret material failed validation", { issues });
}

function isHttpsOrLoopback(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.protocol === "https:") return true;
  if (url.protocol !== "http:") return false;
  const host = url.hostname;
  return host === "localhost" || host === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}
