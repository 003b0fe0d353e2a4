// Fastify: keep the body as a Buffer for this content type, verify, then parse.
const fastify = require('fastify')();
const { verifyDelivery } = require('@tripwire/webhook-verify');

const secret = process.env.WEBHOOK_SECRET;
fastify.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) =>
  done(null, body),
);
fastify.post('/tripwire', async (req, reply) => {
  const check = await verifyDelivery(secret, req.headers, req.body);
  if (!check.ok) return reply.code(401).send(check.reason);
  const alert = JSON.parse(req.body.toString('utf8'));
  req.log.info({ deliveryId: check.deliveryId, level: alert.data.alertLevel }, check.event);
  return reply.code(200).send();
});
fastify.listen({ port: Number(process.env.PORT ?? 3000) });
