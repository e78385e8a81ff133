import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import type { SecretEnvelope } from "../../db/schema/secrets.js";

/**
 * Envelope encryption with AES-256-GCM: each payload gets a fresh 256-bit data key, and only that data
 * key is encrypted with the master key. `kid` names the master key (a digest of it) so a rotation can
 * tell which key wrapped which version. The associated data binds a ciphertext to its secret version.
 */
export class EnvelopeCipher {
  readonly kid: string;

  constructor(private readonly masterKey: Buffer) {
    if (masterKey.length !== 32) throw new Error("the master key must be 32 bytes");
    this.kid = createHash("sha256").update(masterKey).digest("hex").slice(0, 16);
  }

  seal(plaintext: Buffer, associatedData: string): SecretEnvelope {
    const dataKey = randomBytes(32);
    const wrapped = gcmEncrypt(this.masterKey, dataKey, `wrap:${associatedData}`);
    const body = gcmEncrypt(dataKey, plaintext, associatedData);
    return {
      alg: "A256GCM",
      kid: this.kid,
      wrapped_key: wrapped.ciphertext,
      wrap_nonce: wrapped.nonce,
      wrap_tag: wrapped.tag,
      nonce: body.nonce,
      ciphertext: body.ciphertext,
      tag: body.tag,
    };
  }

  open(envelope: SecretEnvelope, associatedData: string): Buffer {
    if (envelope.kid !== this.kid) throw new Error(`secret was sealed with another master key (${envelope.kid})`);
    const dataKey = gcmDecrypt(this.masterKey, envelope.wrapped_key, envelope.wrap_nonce, envelope.wrap_tag, `wrap:${associatedData}`);
    return gcmDecrypt(dataKey, envelope.ciphertext, envelope.nonce, envelope.tag, associatedData);
  }
}

function gcmEncrypt(key: Buffer, plaintext: Buffer, aad: string) {
  const nonce = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, nonce);
  cipher.setAAD(Buffer.from(aad));
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return { nonce: nonce.toString("base64"), ciphertext: ciphertext.toString("base64"), tag: cipher.getAuthTag().toString("base64") };
}

function gcmDecrypt(key: Buffer, ciphertext: string, nonce: string, tag: string, aad: string): Buffer {
  const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(nonce, "base64"));
  decipher.setAAD(Buffer.from(aad));
  decipher.setAuthTag(Buffer.from(tag, "base64"));
  return Buffer.concat([decipher.update(Buffer.from(ciphertext, "base64")), decipher.final()]);
}
