import { Injectable } from '@nestjs/common';
import { PayoutProvider, PayoutRequest } from '../payout-provider.port';

/** The sandbox payout provider: accepts every payout; its callbacks are the sandbox cashout events route. */
@Injectable()
export class SandboxPayoutProvider implements PayoutProvider {
  async requestPayout(request: PayoutRequest): Promise<{ externalId: string }> {
    return { externalId: `sbx_po_${request.withdrawalId}` };
  }
}
