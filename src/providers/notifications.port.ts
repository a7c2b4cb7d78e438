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
  /** The ids of `kind` a notification body names, or null when the body is not one (answered 400, nothing kept). */
  parse(kind: string, body: unknown): string[] | null;
  /** What a notification of `kind` must look like: the 400's title and detail when a body is not one. */
  expected(kind: string): { title: string; detail: string };
  /** Registers its notification URLs with the provider, where the protocol allows (tried again until it succeeds). */
  register?(): Promise<void>;
  /** A path's secret part, masked wherever a path is logged; null when none. */
  readonly secret: string | null;
}
