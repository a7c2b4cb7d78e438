import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { recordReliability } from './setup/reliability-report';

interface ChaosFigures {
  ledgerVerifyExitCode: number;
  ledgerSumCents: number;
  sales: number;
  salesInProcessing: number;
  keysWithMoreThanOneSale: number;
  withdrawals: number;
  chargeReferencesDuplicated: number;
  chargesWithoutSale: number;
  paidCardSalesWithoutCharge: number;
  approvedChargesOfUnpaidSales: number;
  mostPayoutsPerWithdrawal: number;
  payoutsWithoutWithdrawal: number;
  withdrawalsUnsent: number;
  saleStatusChanges: number;
  saleChangesWithoutEvent: number;
  saleEventsWithoutChange: number;
  withdrawalChangesWithoutEvent: number;
  outboxEvents: number;
  outboxNotDelivered: number;
  eventsNeverReceived: number;
  kills: number;
  backendsTerminated: number;
  driverExceptions: number;
  failures: string[];
}

const KILLS = 3;

/**
 * The short chaos run of CI (issue 20): `scripts/chaos.js` — the same script as `npm run chaos` — with a
 * few kills. It starts the service from source (src/main.ts through ts-node, as the other process tests
 * do) on a database of its own next to the run's, drives the mixed load while it SIGKILLs and restarts
 * the service and terminates its PostgreSQL backends, and checks the ledger, the sales, the sandbox's
 * charges and payouts, and the events, after recovery. The script exits 0 only when every check holds;
 * the figures it prints are asserted here too.
 */
describe('A short chaos run (scripts/chaos.js)', () => {
  it(`keeps money and events whole through ${KILLS} SIGKILLs and terminated PostgreSQL backends`, async () => {
    const child = spawn(process.execPath, [join(__dirname, '..', '..', 'scripts', 'chaos.js')], {
      cwd: join(__dirname, '..', '..'),
      env: {
        ...process.env,
        DATABASE_URL: process.env.E2E_DATABASE_URL,
        CHAOS_SERVICE: 'ts-node',
        CHAOS_KILLS: String(KILLS),
        CHAOS_KILL_EVERY_MS: '3000',
        CHAOS_PG_TERMINATE_EVERY_MS: '2500',
        CHAOS_TAIL_MS: '2000',
        CHAOS_CONCURRENCY: '4',
        CHAOS_SELLERS: '2',
        // A billing batch or recovery pass SIGKILLed after leasing its sales holds them for the lease's
        // minute (src/database/leases.ts); the recovery window covers it. A run with nothing leased ends early.
        CHAOS_RECOVERY_TIMEOUT_MS: '75000',
        CHAOS_KEEP_DATABASE: 'false',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));

    const line = output.split('\n').find((l) => l.startsWith('chaos-figures '));
    if (code !== 0 || !line) throw new Error(`the chaos run exited ${code}:\n${output.slice(-6000)}`);
    const figures = JSON.parse(line.slice('chaos-figures '.length)) as ChaosFigures;
    recordReliability({
      faults: { 'chaos-run SIGKILLs': figures.kills, 'chaos-run PostgreSQL backends terminated': figures.backendsTerminated },
      eventsExpected: figures.outboxEvents,
      eventsDelivered: figures.outboxEvents - figures.eventsNeverReceived,
    });

    expect(figures.failures).toEqual([]);
    expect(figures.kills).toBe(KILLS);
    expect(figures.backendsTerminated).toBeGreaterThan(0);
    expect(figures.driverExceptions).toBe(0);
    expect(figures.sales).toBeGreaterThan(20);
    expect(figures.withdrawals).toBeGreaterThan(0);
    // The ledger verifies to zero.
    expect(figures.ledgerVerifyExitCode).toBe(0);
    expect(figures.ledgerSumCents).toBe(0);
    // Every sale and withdrawal final or legitimately pending.
    expect(figures.salesInProcessing).toBe(0);
    expect(figures.keysWithMoreThanOneSale).toBe(0);
    expect(figures.withdrawalsUnsent).toBe(0);
    // At most one charge and one payout per reference, each for a sale or withdrawal of its kind.
    expect(figures.chargeReferencesDuplicated).toBe(0);
    expect(figures.chargesWithoutSale).toBe(0);
    expect(figures.paidCardSalesWithoutCharge).toBe(0);
    expect(figures.approvedChargesOfUnpaidSales).toBe(0);
    expect(figures.mostPayoutsPerWithdrawal).toBeLessThanOrEqual(1);
    expect(figures.payoutsWithoutWithdrawal).toBe(0);
    // Every status change produced its event, and every event was delivered and received.
    expect(figures.saleStatusChanges).toBeGreaterThan(0);
    expect(figures.saleChangesWithoutEvent).toBe(0);
    expect(figures.saleEventsWithoutChange).toBe(0);
    expect(figures.withdrawalChangesWithoutEvent).toBe(0);
    expect(figures.outboxEvents).toBeGreaterThan(0);
    expect(figures.outboxNotDelivered).toBe(0);
    expect(figures.eventsNeverReceived).toBe(0);
  }, 200_000);
});
