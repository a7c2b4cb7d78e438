import jsQR from 'jsqr';
import { PNG } from 'pngjs';
import * as QRCode from 'qrcode';
import { buildPixBrCode } from './pix-br-code';
import { cents } from './money';
import { qrPng } from './qr-png';

const brCode = buildPixBrCode({
  key: '7f6d9a3e-2c41-4b8e-9d0a-5e3f1c2b4a69',
  amountCents: cents(123456),
  merchantName: 'LOJA DA CONCEICAO',
  merchantCity: 'SAO PAULO',
  txid: 'SALE987654321',
});

describe('qrPng', () => {
  it.each([
    [brCode, 'M'],
    ['https://example.com/a-short-text', 'L'],
    ['x'.repeat(300), 'H'],
  ] as const)('writes a PNG that pngjs reads and jsQR decodes back to the text (%#)', (text, level) => {
    const { modules } = QRCode.create(text, { errorCorrectionLevel: level });
    const png = PNG.sync.read(qrPng(modules, { scale: 4, margin: 4 }));
    expect(png.width).toBe((modules.size + 8) * 4);
    expect(png.height).toBe(png.width);
    expect(jsQR(new Uint8ClampedArray(png.data), png.width, png.height)?.data).toBe(text);
  });

  it('draws each module as a scale × scale square inside a white quiet zone', () => {
    const matrix = { size: 2, get: (row: number, column: number) => row === column };
    const png = PNG.sync.read(qrPng(matrix, { scale: 3, margin: 1 }));
    const dark = (x: number, y: number) => png.data[(y * png.width + x) * 4] === 0;
    const pixels = Array.from({ length: 12 }, (_, y) => Array.from({ length: 12 }, (_, x) => (dark(x, y) ? '#' : '.')).join(''));
    expect(pixels).toEqual([
      '............',
      '............',
      '............',
      '...###......',
      '...###......',
      '...###......',
      '......###...',
      '......###...',
      '......###...',
      '............',
      '............',
      '............',
    ]);
  });
});
