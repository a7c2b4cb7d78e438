import { randomBytes, randomUUID } from 'node:crypto';
import { ApiPixSimulator, makeCertificates } from './api-pix';
import { freePort } from './processes';
import { startApp, TestApp } from './test-app';

export interface GatewayOnPsp {
  psp: ApiPixSimulator;
  t: TestApp;
  /** The receiver's Pix key the PSP hangs its webhook on. */
  receiverKey: string;
  /** The webhook's path (`/psp/notifications/<secret>`) and its secret segment. */
  webhookPath: string;
  secret: string;
  close(): Promise<void>;
}

/**
 * An API Pix simulator (mutual TLS, OAuth) and the gateway pointed at it (PIX_PROVIDER=api-pix), listening
 * on a free loopback port where the PSP notifies it; reconciliation every second, PSP calls timed out at
 * 1.5 s. `env` adds or overrides variables.
 */
export async function startGatewayOnPsp(env: Record<string, string | undefined> = {}): Promise<GatewayOnPsp> {
  const receiverKey = randomUUID();
  const psp = await ApiPixSimulator.start({ certs: await makeCertificates(), clientId: 'gateway-e2e', clientSecret: randomBytes(16).toString('hex'), receiverKey });
  const port = await freePort();
  const secret = randomBytes(16).toString('hex');
  const webhookPath = `/psp/notifications/${secret}`;
  const t = await startApp({ ...psp.gatewayEnv(`http://127.0.0.1:${port}${webhookPath}`), API_PIX_RECONCILE_SECONDS: '1', API_PIX_TIMEOUT_MS: '1500', ...env });
  await t.app.listen(port, '127.0.0.1');
  return {
    psp,
    t,
    receiverKey,
    webhookPath,
    secret,
    close: async () => {
      await t.close();
      await psp.close();
    },
  };
}
