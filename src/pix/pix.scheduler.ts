import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { ExclusiveJob } from '../common/jobs/exclusive-job';
import { AppConfig } from '../config/app-config';
import { API_PIX, ApiPixProvider } from '../providers/api-pix/api-pix.provider';
import { ProviderRegistry } from '../providers/provider-registry';
import { AutomaticPixService } from '../payments/automatic-pix.service';
import { PixReceiptsService } from './pix-receipts.service';
import { PixReconciliationService, ReconciliationPass } from './pix-reconciliation.service';
import { ApiPixAutomaticProvider } from '../providers/api-pix/api-pix-automatic.provider';

/** How often the inbox is looked at when no notification kicked it (a retry due, another instance's). */
const INBOX_POLL_MS = 2000;
/** Wait between two tries at registering the webhook. */
const REGISTER_RETRY_MS = 30_000;

/**
 * Checks the PSP's notifications with the PSP, at once when one arrives, and every few seconds: the Pix
 * of pix_inbox, and Pix Automático's recurrences and recurring charges of automatic_pix_inbox.
 */
@Injectable()
export class PixInboxWorker {
  private readonly job = new ExclusiveJob<number>(new Logger('PixInbox'), 'PSP notifications checked', () => false);
  private again = false;

  constructor(
    private readonly receipts: PixReceiptsService,
    private readonly automaticPix: AutomaticPixService,
  ) {}

  /** A pass now (or right after the one running). */
  kick(): void {
    if (this.again) return;
    this.again = true;
    setImmediate(() => void this.run());
  }

  async run(): Promise<void> {
    this.again = false;
    await this.job.run(async () => {
      let checked = 0;
      for (let batch = await this.receipts.processInbox(); batch > 0; batch = await this.receipts.processInbox()) checked += batch;
      for (let batch = await this.automaticPix.processNotified(new Date()); batch > 0; batch = await this.automaticPix.processNotified(new Date())) checked += batch;
      return checked;
    });
  }
}

/**
 * With PIX_PROVIDER=api-pix: the webhook registered with the PSP at boot (PUT /webhook/{chave}, tried
 * again until it succeeds), the inbox worker's polling, and reconciliation every API_PIX_RECONCILE_SECONDS.
 */
@Injectable()
export class PixScheduler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(PixScheduler.name);
  private readonly reconcileJob = new ExclusiveJob<ReconciliationPass | null>(new Logger('PixReconciliation'), 'PIX reconciliation', (pass) => pass !== null && pass.applied + pass.chargesClosed > 0);
  private readonly timers: NodeJS.Timeout[] = [];
  private stopped = false;

  constructor(
    private readonly config: AppConfig,
    private readonly reconciliation: PixReconciliationService,
    private readonly inbox: PixInboxWorker,
    private readonly providers: ProviderRegistry,
  ) {}

  onApplicationBootstrap(): void {
    // The API Pix PSP's intake: its webhooks registered, its inbox drained, its Pix reconciled.
    if (!this.providers.isConfigured(API_PIX)) return;
    void this.registerWebhook(this.providers.pix(API_PIX) as ApiPixProvider);
    this.timers.push(setInterval(() => void this.inbox.run(), INBOX_POLL_MS));
    this.timers.push(setInterval(() => void this.reconcileJob.run(() => this.reconciliation.reconcile()), this.config.apiPix.reconcileSeconds * 1000));
  }

  onApplicationShutdown(): void {
    this.stopped = true;
    this.timers.forEach((timer) => clearInterval(timer));
  }

  private async registerWebhook(provider: ApiPixProvider): Promise<void> {
    const { webhookUrl } = this.config.apiPix;
    while (!this.stopped) {
      try {
        await provider.registerWebhook(webhookUrl);
        // Pix Automático's recurrences and recurring charges notify <webhookUrl>/rec and /cobr.
        const automatic = this.providers.configuredWith('automaticPix').find(({ name }) => name === API_PIX)?.adapter;
        if (automatic instanceof ApiPixAutomaticProvider) await automatic.registerWebhooks(webhookUrl);
        // The paths as routes, the secret segment never written (issue 35).
        const secret = this.config.apiPixWebhookSecret as string;
        const paths = Object.values(this.config.apiPixWebhookPaths ?? {}).map((path) => path.split(secret).join(':secret'));
        this.logger.log({ paths }, 'Webhooks registered with the PSP');
        return;
      } catch (error) {
        this.logger.error({ err: error }, 'Could not register the webhook with the PSP; trying again (reconciliation applies payments meanwhile)');
        await new Promise((resolve) => this.timers.push(setTimeout(resolve, REGISTER_RETRY_MS)));
      }
    }
  }
}
