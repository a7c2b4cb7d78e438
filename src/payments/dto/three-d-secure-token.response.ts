import { ApiProperty } from '@nestjs/swagger';

/** POST /api/cards/3ds-token: what the seller's checkout page needs to run Cielo's 3-D Secure 2.2 script (BP.Mpi). */
export class ThreeDSecureTokenResponse {
  @ApiProperty({ description: "The access token for the page's element of class bpmpi_accesstoken: single use, one per checkout load" })
  accessToken: string;

  @ApiProperty({ example: '2026-11-28T12:20:00.000Z', description: 'When the token expires' })
  expiresAt: string;

  @ApiProperty({
    enum: ['SDB', 'PRD', 'SANDBOX'],
    description: "bpmpi_config's Environment: SDB (Cielo's sandbox MPI) or PRD; SANDBOX under the gateway's sandbox acquirer, where no script runs (send the documented test values in card.threeDSecure)",
  })
  environment: 'SDB' | 'PRD' | 'SANDBOX';

  @ApiProperty({ nullable: true, type: String, example: 'https://mpi.braspag.com.br/Scripts/BP.Mpi.3ds21.min.js', description: "The script to load from the MPI's host; null under the sandbox" })
  scriptUrl: string | null;
}
