// A Fetch-API handler (Request in, Response out): the shape Cloudflare Workers, Deno, Bun, Hono
// and Next.js route handlers share. The headers are the request's `Headers`; the body is read as
// bytes, verified, and only then parsed.
//   Cloudflare Workers: this module as it is (`env` holds the secrets).
//   Deno: Deno.serve((request) => receiver.fetch(request, Deno.env.toObject()));
//   Bun:  Bun.serve({ fetch: (request) => receiver.fetch(request, Bun.env) });
//   Next.js (app/tripwire/route.js): export const POST = (request) => receiver.fetch(request, process.env);
import { verifyDelivery } from '@tripwire/webhook-verify';

const receiver = {
  async fetch(request, env) {
    // During a secret rotation's overlap, give both: either one verifies.
    const secrets = [env.WEBHOOK_SECRET, env.WEBHOOK_PREVIOUS_SECRET].filter(Boolean);
    const raw = await request.arrayBuffer();
    const check = await verifyDelivery(secrets, request.headers, raw);
    if (!check.ok) return new Response(check.reason, { status: 401 });
    // check.deliveryId repeats on retries and resends: drop one you already have.
    const alert = JSON.parse(new TextDecoder().decode(raw));
    console.log(`${check.event} ${check.deliveryId} ${alert.data.alertLevel}`);
    return new Response(null, { status: 200 });
  },
};
export default receiver;
