import { Module } from '@nestjs/common';
import { ApiDocumentStore } from './api-documents';
import { DocsController } from './docs.controller';

@Module({
  controllers: [DocsController],
  providers: [ApiDocumentStore],
})
export class DocsModule {}
