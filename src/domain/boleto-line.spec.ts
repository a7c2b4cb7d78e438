import { calculaMod10, identificarDataComNovoFator2025, validarBoleto } from '@mrmgomes/boleto-utils';
import { barcodeToLine, buildBoletoLine, BoletoLineError, dueDateFactor, lineToBarcode, mod10, mod11 } from './boleto-line';
import { cents } from './money';

describe('boleto typeable line (FEBRABAN)', () => {
  it('computes due-date factors across the 2025 rollover', () => {
    expect(dueDateFactor('2000-07-03')).toBe('1000');
    expect(dueDateFactor('2025-02-21')).toBe('9999');
    expect(dueDateFactor('2025-02-22')).toBe('1000');
    expect(dueDateFactor('2026-11-25')).toBe(String(1000 + 641));
  });

  it('computes the check digits as the independent library does', () => {
    for (const digits of ['001900000', '0271413080', '0000000017', '9999999999', '1234567890']) {
      expect(mod10(digits)).toBe(String(calculaMod10(digits)));
    }
    const barcode = lineToBarcode(buildBoletoLine({ bankCode: '341', amountCents: cents(999), dueDate: '2027-01-31', reference: 77 }));
    expect(mod11(barcode.slice(0, 4) + barcode.slice(5))).toBe(barcode[4]);
    expect(lineToBarcode(barcodeToLine(barcode))).toBe(barcode);
  });

  it('builds a line an independent validator (@mrmgomes/boleto-utils) accepts, with the right value and due date', () => {
    const line = buildBoletoLine({ bankCode: '001', amountCents: cents(123456), dueDate: '2026-11-25', reference: 4242 });
    expect(line).toMatch(/^\d{47}$/);
    const result = validarBoleto(line);
    expect(result).toMatchObject({ sucesso: true, tipoCodigoInput: 'LINHA_DIGITAVEL', tipoBoleto: 'BANCO', valor: 1234.56 });
    // The library's vencimento uses the pre-2025 factor base; its 2025-aware reader gives the due date.
    expect(identificarDataComNovoFator2025(line, 'LINHA_DIGITAVEL').toISOString().slice(0, 10)).toBe('2026-11-25');
    expect(lineToBarcode(line)).toBe(result.codigoBarras);
  });

  it('refuses impossible boletos', () => {
    const ok = { bankCode: '001', amountCents: cents(100), dueDate: '2026-11-25', reference: 1 };
    expect(() => buildBoletoLine({ ...ok, bankCode: '1' })).toThrow(BoletoLineError);
    expect(() => buildBoletoLine({ ...ok, amountCents: cents(0) })).toThrow(BoletoLineError);
    expect(() => buildBoletoLine({ ...ok, amountCents: cents(10_000_000_000) })).toThrow(BoletoLineError);
    expect(() => buildBoletoLine({ ...ok, dueDate: '1999-01-01' })).toThrow(BoletoLineError);
  });
});
