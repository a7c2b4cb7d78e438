import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { DEVELOPMENT_ENCRYPTION_KEY } from '../../../src/config/app-config';
import { isLuhnValid } from '../../../src/domain/card';
import { SANDBOX_TEST_CARDS } from '../../../src/providers/sandbox/sandbox-payment.provider';
import { ADMIN_TOKEN } from './test-app';

/** What a reliability test tried, added up by the global teardown into the run's figures (README, Reliability). */
export interface ReliabilityFigures {
  /** Hostile requests sent (bodies, headers, query strings, path ids). */
  hostileInputs?: number;
  /** Faults injected, by kind: a killed backend, a stopped Redis, a killed process, a provider fault. */
  faults?: Record<string, number>;
  /** Events that had to reach a receiver through a fault, and how many of them did. */
  eventsExpected?: number;
  eventsDelivered?: number;
}

export function recordReliability(figures: ReliabilityFigures): void {
  const file = process.env.E2E_RELIABILITY_FILE;
  if (file) appendFileSync(file, `${JSON.stringify(figures)}\n`);
}

export function summarizeReliability(file: string): Required<ReliabilityFigures> {
  const total: Required<ReliabilityFigures> = { hostileInputs: 0, faults: {}, eventsExpected: 0, eventsDelivered: 0 };
  if (!existsSync(file)) return total;
  for (const line of readFileSync(file, 'utf8').split('\n').filter(Boolean)) {
    const figures = JSON.parse(line) as ReliabilityFigures;
    total.hostileInputs += figures.hostileInputs ?? 0;
    total.eventsExpected += figures.eventsExpected ?? 0;
    total.eventsDelivered += figures.eventsDelivered ?? 0;
    for (const [kind, count] of Object.entries(figures.faults ?? {})) total.faults[kind] = (total.faults[kind] ?? 0) + count;
  }
  return total;
}

/** Values that must never appear in a log line, and shapes of generated secrets. */
const FORBIDDEN_VALUES = [ADMIN_TOKEN, DEVELOPMENT_ENCRYPTION_KEY, ...Object.keys(SANDBOX_TEST_CARDS), '4485275742308327'];
const FORBIDDEN_SHAPES: Array<[string, RegExp]> = [
  ['a private key', /sk_[A-Za-z0-9_-]{20,}/],
  ['a postback secret', /whsec_[A-Za-z0-9+/_-]{20,}/],
  ['a CVV field', /"cvv"\s*:/i],
  ['a card number field', /"(number|cardNumber)"\s*:\s*"\d{13,19}"/],
  // The tests' API_PIX_WEBHOOK_URL: /psp/notifications/<its secret segment> (issue 35, M4).
  ['the PSP webhook path secret', /\/psp\/notifications\/[A-Za-z0-9_-]{22,}/],
];

/** Every log line of the run's apps, searched for secrets and card data: one finding per leaking line. */
export function scanLogs(file: string): { lines: number; leaks: string[] } {
  if (!existsSync(file)) return { lines: 0, leaks: [] };
  const lines = readFileSync(file, 'utf8').split('\n').filter((line) => line.trim() !== '');
  const leaks: string[] = [];
  for (const line of lines) {
    // Any run of 13 to 19 digits standing alone (not inside an alphanumeric id such as a Pix recurrence id,
    // RR + ISPB + date + random: 16+ digits that pass the Luhn check one time in ten) that passes the Luhn
    // check is a card number (the line's own timestamp aside).
    const cards = (line.replace(/"time":\d+/, '').match(/(?<![A-Za-z0-9])\d{13,19}(?![A-Za-z0-9])/g) ?? []).filter(isLuhnValid);
    const found = [
      ...(cards.length > 0 ? ['a card number'] : []),
      ...FORBIDDEN_VALUES.filter((value) => line.includes(value)).map((value) => `${value.slice(0, 6)}…`),
      ...FORBIDDEN_SHAPES.filter(([, shape]) => shape.test(line)).map(([name]) => name),
    ];
    if (found.length > 0) leaks.push(`${found.join(', ')} in ${line.slice(0, 200)}`);
  }
  return { lines: lines.length, leaks };
}
