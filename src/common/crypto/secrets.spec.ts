import { randomBytes, createCipheriv } from 'node:crypto';
import { decryptSecret, encryptSecret, isSealedWith, keyId, matchesSha256Hex, sha256Hex } from './secrets';

const k1 = randomBytes(32);
const k2 = randomBytes(32);

describe('sealed secrets with key ids', () => {
  it('names the sealing key in the ciphertext and opens with the current or a previous key', () => {
    const sealed = encryptSecret('whsec_abc', k1);
    expect(sealed.split('.').slice(0, 2)).toEqual(['v2', keyId(k1)]);
    expect(sealed).not.toContain('whsec_abc');
    expect(decryptSecret(sealed, { current: k1, previous: [] })).toBe('whsec_abc');
    expect(decryptSecret(sealed, { current: k2, previous: [k1] })).toBe('whsec_abc');
    expect(isSealedWith(sealed, k1)).toBe(true);
    expect(isSealedWith(sealed, k2)).toBe(false);
  });

  it('says which key is missing when none of the ring opens it', () => {
    expect(() => decryptSecret(encryptSecret('x', k1), { current: k2, previous: [] })).toThrow(new RegExp(keyId(k1)));
  });

  it('still opens the older v1 form (no key id) with any key of the ring', () => {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', k1, iv);
    const data = Buffer.concat([cipher.update('legacy', 'utf8'), cipher.final()]);
    const v1 = ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), data.toString('base64url')].join('.');
    expect(decryptSecret(v1, { current: k2, previous: [k1] })).toBe('legacy');
    expect(() => decryptSecret(v1, { current: k2, previous: [] })).toThrow(/no key/);
  });
});

describe('matchesSha256Hex', () => {
  it('matches a value with its stored digest only', () => {
    const stored = sha256Hex('sk_right');
    expect(matchesSha256Hex('sk_right', stored)).toBe(true);
    expect(matchesSha256Hex('sk_wrong', stored)).toBe(false);
    expect(matchesSha256Hex('sk_right', stored.toUpperCase())).toBe(false);
  });

  it('never matches a missing or malformed digest, nor the zeros it is compared with', () => {
    expect(matchesSha256Hex('', undefined)).toBe(false);
    expect(matchesSha256Hex('sk_any', null)).toBe(false);
    expect(matchesSha256Hex('sk_any', '')).toBe(false);
    expect(matchesSha256Hex('sk_any', '0'.repeat(64))).toBe(false);
    expect(matchesSha256Hex('sk_any', sha256Hex('sk_any').slice(0, 63))).toBe(false);
  });
});
