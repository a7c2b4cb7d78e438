import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { ExclusiveJob } from '../common/jobs/exclusive-job';
import { AppConfig } from '../config/app-config';

/** Counts of what one pass over a kind of pending operation did, by name (they are the sandbox scheduler's answer's fields). */
export type SettledCounts = Record<string, number>;

/**
 * A kind of provider operation that can be left pending: its intent persisted with our reference, the
 * provider called outside any transaction, its answer lost or not given yet (a card charge between its
 * two commits, a refund, a payout, the return of a Pix that paid no sale).
 */
export interface PendingOperations {
  /** Its name in the log. */
  readonly name: string;
  /**
   * One pass over what is left pending (of one seller, or null: all): each record asked of its own
   * provider by our reference, and the answer applied, the record tried again later (its own backoff) or
   * failed. Kinds that are not a seller's answer nothing for a seller.
   */
  settle(sellerId: number | null, now: Date): Promise<SettledCounts>;
}

/**
 * The one janitor of provider operations left pending (issue 37): every kind registers here
 * (`register`, from its module's onModuleInit) and one timer, every JANITOR_SECONDS, runs a pass over
 * all of them, one kind after another, one failing kind not holding back the others. The sandbox's
 * scheduler route runs the same pass for one seller. Each kind claims its records under its own lease
 * (several instances never ask about one together) and asks the record's own provider.
 */
@Injectable()
export class Janitor implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(Janitor.name);
  private readonly kinds: PendingOperations[] = [];
  private readonly job = new ExclusiveJob<SettledCounts>(new Logger('Janitor'), 'Pending provider operations', (counts) => Object.values(counts).some((n) => n > 0));
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly config: AppConfig) {}

  register(kind: PendingOperations): void {
    if (this.kinds.some((known) => known.name === kind.name)) throw new Error(`Pending operations ${kind.name} registered twice`);
    this.kinds.push(kind);
  }

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.job.run(() => this.pass(null, new Date())), this.config.janitorSeconds * 1000);
  }

  onApplicationShutdown(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** One pass over every kind (of one seller, or all); the counts of every kind together. */
  async pass(sellerId: number | null, now: Date): Promise<SettledCounts> {
    const counts: SettledCounts = {};
    for (const kind of this.kinds) {
      try {
        Object.assign(counts, await kind.settle(sellerId, now));
      } catch (error) {
        this.logger.error({ err: error, kind: kind.name }, 'A pass over pending provider operations failed; the next pass tries again');
      }
    }
    return counts;
  }
}
