import { pixKeyProblem, samePixKey } from './pix-key';

describe('PIX keys', () => {
  it.each([
    ['52998224725', 'CPF'],
    ['11222333000181', 'CNPJ'],
    ['loja@example.com', 'EMAIL'],
    ['+5511987654321', 'PHONE'],
    ['+551133334444', 'PHONE'],
    ['7f6d9a3e-2c41-4b8e-9d0a-5e3f1c2b4a69', 'RANDOM'],
  ] as const)('accepts %s as %s', (key, type) => {
    expect(pixKeyProblem(key, type)).toBeNull();
  });

  it.each([
    ['52998224724', 'CPF'],
    ['5299822472', 'CPF'],
    ['11222333000180', 'CNPJ'],
    ['not-an-email', 'EMAIL'],
    ['11987654321', 'PHONE'],
    ['+1555123456789', 'PHONE'],
    ['not-a-uuid-at-all', 'RANDOM'],
    ['1234567', 'EMAIL'],
    [`${'a'.repeat(71)}@ex.com`, 'EMAIL'],
  ] as const)('refuses %s as %s', (key, type) => {
    expect(pixKeyProblem(key, type)).toEqual(expect.any(String));
  });
});

describe('samePixKey', () => {
  it('reads a key the same whatever its punctuation or case, and tells two keys apart', () => {
    expect(samePixKey('529.982.247-25', '52998224725')).toBe(true);
    expect(samePixKey('Loja@Example.com', 'loja@example.com')).toBe(true);
    expect(samePixKey('+55 (11) 98765-4321', '+5511987654321')).toBe(true);
    expect(samePixKey('7F6D9A3E-2C41-4B8E-9D0A-5E3F1C2B4A69', '7f6d9a3e-2c41-4b8e-9d0a-5e3f1c2b4a69')).toBe(true);
    expect(samePixKey('52998224725', '11144477735')).toBe(false);
    expect(samePixKey('loja@example.com', 'outra@example.com')).toBe(false);
  });
});
