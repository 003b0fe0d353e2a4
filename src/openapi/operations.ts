import { z, type ZodType } from 'zod';
import { credentialsSchema, loginSchema } from '../accounts/auth.routes';
import { updateSchema as settingsSchema } from '../accounts/settings.routes';
import { blockedSkillSchema, registerSchema as agentSchema } from '../agent/agent.routes';
import {
  createSchema as channelSchema,
  updateSchema as channelUpdateSchema,
} from '../alerts/channels.routes';
import { pageSchema as trailQuery } from '../audit/audit.routes';
import { plantSchema } from '../canaries/canaries.routes';
import { pageSchema as threatQuery } from '../canaries/threats.routes';
import { exportQuery } from '../evidence/evidence.routes';
import {
  createSchema as trapSchema,
  deleteQuery as trapDeleteQuery,
} from '../honeypot/honeypot.routes';
import { createSchema as keySchema, revokeSchema } from '../keys/api-keys.routes';
import {
  deleteQuery as documentDeleteQuery,
  leakSchema,
  registerSchema as documentSchema,
} from '../rag/rag.routes';
import { historyQuery, inspectSchema } from '../shield/shield.routes';

/** How an operation authenticates (the spec's scope table adds the API key's scope). */
export type Auth = 'none' | 'session' | 'apiKey' | 'sessionOrApiKey' | 'refreshCookie';

export interface Operation {
  method: 'get' | 'post' | 'patch' | 'delete';
  /** OpenAPI form: `/api/canaries/{canary_id}`. */
  path: string;
  summary: string;
  auth: Auth;
  body?: ZodType;
  query?: ZodType;
  /** Success status and what it answers; errors are added from the auth and the inputs. */
  success: { status: number; description: string; contentType?: string };
  /** Further statuses this operation answers besides the common ones. */
  errors?: Record<number, string>;
}

const ok = (description: string, status = 200) => ({ status, description });
const noContent = { status: 204, description: 'Done, no body' };

/** Every route the service serves, in the README's order. */
export const OPERATIONS: Operation[] = [
  {
    method: 'get',
    path: '/healthz',
    summary: 'Process is up',
    auth: 'none',
    success: ok('`{status: "ok"}`'),
  },
  {
    method: 'get',
    path: '/readyz',
    summary: 'Ready: MongoDB, Temporal, indexes',
    auth: 'none',
    success: ok('Ready'),
    errors: { 503: 'Not ready, with the failing checks' },
  },
  {
    method: 'get',
    path: '/metrics',
    summary: 'Prometheus metrics',
    auth: 'none',
    success: { status: 200, description: 'Prometheus text format', contentType: 'text/plain' },
  },
  {
    method: 'get',
    path: '/openapi.json',
    summary: 'This document',
    auth: 'none',
    success: ok('The OpenAPI 3.1 document'),
  },
  {
    method: 'get',
    path: '/docs',
    summary: 'This reference as a readable page',
    auth: 'none',
    success: { status: 200, description: 'HTML', contentType: 'text/html' },
  },
  {
    method: 'post',
    path: '/api/auth/signup',
    summary: 'Create an account',
    auth: 'none',
    body: credentialsSchema,
    success: ok('`{user_id}`', 201),
    errors: { 409: 'Email already registered' },
  },
  {
    method: 'post',
    path: '/api/auth/login',
    summary: 'Log in: a session token and the refresh cookie',
    auth: 'none',
    body: loginSchema,
    success: ok('`{token, user_id, expires_at}`'),
    errors: { 401: 'Invalid email or password' },
  },
  {
    method: 'post',
    path: '/api/auth/refresh',
    summary: 'A new session token from the refresh cookie',
    auth: 'refreshCookie',
    success: ok('`{token, user_id, expires_at}`'),
  },
  {
    method: 'post',
    path: '/api/auth/logout',
    summary: 'End the session',
    auth: 'none',
    success: noContent,
  },
  {
    method: 'get',
    path: '/api/users/me',
    summary: 'The signed-in account',
    auth: 'session',
    success: ok('`{user_id, email, plan, created_at}`'),
  },
  {
    method: 'get',
    path: '/api/settings',
    summary: "The account's settings",
    auth: 'sessionOrApiKey',
    success: ok('`{telegram_chat_id}`'),
  },
  {
    method: 'patch',
    path: '/api/settings',
    summary: "Change the account's settings",
    auth: 'sessionOrApiKey',
    body: settingsSchema,
    success: ok('`{telegram_chat_id}`'),
  },
  {
    method: 'post',
    path: '/api/canaries',
    summary: 'Plant a canary (metered)',
    auth: 'sessionOrApiKey',
    body: plantSchema,
    success: ok('The canary, with its decoy value', 201),
    errors: { 402: 'Plan limit reached', 429: 'Burst limit reached' },
  },
  {
    method: 'get',
    path: '/api/canaries',
    summary: "The account's canaries",
    auth: 'sessionOrApiKey',
    query: z.object({ include_retired: z.enum(['true', 'false']).optional() }),
    success: ok('`{canaries}`'),
  },
  {
    method: 'get',
    path: '/api/canaries/{canary_id}',
    summary: 'One canary',
    auth: 'sessionOrApiKey',
    success: ok('The canary'),
  },
  {
    method: 'delete',
    path: '/api/canaries/{canary_id}',
    summary: 'Retire a canary',
    auth: 'sessionOrApiKey',
    success: ok('The retired canary'),
  },
  {
    method: 'get',
    path: '/api/threat-events',
    summary: 'Threat events (one per alert)',
    auth: 'sessionOrApiKey',
    query: threatQuery,
    success: ok('`{threat_events, next_cursor}`'),
  },
  {
    method: 'get',
    path: '/api/threat-log',
    summary: 'Every hit, each sealed',
    auth: 'sessionOrApiKey',
    query: threatQuery,
    success: ok('`{hits, next_cursor}`'),
  },
  {
    method: 'get',
    path: '/r/{token}',
    summary: 'URL tripwire: an ordinary page for any token',
    auth: 'none',
    success: { status: 200, description: 'An ordinary page', contentType: 'text/html' },
  },
  {
    method: 'post',
    path: '/api/auth/generate-key',
    summary: 'Create an API key (shown once)',
    auth: 'session',
    body: keySchema,
    success: ok('The key', 201),
    errors: { 400: 'Five active keys already' },
  },
  {
    method: 'get',
    path: '/api/auth/keys',
    summary: 'Active API keys',
    auth: 'session',
    success: ok('`{keys}`'),
  },
  {
    method: 'delete',
    path: '/api/auth/keys/{key_id}',
    summary: 'Revoke an API key',
    auth: 'session',
    success: ok('`{revoked, revoked_at}`'),
  },
  {
    method: 'post',
    path: '/api/auth/revoke-key',
    summary: 'Revoke an API key by its value',
    auth: 'session',
    body: revokeSchema,
    success: ok('`{revoked, revoked_at}`'),
  },
  {
    method: 'get',
    path: '/api/audit/trail',
    summary: 'Audit trail, newest first',
    auth: 'session',
    query: trailQuery,
    success: ok('`{entries, next}`'),
  },
  {
    method: 'post',
    path: '/api/diagnostics/worker-ping',
    summary: 'Round trip through a worker',
    auth: 'session',
    success: ok('`{ping_id, recorded_at, attempt}`'),
    errors: { 504: 'No worker answered' },
  },
  {
    method: 'post',
    path: '/shield/inspect',
    summary: 'Inspect a message (metered)',
    auth: 'apiKey',
    body: inspectSchema,
    success: ok('`{user_id, verdict, score, findings, evidence}`'),
    errors: {
      402: 'Plan limit reached',
      429: 'Burst limit reached',
      503: 'Daily meter unavailable',
    },
  },
  {
    method: 'get',
    path: '/shield/inspections',
    summary: 'Sealed inspection history',
    auth: 'apiKey',
    query: historyQuery,
    success: ok('`{inspections, next_before}`'),
  },
  {
    method: 'post',
    path: '/audit/verify/{log_id}',
    summary: 'Re-verify a sealed record',
    auth: 'apiKey',
    success: ok('The verification'),
  },
  {
    method: 'get',
    path: '/audit/export/{user_id}',
    summary: 'Export the sealed log (JSON or PDF)',
    auth: 'apiKey',
    query: exportQuery,
    success: ok('The log'),
    errors: { 402: 'PDF needs a paid plan' },
  },
  {
    method: 'get',
    path: '/audit/chain/{user_id}',
    summary: 'Whole-log chain check',
    auth: 'apiKey',
    success: ok('The check'),
  },
  {
    method: 'post',
    path: '/honeypot/traps',
    summary: 'Create a trap (metered)',
    auth: 'sessionOrApiKey',
    body: trapSchema,
    success: ok('The trap', 201),
    errors: { 402: 'Plan limit reached' },
  },
  {
    method: 'get',
    path: '/honeypot/traps',
    summary: 'Traps',
    auth: 'sessionOrApiKey',
    success: ok('`{traps}`'),
  },
  {
    method: 'get',
    path: '/honeypot/traps/{trap_id}',
    summary: 'One trap',
    auth: 'sessionOrApiKey',
    success: ok('The trap'),
  },
  {
    method: 'get',
    path: '/honeypot/traps/{trap_id}/hits',
    summary: "A trap's hits",
    auth: 'sessionOrApiKey',
    success: ok('`{hits}`'),
  },
  {
    method: 'delete',
    path: '/honeypot/traps/{trap_id}',
    summary: 'Delete a trap (force removes its hits: session only)',
    auth: 'sessionOrApiKey',
    query: trapDeleteQuery,
    success: ok('`{trap_id, deleted, removed_hits}`'),
    errors: { 409: 'Holds hits: force=true needed' },
  },
  {
    method: 'post',
    path: '/rag/documents',
    summary: 'Register a document (metered)',
    auth: 'sessionOrApiKey',
    body: documentSchema,
    success: ok('The document with `marked_content`', 201),
    errors: { 402: 'Plan limit reached' },
  },
  {
    method: 'get',
    path: '/rag/documents',
    summary: 'Documents',
    auth: 'sessionOrApiKey',
    success: ok('`{documents}`'),
  },
  {
    method: 'get',
    path: '/rag/documents/{document_id}',
    summary: 'One document',
    auth: 'sessionOrApiKey',
    success: ok('The document'),
  },
  {
    method: 'get',
    path: '/rag/documents/{document_id}/leaks',
    summary: "A document's leak records",
    auth: 'sessionOrApiKey',
    success: ok('`{leaks}`'),
  },
  {
    method: 'post',
    path: '/rag/leaks',
    summary: 'Report text that may hold markers',
    auth: 'sessionOrApiKey',
    body: leakSchema,
    success: ok('`{markers_found}`', 202),
  },
  {
    method: 'delete',
    path: '/rag/documents/{document_id}',
    summary: 'Delete a document (force removes its leak records: session only)',
    auth: 'sessionOrApiKey',
    query: documentDeleteQuery,
    success: ok('`{document_id, deleted, removed_leaks}`'),
    errors: { 409: 'Holds leak records: force=true needed' },
  },
  {
    method: 'post',
    path: '/agent/agents',
    summary: 'Register an agent',
    auth: 'sessionOrApiKey',
    body: agentSchema,
    success: ok('The agent', 201),
  },
  {
    method: 'get',
    path: '/agent/agents',
    summary: 'Agents',
    auth: 'sessionOrApiKey',
    success: ok('`{agents}`'),
  },
  {
    method: 'get',
    path: '/agent/agents/{agent_id}',
    summary: 'One agent',
    auth: 'sessionOrApiKey',
    success: ok('The agent'),
  },
  {
    method: 'post',
    path: '/agent/agents/{agent_id}/heartbeat',
    summary: 'Heartbeat',
    auth: 'sessionOrApiKey',
    success: ok('`{agent_id, received}`', 202),
  },
  {
    method: 'post',
    path: '/agent/agents/{agent_id}/blocked-skill',
    summary: 'Report a blocked skill',
    auth: 'sessionOrApiKey',
    body: blockedSkillSchema,
    success: ok('`{agent_id, reported}`', 202),
  },
  {
    method: 'delete',
    path: '/agent/agents/{agent_id}',
    summary: 'Stop watching an agent',
    auth: 'sessionOrApiKey',
    success: noContent,
  },
  {
    method: 'delete',
    path: '/audit/{log_id}',
    summary: 'Never allowed: no API key can delete evidence',
    auth: 'apiKey',
    success: { status: 403, description: 'Always refused' },
  },
  {
    method: 'get',
    path: '/api/verify/{hash}',
    summary: 'Public hash check',
    auth: 'none',
    success: ok('`{content_hash, exists, intact, sealed_at, algorithm}`'),
    errors: { 422: 'Not a SHA-256 hex digest', 429: 'Too many checks' },
  },
  {
    method: 'get',
    path: '/api/audit/chain',
    summary: 'Whole-log chain check (console)',
    auth: 'session',
    success: ok('The check'),
  },
  {
    method: 'get',
    path: '/api/usage',
    summary: 'Usage per metered action',
    auth: 'session',
    success: ok('`{plan, plan_display_name, metrics}`'),
  },
  {
    method: 'post',
    path: '/api/alert-channels',
    summary: 'Add an alert channel',
    auth: 'session',
    body: channelSchema,
    success: ok('The channel', 201),
  },
  {
    method: 'get',
    path: '/api/alert-channels',
    summary: 'Alert channels',
    auth: 'session',
    success: ok('`{channels}`'),
  },
  {
    method: 'get',
    path: '/api/alert-channels/{channel_id}',
    summary: 'One channel',
    auth: 'session',
    success: ok('The channel'),
  },
  {
    method: 'patch',
    path: '/api/alert-channels/{channel_id}',
    summary: 'Change, enable or disable a channel',
    auth: 'session',
    body: channelUpdateSchema,
    success: ok('The channel'),
  },
  {
    method: 'delete',
    path: '/api/alert-channels/{channel_id}',
    summary: 'Delete a channel',
    auth: 'session',
    success: noContent,
  },
  {
    method: 'get',
    path: '/api/alert-channels/{channel_id}/deliveries',
    summary: "A channel's latest deliveries",
    auth: 'session',
    success: ok('`{deliveries}`'),
  },
  {
    method: 'post',
    path: '/api/alert-channels/{channel_id}/test',
    summary: 'Send a test alert through the real workflow',
    auth: 'session',
    success: ok('The outcome'),
    errors: { 429: 'Too many channel tests running' },
  },
];
