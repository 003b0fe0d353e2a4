// Express: verify on the raw bytes. express.json() would re-serialise the body and break the
// signature, so this route takes express.raw() and parses the JSON only once it is verified.
const express = require('express');
const { verifyDelivery } = require('@tripwire/webhook-verify');

// During a secret rotation's overlap, give both: either one verifies.
const secrets = [process.env.WEBHOOK_SECRET, process.env.WEBHOOK_PREVIOUS_SECRET].filter(Boolean);
const seen = new Set(); // use your database in production: delivery ids repeat on retries and resends

const app = express();
app.post('/tripwire', express.raw({ type: 'application/json' }), async (req, res) => {
  const check = await verifyDelivery(secrets, req.headers, req.body);
  if (!check.ok) return res.status(401).send(check.reason);
  if (!seen.has(check.deliveryId)) {
    seen.add(check.deliveryId);
    const alert = JSON.parse(req.body.toString('utf8'));
    console.log(`${check.event} ${alert.data.alertLevel}: ${alert.data.interpretation}`);
  }
  res.sendStatus(200);
});
const server = app.listen(Number(process.env.PORT ?? 3000), () =>
  console.log(`listening on ${server.address().port}`),
);
