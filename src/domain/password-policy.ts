/** Dashboard passwords: long enough to resist guessing, short enough that hashing stays cheap. */
export const PASSWORD_MIN_LENGTH = 10;
export const PASSWORD_MAX_LENGTH = 128;

/** Why this password cannot be used (pt-BR, shown next to the field), or null when it can. */
export function passwordProblem(password: unknown): string | null {
  if (typeof password !== 'string' || password.length === 0) return 'Informe a senha.';
  const length = [...password].length;
  if (length < PASSWORD_MIN_LENGTH) return `A senha precisa ter pelo menos ${PASSWORD_MIN_LENGTH} caracteres.`;
  if (length > PASSWORD_MAX_LENGTH) return `A senha pode ter no máximo ${PASSWORD_MAX_LENGTH} caracteres.`;
  if (password.trim().length === 0) return 'A senha não pode ser só espaços.';
  return null;
}
