import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { ExclusiveJob } from '../common/jobs/exclusive-job';
import { NotificationSource, NotifiedObject } from '../providers/notifications.port';
import { ProviderRegistry } from '../providers/provider-registry';
import { InboxItem, ProviderInboxRepository } from './provider-inbox.repository';

/** Settles one notified object: asks its provider about it and applies what the provider reports. */
/** Settles one notified object with its provider; `note` is what the notification said of it in the provider's words (text only, never trusted to move anything). */
export type Settle = (provider: string, objectId: string, note: string | null) => Promise<void>;

/** How many waiting ids one pass of the worker claims at a time. */
const BATCH = 50;
/** How often the inbox is looked at when no notification kicked it (a retry due, another instance's). */
const POLL_MS = 2000;
/** Wait between two tries at registering a provider's notification URLs. */
const REGISTER_RETRY_MS = 30_000;

/**
 * The one intake of providers' notifications (issue 37). A notification is kept in provider_inbox before
 * it is answered (ProviderIntakeMiddleware), and this worker, under a lease, settles each id through the
 * handler the money modules registered for its kind (`handle`): the handler asks the provider (the body is
 * never trusted) and applies its answer through the money pipeline. At boot each configured provider that
 * declares notifications registers its URLs with the provider, tried again until it succeeds.
 */
@Injectable()
export class ProviderIntake implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(ProviderIntake.name);
  private readonly job = new ExclusiveJob<number>(new Logger('ProviderInbox'), 'Provider notifications checked', () => false);
  private readonly handlers = new Map<string, Settle>();
  private readonly timers: NodeJS.Timeout[] = [];
  private again = false;
  private stopped = false;

  constructor(
    private readonly inbox: ProviderInboxRepository,
    private readonly providers: ProviderRegistry,
  ) {}

  /** The handler of notified objects of `kind` (one per kind, registered by the module that owns them). */
  handle(kind: string, settle: Settle): void {
    if (this.handlers.has(kind)) throw new Error(`Notifications of kind ${kind} already have a handler`);
    this.handlers.set(kind, settle);
  }

  /** The configured providers' notification sources. */
  sources(): Array<{ provider: string; source: NotificationSource }> {
    return this.providers.configuredWith('notifications').map(({ name, adapter }) => ({ provider: name, source: adapter }));
  }

  /**
   * Keeps every object a notification names, grouped by provider and kind (false when one group would
   * overfill its inbox: the groups kept before it stay, and checking them twice is harmless).
   */
  async keepAll(provider: string, source: NotificationSource, kind: string, named: NotifiedObject[]): Promise<boolean> {
    const groups = new Map<string, { provider: string; kind: string; ids: string[]; notes: Array<string | null> }>();
    for (const object of named) {
      const group = { provider: object.provider ?? provider, kind: object.kind ?? kind };
      const key = `${group.provider}\n${group.kind}`;
      const known = groups.get(key) ?? { ...group, ids: [], notes: [] };
      known.ids.push(object.id);
      known.notes.push(object.note ?? null);
      groups.set(key, known);
    }
    for (const group of groups.values()) if (!(await this.keep(group.provider, source, group.kind, group.ids, group.notes))) return false;
    return true;
  }

  /** Keeps a notification's ids (false, nothing kept, when they would overfill the inbox), then kicks the worker. */
  async keep(provider: string, source: NotificationSource, kind: string, objectIds: string[], notes: Array<string | null> = []): Promise<boolean> {
    if (objectIds.length === 0) return true;
    const kept = await this.inbox.enqueue(provider, kind, objectIds, source.inboxMax, notes);
    if (kept) this.kick();
    return kept;
  }

  /** Of these ids, those notified under a minute ago and not checked yet (the worker settles them). */
  notifiedUnchecked(provider: string, kind: string, objectIds: string[]): Promise<Set<string>> {
    return this.inbox.notifiedUnchecked(provider, kind, objectIds);
  }

  onApplicationBootstrap(): void {
    const sources = this.sources();
    if (sources.length === 0) return;
    for (const { provider, source } of sources) {
      for (const kind of [...source.paths.map((path) => path.kind), ...(source.alsoNames ?? [])]) {
        if (!this.handlers.has(kind)) throw new Error(`The notifications of ${provider} name ${kind}, which nothing handles`);
      }
    }
    for (const { provider, source } of sources) if (source.register) void this.register(provider, source);
    this.timers.push(setInterval(() => void this.run(), POLL_MS));
  }

  onApplicationShutdown(): void {
    this.stopped = true;
    this.timers.forEach((timer) => clearInterval(timer));
  }

  /** A pass now (or right after the one running). */
  kick(): void {
    if (this.again) return;
    this.again = true;
    setImmediate(() => void this.run());
  }

  /** Settles every notification due, batch after batch. */
  async run(): Promise<void> {
    this.again = false;
    await this.job.run(async () => {
      let checked = 0;
      for (let batch = await this.drain(); batch > 0; batch = await this.drain()) checked += batch;
      return checked;
    });
  }

  /** One batch: each id settled by its kind's handler, then dropped; one whose check fails is tried again later. How many were looked at. */
  private async drain(): Promise<number> {
    // This instance's providers only (those configured here: a source may name a sibling's objects, Efí's
    // sends on the API Pix webhook); another instance, configured with others, settles theirs.
    const providers = this.providers.configuredNames();
    if (providers.length === 0) return 0;
    const claimed = await this.inbox.claim(providers, BATCH);
    for (const item of claimed) await this.settle(item);
    return claimed.length;
  }

  private async settle(item: InboxItem): Promise<void> {
    const settle = this.handlers.get(item.kind);
    try {
      if (!settle) {
        // Asking again cannot help: dropped, and said.
        this.logger.error({ provider: item.provider, kind: item.kind, id: item.objectId }, 'A provider notification of a kind nothing handles was dropped');
        await this.inbox.done(item);
        return;
      }
      await settle(item.provider, item.objectId, item.note);
      await this.inbox.done(item);
    } catch (error) {
      this.logger.warn({ err: error, provider: item.provider, kind: item.kind, id: item.objectId }, 'A provider notification could not be checked with its provider; retrying later');
      await this.inbox.retry(item.id).catch(() => undefined);
    }
  }

  private async register(provider: string, source: NotificationSource): Promise<void> {
    while (!this.stopped) {
      try {
        await source.register?.();
        // The paths as routes, the secret segment never written (issue 35).
        const paths = source.paths.map(({ path }) => (source.secret ? path.split(source.secret).join(':secret') : path));
        this.logger.log({ provider, paths }, 'Webhooks registered with the provider');
        return;
      } catch (error) {
        this.logger.error({ err: error, provider }, 'Could not register the notification URLs with the provider; trying again (reconciliation settles what it misses meanwhile)');
        await new Promise((resolve) => this.timers.push(setTimeout(resolve, REGISTER_RETRY_MS)));
      }
    }
  }
}
