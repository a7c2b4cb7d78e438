import { hasError, parsePix } from 'pix-utils';
import { PNG } from 'pngjs';
import jsQR from 'jsqr';
import * as QRCode from 'qrcode';
import { cents } from './money';
import { asciiField, buildPixBrCode, crc16, PixCodeError } from './pix-br-code';

const input = {
  key: '7f6d9a3e-2c41-4b8e-9d0a-5e3f1c2b4a69',
  amountCents: cents(12345),
  merchantName: 'Loja da Conceição Ltda de São Paulo',
  merchantCity: 'São José dos Campos',
  txid: 'SALE42',
};

describe('PIX BR Code', () => {
  it('computes the CRC16-CCITT of the BR Code manual', () => {
    expect(crc16('123456789')).toBe('29B1');
  });

  it('builds a code an independent parser (pix-utils) accepts, with the right key, amount, txid and CRC', () => {
    const code = buildPixBrCode(input);
    const parsed = parsePix(code);
    expect(hasError(parsed)).toBe(false);
    if (hasError(parsed)) return;
    expect(parsed).toMatchObject({
      type: 'STATIC',
      pixKey: input.key,
      transactionAmount: 123.45,
      merchantName: 'LOJA DA CONCEICAO LTDA DE',
      merchantCity: 'SAO JOSE DOS CA',
      txid: 'SALE42',
    });
  });

  it('round-trips through a QR PNG: encoded with qrcode, decoded with jsQR', async () => {
    const code = buildPixBrCode(input);
    const dataUri = await QRCode.toDataURL(code, { errorCorrectionLevel: 'M', margin: 2, width: 320 });
    const png = PNG.sync.read(Buffer.from(dataUri.replace(/^data:image\/png;base64,/, ''), 'base64'));
    expect(jsQR(new Uint8ClampedArray(png.data), png.width, png.height)?.data).toBe(code);
  });

  it('folds names to ASCII and keeps the txid to letters and digits', () => {
    expect(asciiField('  Ação Çedilha  ', 25)).toBe('ACAO CEDILHA');
    expect(buildPixBrCode({ ...input, txid: 'sale-42_x' })).toContain('0507sale42x');
  });

  it('refuses impossible codes', () => {
    expect(() => buildPixBrCode({ ...input, key: '' })).toThrow(PixCodeError);
    expect(() => buildPixBrCode({ ...input, key: 'x'.repeat(78) })).toThrow(PixCodeError);
    expect(() => buildPixBrCode({ ...input, amountCents: cents(0) })).toThrow(PixCodeError);
    expect(() => buildPixBrCode({ ...input, txid: '---' })).toThrow(PixCodeError);
  });
});
