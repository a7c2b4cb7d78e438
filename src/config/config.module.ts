import { Global, Module } from '@nestjs/common';
import { AppConfig } from './app-config';
import { validateEnvironment } from './env.schema';

/**
 * The validated environment as a typed AppConfig, read when the application is created (not when this
 * file is imported), so that nothing else reads process.env and each e2e test can start its own app.
 */
@Global()
@Module({
  providers: [{ provide: AppConfig, useFactory: () => new AppConfig(validateEnvironment(process.env)) }],
  exports: [AppConfig],
})
export class AppConfigModule {}
