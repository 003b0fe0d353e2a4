import request from 'supertest';
import { createTestApp, testConfig, type TestApp } from '../support/test-app';

let built: TestApp;
let missing: TestApp;

beforeAll(async () => {
  built = await createTestApp();
  missing = await createTestApp({ config: testConfig({ CONSOLE_DIR: '/nonexistent/console' }) });
});
afterAll(async () => {
  await built.close();
  await missing.close();
});

describe('the console pages', () => {
  it('when a browser opens /, then it is sent to /console/', async () => {
    const res = await request(built.app).get('/');
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('/console/');
  });

  it('when /console/ is loaded, then the page comes with a same-origin-only policy and no caching surprises', async () => {
    const res = await request(built.app).get('/console/');
    expect(res.status).toBe(200);
    expect(res.type).toBe('text/html');
    expect(res.text).toContain('<script type="module" src="app.js">');
    expect(res.headers['content-security-policy']).toContain("default-src 'self'");
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['cache-control']).toBe('no-cache');
    expect((await request(built.app).get('/console/app.js')).type).toBe('text/javascript');
  });

  it('when the console was never built, then 503 says how to build it', async () => {
    const res = await request(missing.app).get('/console/');
    expect(res.status).toBe(503);
    expect(res.body.detail).toMatch(/npm run build:console/);
  });
});
