import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';

/**
 * Local HTTPS stand-ins for third-party alert endpoints: each checks a request against the
 * documented shape and answers as the service does (its status and body), so a rendering that
 * drifts from the documentation fails delivery, not only a unit test.
 */
export class StandIn {
  readonly accepted: unknown[] = [];
  /** The path each accepted request was sent to, in order. */
  readonly paths: string[] = [];
  readonly refused: { body: string; issues: string }[] = [];
  private constructor(private readonly server: Server) {}

  static async start(
    schema: z.ZodType,
    answer: (body: unknown) => { status: number; json: unknown },
  ): Promise<StandIn> {
    const server = createServer({
      cert: readFileSync(process.env.TEST_TLS_CERT!),
      key: readFileSync(process.env.TEST_TLS_KEY!),
    });
    const standIn = new StandIn(server);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          body = undefined;
        }
        const checked = schema.safeParse(body);
        const typed = req.headers['content-type'] === 'application/json';
        if (!checked.success || !typed) {
          const issues = checked.success ? 'content-type' : JSON.stringify(checked.error.issues);
          standIn.refused.push({ body: text, issues });
          res.writeHead(400, { 'Content-Type': 'application/json' });
          return res.end(JSON.stringify({ status: 'invalid event', errors: [issues] }));
        }
        standIn.accepted.push(checked.data);
        standIn.paths.push(req.url ?? '/');
        const { status, json } = answer(checked.data);
        res.writeHead(status, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(json));
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return standIn;
  }

  url(path: string): string {
    return `https://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    this.server.close();
    await once(this.server, 'close').catch(() => undefined);
  }
}

/**
 * PagerDuty Events API v2 `enqueue` (developer.pagerduty.com, "Send an Alert Event"): routing key
 * of 32 characters, an action, and for a trigger a payload with summary, source and severity.
 */
export const pagerDutyEventSchema = z
  .object({
    routing_key: z.string().length(32),
    event_action: z.enum(['trigger', 'acknowledge', 'resolve']),
    dedup_key: z.string().max(255).optional(),
    payload: z.object({
      summary: z.string().min(1).max(1024),
      source: z.string().min(1),
      severity: z.enum(['critical', 'error', 'warning', 'info']),
      timestamp: z.iso.datetime().optional(),
      component: z.string().optional(),
      group: z.string().optional(),
      class: z.string().optional(),
      custom_details: z.record(z.string(), z.unknown()).optional(),
    }),
    client: z.string().optional(),
    client_url: z.string().optional(),
  })
  .strict();

/**
 * PagerDuty Events API v2 `change/enqueue` (developer.pagerduty.com, "Send a Change Event"): no
 * action, no severity, no dedup key; a change event never opens an incident.
 */
export const pagerDutyChangeEventSchema = z
  .object({
    routing_key: z.string().length(32),
    payload: z
      .object({
        summary: z.string().min(1).max(1024),
        source: z.string().optional(),
        timestamp: z.iso.datetime().optional(),
        custom_details: z.record(z.string(), z.unknown()).optional(),
      })
      .strict(),
    links: z.array(z.object({ href: z.string(), text: z.string().optional() })).optional(),
  })
  .strict();

/** PagerDuty answers an accepted event with 202 and its dedup key. */
export const pagerDutyAnswer = (body: unknown) => ({
  status: 202,
  json: {
    status: 'success',
    message: 'Event processed',
    dedup_key: (body as { dedup_key?: string }).dedup_key,
  },
});

const adaptiveElement = z.looseObject({ type: z.string() });

/**
 * A Teams "workflows" webhook (Power Automate, "Post to a channel when a webhook request is
 * received"): a `message` whose attachments are Adaptive Cards; it answers 202.
 */
export const teamsMessageSchema = z.object({
  type: z.literal('message'),
  attachments: z
    .array(
      z.object({
        contentType: z.literal('application/vnd.microsoft.card.adaptive'),
        contentUrl: z.null().optional(),
        content: z.looseObject({
          $schema: z.string().optional(),
          type: z.literal('AdaptiveCard'),
          version: z.string().regex(/^1\.[0-5]$/),
          body: z.array(adaptiveElement).min(1),
        }),
      }),
    )
    .min(1),
});
