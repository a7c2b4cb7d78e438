import { cnpj, cpf } from 'cpf-cnpj-validator';

export const PIX_KEY_TYPES = ['CPF', 'CNPJ', 'EMAIL', 'PHONE', 'RANDOM'] as const;
export type PixKeyType = (typeof PIX_KEY_TYPES)[number];

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const PHONE = /^\+55\d{10,11}$/;
const RANDOM = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Why a PIX key is not valid for its type, or null when it is (withdrawals, spec 4.5). */
export function pixKeyProblem(key: string, type: PixKeyType): string | null {
  if (key.length < 8 || key.length > 77) return 'pixKey must be 8 to 77 characters';
  const checks: Record<PixKeyType, [boolean, string]> = {
    CPF: [/^\d{11}$/.test(key) && cpf.isValid(key), 'pixKey must be a CPF: 11 digits with valid check digits'],
    CNPJ: [/^\d{14}$/.test(key) && cnpj.isValid(key), 'pixKey must be a CNPJ: 14 digits with valid check digits'],
    EMAIL: [EMAIL.test(key), 'pixKey must be an e-mail address'],
    PHONE: [PHONE.test(key), 'pixKey must be a phone number with +55 and 10 or 11 digits'],
    RANDOM: [RANDOM.test(key), 'pixKey must be a random key (a UUID)'],
  };
  const [valid, message] = checks[type];
  return valid ? null : message;
}

/** Whether `key` is a valid Pix key of any type (a key configured without its type). */
export function isPixKey(key: string): boolean {
  return PIX_KEY_TYPES.some((type) => pixKeyProblem(key, type) === null);
}

/**
 * Whether two spellings name the same Pix key: a CPF, CNPJ or phone with or without its punctuation, an
 * e-mail or random key in any case (a provider answers the key as it stored it, not as it was sent).
 */
export function samePixKey(a: string, b: string): boolean {
  const plain = (key: string) => key.trim().toLowerCase().replace(/[\s.()/-]/g, '');
  return plain(a) === plain(b);
}
