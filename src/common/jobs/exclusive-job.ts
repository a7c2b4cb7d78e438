import { Logger } from '@nestjs/common';

/**
 * A scheduled job's body run at most once at a time in this process (a pass still running when the next
 * tick comes is not started again), with its outcome logged. Instances share the work through their own
 * claims (SKIP LOCKED, leases); this only keeps one process from overlapping itself.
 */
export class ExclusiveJob<T> {
  private running = false;

  constructor(
    private readonly logger: Logger,
    private readonly name: string,
    private readonly worthLogging: (result: T) => boolean,
  ) {}

  async run(body: () => Promise<T>): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      const result = await body();
      if (this.worthLogging(result)) this.logger.log(result, `${this.name} done`);
    } catch (error) {
      this.logger.error({ err: error }, `${this.name} failed`);
    } finally {
      this.running = false;
    }
  }
}
