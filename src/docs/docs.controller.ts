import { Controller, Get } from '@nestjs/common';
import { ApiExcludeController, OpenAPIObject } from '@nestjs/swagger';
import { AdminApi } from '../common/decorators/admin-auth.decorator';
import { ApiDocumentStore } from './api-documents';

/**
 * The whole OpenAPI document (operator API, metrics, sandbox and public API) behind the operator token:
 * in production the public /docs-json lists the public API only.
 */
@ApiExcludeController()
@Controller('admin/docs-json')
@AdminApi()
export class DocsController {
  constructor(private readonly documents: ApiDocumentStore) {}

  @Get()
  whole(): OpenAPIObject {
    return this.documents.get();
  }
}
