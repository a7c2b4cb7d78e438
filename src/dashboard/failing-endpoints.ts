import { EndpointView, EventsService } from '../notifications/events.service';

/** The seller's postback and webhook URLs marked failing, for the banner of the integrations pages and the overview. */
export async function failingEndpointsOf(events: EventsService, sellerId: number): Promise<EndpointView[]> {
  return (await events.endpoints(sellerId)).filter((endpoint) => endpoint.status === 'failing');
}
