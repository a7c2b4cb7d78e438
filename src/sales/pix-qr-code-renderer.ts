import { availableParallelism } from 'node:os';
import { extname, join } from 'node:path';
import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { Piscina } from 'piscina';

/** Whether this runs from the TypeScript sources (ts-node) rather than the build. */
const fromSources = extname(__filename) === '.ts';

/**
 * Renders the QR codes of PIX sales (pixQrCodeDataUri) in worker threads. Choosing the QR's mask and
 * compressing its PNG take about 2 ms of CPU per sale, the largest part of a PIX sale's work (issue 24's
 * profile): on the event loop they held up every other request meanwhile and kept the service on one
 * core. One thread per core but the event loop's, started on the first sale and retired when idle.
 */
@Injectable()
export class PixQrCodeRenderer implements OnApplicationShutdown {
  private readonly pool = new Piscina<string, string>({
    filename: join(__dirname, `pix-qr-code.worker${extname(__filename)}`),
    name: 'render',
    minThreads: 0,
    maxThreads: Math.max(1, availableParallelism() - 1),
    idleTimeout: 60_000,
    // A render holds a QR matrix and a PNG of a few KB; the compiled worker's live heap is about 8 MiB. V8
    // grows an old generation towards its limit before collecting it whole: at 48 MiB the service's RSS
    // rose by 20 MiB over five minutes of PIX sales, at 16 it stays flat. Under ts-node (the e2e tests)
    // the compiler itself lives in the worker's heap (about 36 MiB), so that one keeps more room.
    resourceLimits: fromSources ? { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 8 } : { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 4 },
    // Run from the TypeScript sources (the e2e tests), the worker compiles its module the same way.
    execArgv: fromSources ? ['--require', 'ts-node/register/transpile-only'] : [],
  });

  /** The PNG data URI of a BR Code (qrCodeBase64). */
  render(brCode: string): Promise<string> {
    return this.pool.run(brCode);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.pool.destroy();
  }
}
