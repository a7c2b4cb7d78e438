import { Logger } from '@nestjs/common';
import { insideTransaction } from '../database/nested-connection.guard';

/**
 * The provider refused the request itself (a 4xx, a reference it cancelled or will not take): a final
 * answer, retrying under the same reference cannot help. Every port's refusal is one of these, so the
 * one skeleton below tells a refusal from an answer that did not come.
 */
export class ProviderRefusedError extends Error {}

/** What came of one call to a provider. */
export type ProviderOutcome<A> =
  /** The provider answered (an approval, a decline, "taken, will say later"…): applied by the caller. */
  | { kind: 'answered'; answer: A }
  /** The provider refused the request: the caller fails the operation (its money given back). */
  | { kind: 'refused'; reason: string }
  /** No answer (a timeout, a 5xx, a reset, the process killed): the operation is left pending, for the janitor. */
  | { kind: 'unknown' };

/**
 * One provider operation (issue 37): a card charge or a batch of them, a card void or refund, a PIX
 * charge, a PIX return, a payout, a Pix Automático charge or its cancellation. Every one takes the same
 * three steps:
 *   1. its intent persisted with our reference, in the caller's transaction (before `run`);
 *   2. `call`: the record's own provider asked under that reference, by `run`, outside any transaction;
 *   3. the outcome applied in one transaction: `apply` an answer, `fail` a refusal; an unknown outcome
 *      leaves the record pending, and the janitor (src/janitor) asks the record's provider about it by the
 *      same reference and applies what it says the same way.
 */
export interface ProviderOperation<R, A> {
  /** Its name in the log: "refund", "payout"… */
  readonly name: string;
  /** The provider that holds the record (written on it). */
  provider(record: R): string;
  /** Our reference the provider keeps it under (its idempotency key there). */
  reference(record: R): string;
  call(record: R): Promise<A>;
  apply(record: R, answer: A): Promise<void>;
  /** The provider refused it; omitted where a refusal is an answer of `call` (a card decline). */
  fail?(record: R, reason: string): Promise<void>;
}

const logger = new Logger('ProviderOperation');

/**
 * Steps 2 and 3 of `operation` on `record`: what came of it. Throws, before calling, when run inside a
 * database transaction (with DB_GUARD_NESTED_CONNECTIONS, as the e2e suite runs: a call there would hold
 * the transaction's connection and locks for as long as the provider takes). An outcome that could not
 * be applied (the database failing then) is logged and answered unknown: the record stays as persisted,
 * pending, and the janitor learns the outcome again from the provider.
 */
export async function runOperation<R, A>(operation: ProviderOperation<R, A>, record: R): Promise<ProviderOutcome<A>> {
  const outcome = await callProvider(operation, record);
  if (outcome.kind === 'unknown') return outcome;
  try {
    if (outcome.kind === 'answered') await operation.apply(record, outcome.answer);
    else if (operation.fail) await operation.fail(record, outcome.reason);
    else throw new Error(`A ${operation.name} was refused, and refusals of it are answers`);
    return outcome;
  } catch (error) {
    logger.error(
      { err: error, operation: operation.name, provider: operation.provider(record), reference: operation.reference(record) },
      `A ${operation.name}'s outcome was not saved; left pending for the janitor`,
    );
    return { kind: 'unknown' };
  }
}

/** Step 2 alone: the call, outside any transaction, its answer, refusal or silence (logged, for the janitor). */
export async function callProvider<R, A>(operation: Pick<ProviderOperation<R, A>, 'name' | 'provider' | 'reference' | 'call'>, record: R): Promise<ProviderOutcome<A>> {
  const provider = operation.provider(record);
  const reference = operation.reference(record);
  if (insideTransaction()) throw new Error(`A ${operation.name} (${provider}, ${reference}) was sent to its provider inside a database transaction`);
  try {
    return { kind: 'answered', answer: await operation.call(record) };
  } catch (error) {
    if (error instanceof ProviderRefusedError) {
      logger.warn({ operation: operation.name, provider, reference, reason: error.message }, `The provider refused a ${operation.name}`);
      return { kind: 'refused', reason: error.message };
    }
    logger.warn({ err: error, operation: operation.name, provider, reference }, `A ${operation.name} got no answer from its provider; left pending for the janitor`);
    return { kind: 'unknown' };
  }
}
