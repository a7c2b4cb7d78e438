import { adminHeaders } from './setup/factories';
import { startApp, TestApp } from './setup/test-app';

type Document = { paths: Record<string, Record<string, { tags?: string[] }>>; components: { schemas?: Record<string, unknown>; securitySchemes?: Record<string, unknown> } };

const PRODUCTION = {
  NODE_ENV: 'production',
  ENCRYPTION_KEY: 'ab'.repeat(32),
  SESSION_SECRET: 'api-docs-session-secret-0123456789abcdef',
};

const operatorOrSandbox = (path: string) => /^\/(admin|metrics)(\/|$)|^\/api\/sandbox(\/|$)/.test(path);

/**
 * The public API reference (/docs, /docs-json) lists the operator API (/admin, /metrics) and the sandbox
 * (/api/sandbox) only where they are meant to be seen (issue 19, point 7): in production never (the
 * operator reads the whole document at /admin/docs-json with the token); elsewhere while they are on.
 */
describe('The API reference', () => {
  describe('in production', () => {
    let t: TestApp;

    beforeAll(async () => {
      t = await startApp(PRODUCTION);
    });
    afterAll(() => t.close());

    it('lists the public API only, with no operator or sandbox route, schema or security scheme', async () => {
      const document = (await t.http.get('/docs-json').expect(200)).body as Document;
      const paths = Object.keys(document.paths);
      expect(paths).toEqual(expect.arrayContaining(['/api/sales', '/api/transactions/{id}', '/api/seller', '/api/public/balance', '/api/public/cashout', '/api/subscriptions', '/health']));
      expect(paths.filter(operatorOrSandbox)).toEqual([]);
      const tags = new Set(Object.values(document.paths).flatMap((methods) => Object.values(methods).flatMap((operation) => operation.tags ?? [])));
      expect([...tags].filter((tag) => tag === 'Operator' || tag === 'Sandbox')).toEqual([]);
      expect(Object.keys(document.components.securitySchemes ?? {})).not.toContain('adminToken');
      const schemas = Object.keys(document.components.schemas ?? {});
      const operatorSchemas = ['CreateSellerDto', 'UpdateSellerDto', 'AdminSellerResponse', 'CreatedSellerResponse', 'KeyPairResponse', 'InvitationResponse', 'SettingsDto', 'SettingsResponse', 'DeliveryResponse', 'PostbackSecretResponse', 'CreateWebhookDto', 'WebhookResponse', 'SaleEventDto', 'WithdrawalEventDto', 'SchedulerRunDto', 'SchedulerRunResponse'];
      expect(schemas.filter((name) => operatorSchemas.includes(name))).toEqual([]);
      expect(schemas).toEqual(expect.arrayContaining(['SellerAccountResponse']));
      const page = await t.http.get('/docs/swagger-ui-init.js').expect(200);
      expect(page.text).toContain('/api/sales');
      expect(page.text).not.toContain('/admin/sellers');
      expect(page.text).not.toContain('/api/sandbox');
    });

    it('gives the operator the whole document at /admin/docs-json, with the admin token only', async () => {
      await t.http.get('/admin/docs-json').expect(401);
      const document = (await t.http.get('/admin/docs-json').set(adminHeaders).expect(200)).body as Document;
      expect(Object.keys(document.paths)).toEqual(expect.arrayContaining(['/api/sales', '/admin/sellers', '/admin/sellers/{id}', '/metrics', '/api/sandbox/scheduler/run']));
      expect(Object.keys(document.components.schemas ?? {})).toEqual(expect.arrayContaining(['AdminSellerResponse', 'SchedulerRunResponse', 'SellerAccountResponse']));
      expect(Object.keys(document.paths)).not.toContain('/admin/docs-json');
    });
  });

  describe('outside production', () => {
    it('lists the operator API only while ADMIN_TOKEN is set (it answers 404 otherwise), and the sandbox while it is the provider', async () => {
      const off = await startApp({ ADMIN_TOKEN: undefined });
      const on = await startApp();
      try {
        const withoutToken = Object.keys(((await off.http.get('/docs-json').expect(200)).body as Document).paths);
        expect(withoutToken.filter((path) => /^\/(admin|metrics)(\/|$)/.test(path))).toEqual([]);
        expect(withoutToken).toEqual(expect.arrayContaining(['/api/sales', '/api/sandbox/scheduler/run']));
        const withToken = Object.keys(((await on.http.get('/docs-json').expect(200)).body as Document).paths);
        expect(withToken).toEqual(expect.arrayContaining(['/api/sales', '/admin/sellers', '/metrics', '/api/sandbox/scheduler/run']));
      } finally {
        await off.close();
        await on.close();
      }
    });
  });
});
