/**
 * The API Pix + Efí simulator in a process of its own, for `CHAOS_PAYOUTS=efi npm run chaos` (scripts/chaos.js),
 * which SIGKILLs the service but must keep the PSP alive across its lives. Run through ts-node like the
 * e2e process tests run src/main.ts:
 *
 *   node -r ts-node/register/transpile-only test/e2e/setup/api-pix/chaos-launcher.ts
 *
 * It makes fresh mTLS certificates, starts the simulator (receiver key, OAuth client from the environment;
 * the payer key's webhook registration accepted as any PUT /webhook of that key) with Efí's send API,
 * and prints one JSON line on stdout once it listens:
 *   {"baseUrl", "tokenUrl", "controlUrl", "caFile", "clientCertFile", "clientKeyFile"}
 *
 * What it plays on its own:
 * - every send settles by itself (autoSettle REALIZADO after CHAOS_EFI_SETTLE_AFTER_MS), except a share
 *   CHAOS_EFI_REJECT_RATE settled NAO_REALIZADO first (each notified to the payer key's webhook; a
 *   callback that finds the service down is lost, as from Efí without retries);
 * - refunds and returns of received Pix settle DEVOLVIDO right after their PUT;
 * - with CHAOS_EFI_FAULTS=true, now and then one planned fault of the PSP: a send's answer lost after it
 *   was registered, a send answered 503 before anything was registered, a callback lost, a callback twice.
 *
 * Its control endpoint (plain HTTP on loopback, controlUrl):
 *   POST /pay {txid}   a payer pays the charge (200 {endToEndId}; 409 {error} when the PSP would not pay it)
 *   GET  /state        the sends (idEnvio, valor, status, endToEndId), the PUTs per idEnvio and those
 *                      answered 201, the Pix received, the faults played, the receiver key's webhook URL
 *                      (null until the service registered it) and the schema violations seen
 *
 * Environment: CHAOS_EFI_CLIENT_ID, CHAOS_EFI_CLIENT_SECRET, CHAOS_EFI_RECEIVER_KEY (required);
 * CHAOS_EFI_KEY_OWNERS (JSON: destination key -> {nome, cpf|cnpj}) [{}]; CHAOS_EFI_SETTLE_AFTER_MS [1500];
 * CHAOS_EFI_REJECT_RATE [0.15]; CHAOS_EFI_FAULTS [true]; CHAOS_EFI_FAULT_EVERY_SENDS (mean) [8].
 * SIGTERM or SIGINT: closes the simulator, removes the certificates, exits 0.
 */
import { rmSync } from 'node:fs';
import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import { once } from 'node:events';
import { AddressInfo } from 'node:net';
import { makeCertificates } from './certificates';
import type { EfiKeyOwner } from './efi-send';
import { ApiPixSimulator } from './simulator';

const env = process.env;

function required(name: string): string {
  const value = env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
}

async function main(): Promise<void> {
  const keyOwners = JSON.parse(env.CHAOS_EFI_KEY_OWNERS || '{}') as Record<string, EfiKeyOwner>;
  const settleAfterMs = Number(env.CHAOS_EFI_SETTLE_AFTER_MS ?? 1500);
  const rejectRate = Number(env.CHAOS_EFI_REJECT_RATE ?? 0.15);
  const faultsOn = (env.CHAOS_EFI_FAULTS ?? 'true') === 'true';
  const faultEvery = Number(env.CHAOS_EFI_FAULT_EVERY_SENDS ?? 8);

  const receiverKey = required('CHAOS_EFI_RECEIVER_KEY');
  const certs = await makeCertificates();
  const psp = await ApiPixSimulator.start({
    certs,
    clientId: required('CHAOS_EFI_CLIENT_ID'),
    clientSecret: required('CHAOS_EFI_CLIENT_SECRET'),
    receiverKey,
    efi: { keyOwners, autoSettle: { afterMs: settleAfterMs, status: 'REALIZADO' } },
  });
  psp.autoSettleRefunds('DEVOLVIDO');

  const faults = { answersLost: 0, sends503: 0, callbacksLost: 0, callbacksTwice: 0, rejected: 0, paid: 0, payRefused: 0 };
  // Sends already given their fate (NAO_REALIZADO now, or left to the auto-settlement).
  const decided = new Set<string>();
  let putsSeen = 0;
  let nextFaultAt = 1 + Math.floor(Math.random() * faultEvery * 2);
  const tick = setInterval(() => {
    for (const send of psp.efi.allSends()) {
      if (decided.has(send.idEnvio)) continue;
      decided.add(send.idEnvio);
      if (send.status !== 'EM_PROCESSAMENTO' || Math.random() >= rejectRate) continue;
      faults.rejected += 1;
      // Before the auto-settlement's timer (which settleSend cancels): the PSP did not make this Pix.
      setTimeout(() => void psp.efi.settleSend(send.idEnvio, 'NAO_REALIZADO', { codigo: 'AC03' }).catch(() => undefined), Math.random() * (settleAfterMs / 2));
    }
    if (!faultsOn) return;
    const puts = psp.efi.sendRequests().length;
    if (puts < putsSeen + nextFaultAt) return;
    putsSeen = puts;
    nextFaultAt = 1 + Math.floor(Math.random() * faultEvery * 2);
    const roll = Math.random();
    if (roll < 0.3) {
      psp.efi.dropAnswerNextSend(1);
      faults.answersLost += 1;
    } else if (roll < 0.5) {
      psp.efi.failNextSend(1, 503);
      faults.sends503 += 1;
    } else if (roll < 0.8) {
      psp.efi.loseCallbacks(1);
      faults.callbacksLost += 1;
    } else {
      psp.efi.duplicateCallbacks(1);
      faults.callbacksTwice += 1;
    }
  }, 50);

  const state = () => {
    const accepted: Record<string, number> = {};
    for (const request of psp.efi.sendRequests()) if (request.status === 201) accepted[request.idEnvio ?? ''] = (accepted[request.idEnvio ?? ''] ?? 0) + 1;
    return {
      sends: psp.efi.allSends().map(({ idEnvio, valor, status, endToEndId }) => ({ idEnvio, valor, status, endToEndId })),
      putsByIdEnvio: psp.efi.sendCountsByIdEnvio(),
      acceptedByIdEnvio: accepted,
      pix: psp.pixList().map(({ endToEndId, txid, valor }) => ({ endToEndId, txid: txid ?? null, valor })),
      faults,
      webhook: psp.webhookUrl(receiverKey) ?? null,
      violations: psp.violations.length,
      firstViolations: psp.violations.slice(0, 10),
    };
  };

  const control = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const answer = (status: number, body: unknown) => response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (request.method === 'GET' && request.url === '/state') return answer(200, state());
      if (request.method === 'POST' && request.url === '/pay') {
        let txid: unknown;
        try {
          txid = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { txid?: unknown }).txid;
        } catch {
          return answer(400, { error: 'the body is not JSON' });
        }
        if (typeof txid !== 'string') return answer(400, { error: 'txid is required' });
        psp.pay(txid).then(
          (pix) => {
            faults.paid += 1;
            answer(200, { endToEndId: pix.endToEndId });
          },
          (error: Error) => {
            faults.payRefused += 1;
            answer(409, { error: error.message });
          },
        );
        return;
      }
      answer(404, { error: `${request.method} ${request.url} is not a control of this launcher` });
    });
  });
  control.listen(0, '127.0.0.1');
  await once(control, 'listening');

  let closing = false;
  const close = async () => {
    if (closing) return;
    closing = true;
    clearInterval(tick);
    control.closeAllConnections();
    control.close();
    await Promise.race([psp.close(), new Promise((resolve) => setTimeout(resolve, 5000))]);
    rmSync(certs.dir, { recursive: true, force: true });
    process.exit(0);
  };
  process.on('SIGTERM', () => void close());
  process.on('SIGINT', () => void close());

  process.stdout.write(
    `${JSON.stringify({
      baseUrl: psp.baseUrl,
      tokenUrl: psp.tokenUrl,
      controlUrl: `http://127.0.0.1:${(control.address() as AddressInfo).port}`,
      caFile: certs.caFile,
      clientCertFile: certs.clientCertFile,
      clientKeyFile: certs.clientKeyFile,
    })}\n`,
  );
}

main().catch((error: Error) => {
  process.stderr.write(`chaos-launcher: ${error.stack ?? error.message}\n`);
  process.exit(2);
});
