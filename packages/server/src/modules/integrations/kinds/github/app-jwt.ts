import { createPrivateKey, createSign, type KeyObject } from "node:crypto";

/**
 * A GitHub App JWT (GitHub docs: "Generating a JSON Web Token (JWT) for a GitHub App"): RS256, issued by
 * the app id, backdated 60 seconds against clock drift and valid for 9 minutes (GitHub allows 10).
 */
export function appJwt(appId: string, key: KeyObject, nowSeconds = Math.floor(Date.now() / 1000)): string {
  const encode = (part: object) => Buffer.from(JSON.stringify(part)).toString("base64url");
  const unsigned = `${encode({ alg: "RS256", typ: "JWT" })}.${encode({ iat: nowSeconds - 60, exp: nowSeconds + 540, iss: appId })}`;
  const signature = createSign("RSA-SHA256").update(unsigned).sign(key).toString("base64url");
  return `${unsigned}.${signature}`;
}

/** The App's PEM private key, or undefined when it is not an RSA private key. */
export function appPrivateKey(pem: string): KeyObject | undefined {
  try {
    const key = createPrivateKey(pem);
    return key.asymmetricKeyType === "rsa" ? key : undefined;
  } catch {
    return undefined;
  }
}
