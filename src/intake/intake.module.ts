import { MiddlewareConsumer, Module, NestModule, RequestMethod } from '@nestjs/common';
import { addPathSecret } from '../common/path-secrets';
import { ProvidersModule } from '../providers/providers.module';
import { ProviderInboxRepository } from './provider-inbox.repository';
import { ProviderIntakeMiddleware } from './provider-intake.middleware';
import { ProviderIntake } from './provider-intake.service';

/**
 * The one door of providers' notifications: every configured provider that declares a NotificationSource
 * is served on its paths (POST), kept in provider_inbox, and settled by one lease worker through the
 * handlers the money modules register (ProviderIntake.handle).
 */
@Module({
  imports: [ProvidersModule],
  providers: [ProviderInboxRepository, ProviderIntake, ProviderIntakeMiddleware],
  exports: [ProviderIntake],
})
export class IntakeModule implements NestModule {
  constructor(private readonly intake: ProviderIntake) {}

  configure(consumer: MiddlewareConsumer): void {
    // Their secret segments are masked in every log line and metric label from now on.
    for (const { source } of this.intake.sources()) addPathSecret(source.secret);
    const paths = this.intake.sources().flatMap(({ source }) => source.paths.map(({ path }) => path));
    if (paths.length > 0) consumer.apply(ProviderIntakeMiddleware).forRoutes(...paths.map((path) => ({ path, method: RequestMethod.POST })));
  }
}
