import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, passwordProblem } from './password-policy';

describe('passwordProblem', () => {
  it('accepts a password of the minimum length and one of the maximum length', () => {
    expect(passwordProblem('a'.repeat(PASSWORD_MIN_LENGTH))).toBeNull();
    expect(passwordProblem('a'.repeat(PASSWORD_MAX_LENGTH))).toBeNull();
  });

  it('refuses a missing, short, too long or blank password, saying why', () => {
    expect(passwordProblem(undefined)).toBe('Informe a senha.');
    expect(passwordProblem('')).toBe('Informe a senha.');
    expect(passwordProblem('a'.repeat(PASSWORD_MIN_LENGTH - 1))).toContain('pelo menos');
    expect(passwordProblem('a'.repeat(PASSWORD_MAX_LENGTH + 1))).toContain('no máximo');
    expect(passwordProblem(' '.repeat(PASSWORD_MIN_LENGTH))).toContain('espaços');
  });

  it('counts characters, not UTF-16 units', () => {
    expect(passwordProblem('😀'.repeat(PASSWORD_MIN_LENGTH - 1))).toContain('pelo menos');
  });
});
