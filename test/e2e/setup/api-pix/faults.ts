import { ProblemType } from './problems';

/**
 * Faults a test plans for the next calls: answers replaced by an error status, calls held back before they
 * are handled, answers held back after (the call is handled, its answer written late), answers lost (the
 * call is handled, then the connection drops before the answer is written). By default they hit API calls
 * (`/v2/…`, and Efí's `/v3/…`) only, so a token request the client makes first does not use one up; a
 * `path` pattern can aim at `/oauth/token`.
 */
export interface FaultFilter {
  path?: RegExp;
  method?: string;
}

interface PlannedFault extends FaultFilter {
  remaining: number;
}

export interface PlannedFailure extends PlannedFault {
  status: number;
  /** The document's problem to answer (its status is the type's); the general one for `status` when absent. */
  problem?: { type: ProblemType; detail?: string };
  /** A body of another protocol to answer as is (Efí's `ErroEfi`), with `status`. */
  body?: unknown;
}

export interface PlannedDelay extends PlannedFault {
  ms: number;
}

const API_PATH = /^\/v\d+\//;

export class FaultPlan {
  private readonly failures: PlannedFailure[] = [];
  private readonly delays: PlannedDelay[] = [];
  private readonly drops: PlannedFault[] = [];
  private readonly holds: PlannedDelay[] = [];

  failNext(count: number, status: number, filter: FaultFilter, problem?: PlannedFailure['problem'], body?: unknown): void {
    if (count > 0) this.failures.push({ remaining: count, status, ...filter, ...(problem ? { problem } : {}), ...(body !== undefined ? { body } : {}) });
  }

  holdNext(count: number, ms: number, filter: FaultFilter): void {
    if (count > 0) this.holds.push({ remaining: count, ms, ...filter });
  }

  /** How long the answer to a handled call must be held before it is written, using one planned hold up. */
  takeHold(method: string, path: string): number {
    return take(this.holds, method, path)?.ms ?? 0;
  }

  delayNext(count: number, ms: number, filter: FaultFilter): void {
    if (count > 0) this.delays.push({ remaining: count, ms, ...filter });
  }

  dropNext(count: number, filter: FaultFilter): void {
    if (count > 0) this.drops.push({ remaining: count, ...filter });
  }

  /** Whether the answer to a call must be lost, using one planned drop up. */
  takeDrop(method: string, path: string): boolean {
    return take(this.drops, method, path) !== null;
  }

  /** The failure a call must answer, using one planned failure up; null when none applies. */
  takeFailure(method: string, path: string): PlannedFailure | null {
    return take(this.failures, method, path);
  }

  /** How long a call must wait before it is handled, using one planned delay up. */
  takeDelay(method: string, path: string): number {
    return take(this.delays, method, path)?.ms ?? 0;
  }
}

function take<T extends PlannedFault>(planned: T[], method: string, path: string): T | null {
  const found = planned.find((fault) => (fault.path ?? API_PATH).test(path) && (!fault.method || fault.method.toUpperCase() === method.toUpperCase()));
  if (!found) return null;
  found.remaining -= 1;
  if (found.remaining <= 0) planned.splice(planned.indexOf(found), 1);
  return found;
}
