import { IncomingHttpHeaders } from 'node:http';

/**
 * How a provider's notifications enter (issue 37): the adapter declares where it is notified and what a
 * notification names; the one intake (src/intake) keeps the ids before answering, and its worker settles
 * each by asking the provider (the body is never trusted: ids only, then a fetch) through the handler the
 * money modules registered for that kind of object.
 */
export interface NotificationSource {
  /** The paths it is notified at (absolute, unguessable), each with the kind of object its notifications name. */
  readonly paths: ReadonlyArray<{ path: string; kind: string }>;
  /** Most ids of one kind waiting to be checked; a notification beyond it is answered 503 (sent again later). */
  readonly inboxMax: number;
  /**
   * The objects a notification at a path of `kind` names (ids only), or null when the body is not one
   * (answered 400, nothing kept). An object is of the path's kind unless it says otherwise (a PSP's one
   * callback naming Pix received and Pix sent), and of this source's provider unless it names another
   * (a sibling adapter on the same connection: Efí's sends on its API Pix webhook).
   */
  parse(kind: string, body: unknown): NotifiedObject[] | null;
  /** Kinds its notifications may name besides their paths' (each must have a handler). */
  readonly alsoNames?: readonly string[];
  /** What a notification of `kind` must look like: the 400's title and detail when a body is not one. */
  expected(kind: string): { title: string; detail: string };
  /** Registers its notification URLs with the provider, where the protocol allows (tried again until it succeeds). */
  register?(): Promise<void>;
  /**
   * Whether a post carries what the provider is configured to send with each notification (a static
   * header: Cielo's); a post that does not is answered 401 and nothing is kept. Absent: every post is taken.
   */
  authentic?(headers: IncomingHttpHeaders): boolean;
  /** A path's secret part, masked wherever a path is logged; null when none. */
  readonly secret: string | null;
}

/** One object a notification names: its id at the provider, of the path's kind and the source's provider unless given. */
export interface NotifiedObject {
  id: string;
  kind?: string;
  provider?: string;
  /**
   * What the notification says of it in the provider's own words (Efí's reason for a send NAO_REALIZADO,
   * which its look-up does not repeat): kept as text with what a look-up confirms, never what moves anything.
   */
  note?: string;
}
