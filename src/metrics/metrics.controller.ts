import { Controller, Get, Header } from '@nestjs/common';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { AdminApi } from '../common/decorators/admin-auth.decorator';
import { ApiErrorResponses } from '../common/decorators/api-error-responses.decorator';
import { MetricsService } from './metrics.service';

/** Prometheus metrics, behind the operator token like the operator API (404 while ADMIN_TOKEN is unset). */
@Controller('metrics')
@AdminApi()
export class MetricsController {
  constructor(private readonly metrics: MetricsService) {}

  @Get()
  @Header('Content-Type', 'text/plain; version=0.0.4; charset=utf-8')
  @ApiOperation({ summary: 'Prometheus metrics: request durations, database pool, outbox lag, queue depth' })
  @ApiOkResponse({ description: 'The Prometheus text exposition format' })
  @ApiErrorResponses('account', ['UNAUTHORIZED', 'NOT_FOUND'])
  render(): Promise<string> {
    return this.metrics.render();
  }
}
