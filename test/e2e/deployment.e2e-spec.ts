import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import jsQR from 'jsqr';
import { PNG } from 'pngjs';
import { cents } from '../../src/domain/money';
import { buildPixBrCode } from '../../src/domain/pix-br-code';

const root = join(__dirname, '..', '..');
const read = (file: string) => readFileSync(join(root, file), 'utf8');

/**
 * The service runs with the same node flags however it is started: `npm start` (which the benchmarks
 * read, bench/production-node.js) and the container's CMD. The old-space limit among them is what keeps
 * V8's heap growth, and so the peak memory the README states, to what was measured (issue 24).
 */
describe('Production start', () => {
  it('runs node with the same flags in `npm start` and in the Dockerfile, heap limits and no pretenuring among them', () => {
    const start = JSON.parse(read('package.json')).scripts.start as string;
    const startFlags = /\bnode((?: --\S+)*) dist\/src\/main\.js/.exec(start)?.[1].trim().split(' ');
    const cmd = /^CMD (\[.*\])$/m.exec(read('Dockerfile'))?.[1];
    expect(cmd).toBeDefined();
    const dockerArgs = JSON.parse(cmd as string) as string[];
    expect(dockerArgs[0]).toBe('node');
    expect(dockerArgs[dockerArgs.length - 1]).toBe('dist/src/main.js');
    expect(dockerArgs.slice(1, -1)).toEqual(startFlags);
    expect(startFlags).toContainEqual(expect.stringMatching(/^--max-old-space-size=\d+$/));
    expect(startFlags).toContainEqual(expect.stringMatching(/^--max-semi-space-size=\d+$/));
    expect(startFlags).toContain('--no-allocation-site-pretenuring');
  });
});

/**
 * The built service renders PIX QR codes in worker threads with a small heap (PixQrCodeRenderer's
 * resourceLimits, measured in issue 24); the e2e tests run the worker from the sources with room for
 * ts-node. This runs the built worker itself, as `npm start` does, on the longest codes a sale can make.
 */
describe('Production QR worker', () => {
  const built = join(root, 'dist', 'src', 'sales', 'pix-qr-code-renderer.js');

  it('renders thousands of the longest BR Codes within its heap limit, each decoding back to its code', async () => {
    expect(existsSync(built)).toBe(true); // `npm run build` (bash .ci/run builds before the tests)
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { PixQrCodeRenderer } = require(built) as typeof import('../../src/sales/pix-qr-code-renderer');
    const renderer = new PixQrCodeRenderer();
    const code = (n: number) =>
      buildPixBrCode({
        key: `${'comprador.'.repeat(6)}${String(n).padStart(5, '0')}@example.com.br`.slice(-77),
        amountCents: cents(99_999_999_99),
        merchantName: 'LOJA DE TESTES COM NOME LONGO',
        merchantCity: 'SAO JOSE DOS CAMPOS',
        txid: `SALE${String(n).padStart(21, '9')}`,
      });
    const decoded = (uri: string) => {
      const png = PNG.sync.read(Buffer.from(uri.replace(/^data:image\/png;base64,/, ''), 'base64'));
      return jsQR(new Uint8ClampedArray(png.data), png.width, png.height)?.data;
    };
    try {
      const rendered: string[] = [];
      for (let batch = 0; batch < 100; batch += 1) {
        rendered.push(...(await Promise.all(Array.from({ length: 32 }, (_, i) => renderer.render(code(batch * 32 + i))))));
      }
      expect(rendered).toHaveLength(3_200);
      for (const n of [0, 1_599, 3_199]) expect(decoded(rendered[n])).toBe(code(n));
    } finally {
      await renderer.onApplicationShutdown();
    }
  }, 120_000);
});
