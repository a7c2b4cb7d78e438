import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { ExclusiveJob } from '../common/jobs/exclusive-job';
import { AppConfig } from '../config/app-config';
import { API_PIX } from '../providers/api-pix/api-pix.provider';
import { ProviderRegistry } from '../providers/provider-registry';
import { PixReconciliationService, ReconciliationPass } from './pix-reconciliation.service';

/** With the API Pix PSP configured: reconciliation every API_PIX_RECONCILE_SECONDS (its notifications enter through the intake). */
@Injectable()
export class PixScheduler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly reconcileJob = new ExclusiveJob<ReconciliationPass | null>(new Logger('PixReconciliation'), 'PIX reconciliation', (pass) => pass !== null && pass.applied + pass.chargesClosed > 0);
  private readonly timers: NodeJS.Timeout[] = [];

  constructor(
    private readonly config: AppConfig,
    private readonly reconciliation: PixReconciliationService,
    private readonly providers: ProviderRegistry,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.providers.isConfigured(API_PIX)) return;
    this.timers.push(setInterval(() => void this.reconcileJob.run(() => this.reconciliation.reconcile()), this.config.apiPix.reconcileSeconds * 1000));
  }

  onApplicationShutdown(): void {
    this.timers.forEach((timer) => clearInterval(timer));
  }
}
