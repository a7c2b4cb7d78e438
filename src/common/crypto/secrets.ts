import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';

/** SHA-256 hex digest; private API keys are stored only as this. */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/** A SHA-256 hex digest held in 32 bytes of zeros' place when it is not one: compared, never matched. */
const NO_DIGEST = Buffer.alloc(32);
const HEX_DIGEST = /^[0-9a-f]{64}$/;

/**
 * Whether `value` hashes to `hexDigest` (as stored by sha256Hex), in time that does not depend on where
 * they differ: one hash of the value, compared with the stored digest's bytes. A missing or malformed
 * digest is compared too (with zeros) and never matches, so that an unknown key costs the same time.
 */
export function matchesSha256Hex(value: string, hexDigest: string | null | undefined): boolean {
  const stored = hexDigest && HEX_DIGEST.test(hexDigest) ? Buffer.from(hexDigest, 'hex') : null;
  const equal = timingSafeEqual(createHash('sha256').update(value, 'utf8').digest(), stored ?? NO_DIGEST);
  return equal && stored !== null;
}

/** Compares two strings in time that does not depend on where they differ (hashes both first). */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = createHash('sha256').update(a, 'utf8').digest();
  const right = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(left, right);
}

/** A random token with a prefix: pk_…, sk_…, whsec_…; 32 random bytes in base64url. */
export function randomToken(prefix: string, bytes = 32): string {
  return `${prefix}${randomBytes(bytes).toString('base64url')}`;
}

/** The key that seals new secrets, and older ones kept only to open what they sealed (ENCRYPTION_KEYS). */
export interface Keyring {
  current: Buffer;
  previous: Buffer[];
}

/** A key's id written in each ciphertext: the first 8 hex characters of its SHA-256 (not secret). */
export function keyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8);
}

/** AES-256-GCM, for secrets the service must read back (postback secrets). Form: v2.<key id>.iv.tag.data. */
export function encryptSecret(plain: string, key: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return ['v2', keyId(key), iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), data.toString('base64url')].join('.');
}

function open(key: Buffer, iv: string, tag: string, data: string): string {
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
}

/** A sealed secret that no key of the ring opens (or that is not a sealed secret at all): no retry will read it. */
export class SecretUnreadableError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'SecretUnreadableError';
  }
}

/**
 * Opens a sealed secret with the keyring: a v2 ciphertext names its key; a v1 one (before key ids) is
 * tried with each key. Throws SecretUnreadableError when no key of the ring opens it.
 */
export function decryptSecret(sealed: string, keys: Keyring | Buffer): string {
  try {
    return openWithRing(sealed, keys);
  } catch (error) {
    throw error instanceof SecretUnreadableError ? error : new SecretUnreadableError((error as Error).message);
  }
}

function openWithRing(sealed: string, keys: Keyring | Buffer): string {
  const ring = Buffer.isBuffer(keys) ? { current: keys, previous: [] } : keys;
  const all = [ring.current, ...ring.previous];
  const parts = sealed.split('.');
  if (parts[0] === 'v2' && parts.length === 5) {
    const key = all.find((candidate) => keyId(candidate) === parts[1]);
    if (!key) throw new SecretUnreadableError(`sealed with key ${parts[1]}, which is neither ENCRYPTION_KEY nor in ENCRYPTION_KEYS`);
    return open(key, parts[2], parts[3], parts[4]);
  }
  if (parts[0] === 'v1' && parts.length === 4) {
    for (const key of all) {
      try {
        return open(key, parts[1], parts[2], parts[3]);
      } catch {
        // try the next key
      }
    }
    throw new SecretUnreadableError('no key of ENCRYPTION_KEY or ENCRYPTION_KEYS opens it');
  }
  throw new SecretUnreadableError('Unknown secret format');
}

/** Whether a sealed secret is sealed with `key` already (re-encryption skips it). */
export function isSealedWith(sealed: string, key: Buffer): boolean {
  return sealed.startsWith(`v2.${keyId(key)}.`);
}

/** A key for one purpose derived from the service's master key (HKDF-SHA256), so that purposes never share a key. */
export function deriveKey(master: Buffer, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), purpose, 32));
}

/** HMAC-SHA256 hex digest: a fingerprint that cannot be computed, nor guessed back, without the key. */
export function hmacHex(key: Buffer, value: string): string {
  return createHmac('sha256', key).update(value, 'utf8').digest('hex');
}
