import { Global, Module } from '@nestjs/common';
import { Janitor } from './janitor.service';

/** The one janitor of pending provider operations, which the money modules register their kinds with. */
@Global()
@Module({ providers: [Janitor], exports: [Janitor] })
export class JanitorModule {}
