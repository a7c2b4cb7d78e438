/** Splits a PostgreSQL URL into the database name and the same URL pointed at the maintenance database. */
export function describeDatabaseUrl(url: string): { databaseName: string; maintenanceUrl: string } {
  const parsed = new URL(url);
  const databaseName = decodeURIComponent(parsed.pathname.replace(/^\//, ''));
  const maintenance = new URL(url);
  maintenance.pathname = '/postgres';
  return { databaseName, maintenanceUrl: maintenance.toString() };
}
