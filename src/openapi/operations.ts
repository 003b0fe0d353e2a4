import { z, type ZodType } from 'zod';
import { credentialsSchema, loginSchema, sessionView, signupView } from '../accounts/auth.routes';
import { updateSchema as settingsSchema, settingsView } from '../accounts/settings.routes';
import { meView, passwordChangeSchema } from '../accounts/users.routes';
import {
  agentListView,
  agentView,
  blockedSkillSchema,
  blockedSkillView,
  heartbeatView,
  registerSchema as agentSchema,
} from '../agent/agent.routes';
import {
  bulkResendSchema,
  bulkResendView,
  channelListView,
  channelTestView,
  channelView,
  createSchema as channelSchema,
  deliveryListView,
  resendView,
  updateSchema as channelUpdateSchema,
} from '../alerts/channels.routes';
import { auditTrailView, pageSchema as trailQuery } from '../audit/audit.routes';
import { canaryListView, canaryView, plantSchema } from '../canaries/canaries.routes';
import { kubernetesStatusView } from '../canaries/listeners/kubernetes';
import {
  pageSchema as threatQuery,
  threatEventListView,
  threatLogView,
} from '../canaries/threats.routes';
import { workerPingView } from '../diagnostics/worker-ping.routes';
import { evidenceExportView } from '../evidence/evidence-export';
import { evidencePageView } from '../evidence/console-evidence.routes';
import { exportQuery } from '../evidence/evidence.routes';
import { checkpointView, consistencyView, publicKeyView } from '../evidence/evidence-log';
import { consistencyQuery } from '../evidence/log.routes';
import {
  chainReportView,
  hashCheckView,
  recordVerificationView,
} from '../evidence/evidence.service';
import { healthView, readinessView } from '../health/health.routes';
import {
  createSchema as trapSchema,
  deleteQuery as trapDeleteQuery,
  trapDeletedView,
  trapHitsView,
  trapListView,
  trapView,
} from '../honeypot/honeypot.routes';
import {
  createSchema as keySchema,
  keyListView,
  newKeyView,
  revokedKeyView,
  revokeSchema,
} from '../keys/api-keys.routes';
import { usageView } from '../metering/usage.routes';
import {
  deleteQuery as documentDeleteQuery,
  documentDeletedView,
  documentListView,
  documentView,
  leakListView,
  leakReportView,
  leakSchema,
  registeredDocumentView,
  registerSchema as documentSchema,
} from '../rag/rag.routes';
import { historyQuery, inspectionView, inspectSchema } from '../shield/shield.routes';
import { inspectionHistoryView } from '../shield/shield.service';

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
  /**
   * Served before the API key layer (app.ts), so a bad `X-API-Key` is not read; every other
   * route, public ones included, refuses it with 401.
   */
  beforeKeyLayer?: true;
  /** Success status and what it answers; errors are added from the auth and the inputs. */
  success: { status: number; description: string; contentType?: string };
  /** The success body of a JSON operation, as the handler builds it (never parsed at runtime). */
  response?: ZodType;
  /**
   * Further statuses this operation answers besides the common ones: `{detail}` errors, or a
   * body of its own.
   */
  errors?: Record<number, string | { description: string; response: ZodType }>;
}

/**
 * The shape of `/openapi.json` (built by document.ts, which imports this module, so it is defined
 * here): its paths and components are OpenAPI and JSON Schema objects.
 */
export const openApiDocumentView = z.object({
  openapi: z.literal('3.1.0'),
  info: z.object({ title: z.string(), version: z.string(), description: z.string() }),
  servers: z.array(z.object({ url: z.string() })),
  components: z.object({
    schemas: z.record(z.string(), z.record(z.string(), z.unknown())),
    securitySchemes: z.record(z.string(), z.record(z.string(), z.unknown())),
  }),
  paths: z.record(z.string(), z.record(z.string(), z.unknown())),
});

const ok = (description: string, status = 200) => ({ status, description });
const noContent = { status: 204, description: 'Done, no body' };

/** Every route the service serves, in the order of docs/api.md. */
export const OPERATIONS: Operation[] = [
  {
    method: 'get',
    path: '/healthz',
    summary: 'Process is up',
    auth: 'none',
    beforeKeyLayer: true,
    success: ok('`{status: "ok"}`'),
    response: healthView,
  },
  {
    method: 'get',
    path: '/readyz',
    summary: 'Ready: MongoDB, Temporal, indexes',
    auth: 'none',
    beforeKeyLayer: true,
    success: ok('Ready'),
    response: readinessView,
    errors: { 503: { description: 'Not ready, with the failing checks', response: readinessView } },
  },
  {
    method: 'get',
    path: '/metrics',
    summary: 'Prometheus metrics',
    auth: 'none',
    beforeKeyLayer: true,
    success: { status: 200, description: 'Prometheus text format', contentType: 'text/plain' },
    errors: {
      401: 'METRICS_TOKEN is set and `Authorization: Bearer <METRICS_TOKEN>` was not sent',
    },
  },
  {
    method: 'get',
    path: '/openapi.json',
    summary: 'This document',
    auth: 'none',
    beforeKeyLayer: true,
    success: ok('The OpenAPI 3.1 document'),
    response: openApiDocumentView,
    errors: { 401: 'DOCS_TOKEN is set and `Authorization: Bearer <DOCS_TOKEN>` was not sent' },
  },
  {
    method: 'get',
    path: '/docs',
    summary: 'This reference as a readable page',
    auth: 'none',
    beforeKeyLayer: true,
    success: { status: 200, description: 'HTML', contentType: 'text/html' },
    errors: { 401: 'DOCS_TOKEN is set and `Authorization: Bearer <DOCS_TOKEN>` was not sent' },
  },
  {
    method: 'get',
    path: '/console/',
    summary: 'The web console (`/` redirects here)',
    auth: 'none',
    beforeKeyLayer: true,
    success: { status: 200, description: 'HTML', contentType: 'text/html' },
    errors: { 503: 'The console was not built (`npm run build:console`)' },
  },
  {
    method: 'post',
    path: '/api/auth/signup',
    summary: 'Create an account',
    auth: 'none',
    body: credentialsSchema,
    success: ok('`{user_id}`', 201),
    response: signupView,
    errors: {
      403: 'Sign-up is closed (`signup_closed`), or SIGNUP_MODE=invite and `invite_code` is missing, used, expired or for another email (`invite_required`)',
      409: 'Email already registered',
      503: 'Too many passwords are being hashed right now (`login_busy`, `Retry-After`)',
    },
  },
  {
    method: 'post',
    path: '/api/auth/login',
    summary: 'Log in: a session token, the refresh cookie and, from a new browser, a device cookie',
    auth: 'none',
    body: loginSchema,
    success: ok('`{token, user_id, expires_at}`'),
    response: sessionView,
    errors: {
      401: 'Invalid email or password',
      429: 'Too many failed sign-ins for this email, from this address, from this known device, or (from browsers not known to the email) in this minute (`login_throttled`, `Retry-After`)',
      503: 'Too many passwords are being hashed right now (`login_busy`, `Retry-After`)',
    },
  },
  {
    method: 'post',
    path: '/api/auth/refresh',
    summary: 'A new session token from the refresh cookie',
    auth: 'refreshCookie',
    success: ok('`{token, user_id, expires_at}`'),
    response: sessionView,
    errors: {
      401: 'Missing, expired or unknown cookie; a cookie already rotated away ends its whole session (`refresh_reused`)',
    },
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
    response: meView,
  },
  {
    method: 'post',
    path: '/api/users/me/password',
    summary: "Change the signed-in account's password; its other sessions end",
    auth: 'session',
    body: passwordChangeSchema,
    success: noContent,
    errors: {
      403: '`current_password` does not match',
      429: 'Too many wrong current passwords (`login_throttled`, `Retry-After`)',
      503: 'Too many passwords are being hashed right now (`login_busy`, `Retry-After`)',
    },
  },
  {
    method: 'get',
    path: '/api/settings',
    summary: "The account's settings",
    auth: 'sessionOrApiKey',
    success: ok('`{telegram_chat_id}`'),
    response: settingsView,
  },
  {
    method: 'patch',
    path: '/api/settings',
    summary: "Change the account's settings",
    auth: 'sessionOrApiKey',
    body: settingsSchema,
    success: ok('`{telegram_chat_id}`'),
    response: settingsView,
  },
  {
    method: 'post',
    path: '/api/canaries',
    summary: 'Plant a canary (metered)',
    auth: 'sessionOrApiKey',
    body: plantSchema,
    success: ok('The canary, with its decoy value', 201),
    response: canaryView,
    errors: { 402: 'Plan limit reached', 429: 'Burst limit reached' },
  },
  {
    method: 'get',
    path: '/api/canaries',
    summary: "The account's canaries",
    auth: 'sessionOrApiKey',
    query: z.object({ include_retired: z.enum(['true', 'false']).optional() }),
    success: ok('`{canaries}`'),
    response: canaryListView,
  },
  {
    method: 'get',
    path: '/api/canaries/{canary_id}',
    summary: 'One canary',
    auth: 'sessionOrApiKey',
    success: ok('The canary'),
    response: canaryView,
  },
  {
    method: 'delete',
    path: '/api/canaries/{canary_id}',
    summary: 'Retire a canary',
    auth: 'sessionOrApiKey',
    success: ok('The retired canary'),
    response: canaryView,
  },
  {
    method: 'get',
    path: '/api/threat-events',
    summary: 'Threat events (one per alert)',
    auth: 'sessionOrApiKey',
    query: threatQuery,
    success: ok('`{threat_events, next_cursor}`'),
    response: threatEventListView,
  },
  {
    method: 'get',
    path: '/api/threat-log',
    summary: 'Every hit, each sealed',
    auth: 'sessionOrApiKey',
    query: threatQuery,
    success: ok('`{hits, next_cursor}`'),
    response: threatLogView,
  },
  {
    method: 'get',
    path: '/r/{token}',
    summary: 'URL tripwire: an ordinary page for any token, whatever headers come with it',
    auth: 'none',
    beforeKeyLayer: true,
    success: { status: 200, description: 'An ordinary page', contentType: 'text/html' },
  },
  {
    method: 'post',
    path: '/aws/',
    summary:
      'Decoy AWS endpoint (the endpoint_url of planted AWS profiles; any method and path below /aws): a call signed with a decoy key id fires',
    auth: 'none',
    beforeKeyLayer: true,
    success: {
      status: 403,
      description:
        'InvalidClientTokenId (S3: InvalidAccessKeyId), as AWS answers an unknown key, in the protocol the client speaks (query XML or JSON), canary or not',
      contentType: 'text/xml',
    },
  },
  {
    method: 'get',
    path: '/k8s/{path}',
    summary:
      'Decoy Kubernetes API (the server of planted kubeconfigs; any method and path below /k8s): a request presenting a decoy token fires',
    auth: 'none',
    beforeKeyLayer: true,
    success: {
      status: 401,
      description: 'The API server’s Unauthorized Status, canary or not',
    },
    response: kubernetesStatusView,
  },
  {
    method: 'post',
    path: '/api/auth/generate-key',
    summary: 'Create an API key (shown once)',
    auth: 'session',
    body: keySchema,
    success: ok('The key', 201),
    response: newKeyView,
    errors: { 400: 'Five active keys already' },
  },
  {
    method: 'get',
    path: '/api/auth/keys',
    summary: 'Active API keys',
    auth: 'session',
    success: ok('`{keys}`'),
    response: keyListView,
  },
  {
    method: 'delete',
    path: '/api/auth/keys/{key_id}',
    summary: 'Revoke an API key',
    auth: 'session',
    success: ok('`{revoked, revoked_at}`'),
    response: revokedKeyView,
  },
  {
    method: 'post',
    path: '/api/auth/revoke-key',
    summary: 'Revoke an API key by its value',
    auth: 'session',
    body: revokeSchema,
    success: ok('`{revoked, revoked_at}`'),
    response: revokedKeyView,
    errors: {
      403: "Another account's key",
      404: 'No key matches the value, or it is already revoked',
    },
  },
  {
    method: 'get',
    path: '/api/audit/trail',
    summary: 'Audit trail, newest first',
    auth: 'session',
    query: trailQuery,
    success: ok('`{entries, next}`'),
    response: auditTrailView,
  },
  {
    method: 'post',
    path: '/api/diagnostics/worker-ping',
    summary: 'Round trip through a worker',
    auth: 'session',
    success: ok('`{workflow_id, ping_id, recorded_at, activity_attempt, round_trip_ms}`'),
    response: workerPingView,
    errors: { 504: 'No worker answered' },
  },
  {
    method: 'post',
    path: '/shield/inspect',
    summary: 'Inspect a message (metered)',
    auth: 'apiKey',
    body: inspectSchema,
    success: ok('`{user_id, verdict, score, findings, evidence}`'),
    response: inspectionView,
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
    response: inspectionHistoryView,
  },
  {
    method: 'post',
    path: '/audit/verify/{log_id}',
    summary: 'Re-verify a sealed record',
    auth: 'apiKey',
    success: ok('The verification'),
    response: recordVerificationView,
  },
  {
    method: 'get',
    path: '/audit/export/{user_id}',
    summary: 'Export the sealed log (JSON or PDF)',
    auth: 'apiKey',
    query: exportQuery,
    success: ok('The log'),
    response: evidenceExportView,
    errors: { 402: 'PDF needs a paid plan' },
  },
  {
    method: 'get',
    path: '/audit/chain/{user_id}',
    summary: 'Whole-log chain check',
    auth: 'apiKey',
    success: ok('The check'),
    response: chainReportView,
  },
  {
    method: 'post',
    path: '/honeypot/traps',
    summary: 'Create a trap (metered)',
    auth: 'sessionOrApiKey',
    body: trapSchema,
    success: ok('The trap', 201),
    response: trapView,
    errors: { 402: 'Plan limit reached' },
  },
  {
    method: 'get',
    path: '/honeypot/traps',
    summary: 'Traps',
    auth: 'sessionOrApiKey',
    success: ok('`{traps}`'),
    response: trapListView,
  },
  {
    method: 'get',
    path: '/honeypot/traps/{trap_id}',
    summary: 'One trap',
    auth: 'sessionOrApiKey',
    success: ok('The trap'),
    response: trapView,
  },
  {
    method: 'get',
    path: '/honeypot/traps/{trap_id}/hits',
    summary: "A trap's hits",
    auth: 'sessionOrApiKey',
    success: ok('`{hits}`'),
    response: trapHitsView,
  },
  {
    method: 'delete',
    path: '/honeypot/traps/{trap_id}',
    summary: 'Delete a trap (force removes its hits: session only)',
    auth: 'sessionOrApiKey',
    query: trapDeleteQuery,
    success: ok('`{trap_id, deleted, removed_hits}`'),
    response: trapDeletedView,
    errors: { 409: 'Holds hits: force=true needed' },
  },
  {
    method: 'post',
    path: '/rag/documents',
    summary: 'Register a document (metered)',
    auth: 'sessionOrApiKey',
    body: documentSchema,
    success: ok('The document with `marked_content`', 201),
    response: registeredDocumentView,
    errors: { 402: 'Plan limit reached' },
  },
  {
    method: 'get',
    path: '/rag/documents',
    summary: 'Documents',
    auth: 'sessionOrApiKey',
    success: ok('`{documents}`'),
    response: documentListView,
  },
  {
    method: 'get',
    path: '/rag/documents/{document_id}',
    summary: 'One document',
    auth: 'sessionOrApiKey',
    success: ok('The document'),
    response: documentView,
  },
  {
    method: 'get',
    path: '/rag/documents/{document_id}/leaks',
    summary: "A document's leak records",
    auth: 'sessionOrApiKey',
    success: ok('`{leaks}`'),
    response: leakListView,
  },
  {
    method: 'post',
    path: '/rag/leaks',
    summary: 'Report text that may hold markers',
    auth: 'sessionOrApiKey',
    body: leakSchema,
    success: ok('`{markers_found}`', 202),
    response: leakReportView,
  },
  {
    method: 'delete',
    path: '/rag/documents/{document_id}',
    summary: 'Delete a document (force removes its leak records: session only)',
    auth: 'sessionOrApiKey',
    query: documentDeleteQuery,
    success: ok('`{document_id, deleted, removed_leaks}`'),
    response: documentDeletedView,
    errors: { 409: 'Holds leak records: force=true needed' },
  },
  {
    method: 'post',
    path: '/agent/agents',
    summary: 'Register an agent',
    auth: 'sessionOrApiKey',
    body: agentSchema,
    success: ok('The agent', 201),
    response: agentView,
  },
  {
    method: 'get',
    path: '/agent/agents',
    summary: 'Agents',
    auth: 'sessionOrApiKey',
    success: ok('`{agents}`'),
    response: agentListView,
  },
  {
    method: 'get',
    path: '/agent/agents/{agent_id}',
    summary: 'One agent',
    auth: 'sessionOrApiKey',
    success: ok('The agent'),
    response: agentView,
  },
  {
    method: 'post',
    path: '/agent/agents/{agent_id}/heartbeat',
    summary: 'Heartbeat',
    auth: 'sessionOrApiKey',
    success: ok('`{agent_id, received}`', 202),
    response: heartbeatView,
  },
  {
    method: 'post',
    path: '/agent/agents/{agent_id}/blocked-skill',
    summary: 'Report a blocked skill',
    auth: 'sessionOrApiKey',
    body: blockedSkillSchema,
    success: ok('`{agent_id, reported}`', 202),
    response: blockedSkillView,
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
    success: ok(
      '`{content_hash, exists, intact, sealed_at, algorithm, leaf_index, inclusion}`: inclusion is the RFC 9162 proof against the latest signed checkpoint (null until one covers the record)',
    ),
    response: hashCheckView,
    errors: { 422: 'Not a SHA-256 hex digest', 429: 'Too many checks' },
  },
  {
    method: 'get',
    path: '/api/log/checkpoint',
    summary: "The evidence log's latest signed checkpoint",
    auth: 'none',
    success: {
      status: 200,
      description: 'A C2SP tlog-checkpoint as a signed note (Ed25519)',
      contentType: 'text/plain',
    },
    errors: { 404: 'No checkpoint yet' },
  },
  {
    method: 'get',
    path: '/api/log/checkpoints/{size}',
    summary: 'The checkpoint signed at one tree size',
    auth: 'none',
    success: ok('`{size, root_hash, note, issued_at}`'),
    response: checkpointView,
    errors: { 404: 'None signed at that size', 422: 'Not a size' },
  },
  {
    method: 'get',
    path: '/api/log/public-key',
    summary: "The checkpoint signing key's public half",
    auth: 'none',
    success: ok('`{origin, vkey, key_id, fingerprint_sha256, algorithm, leaf_rule}`'),
    response: publicKeyView,
  },
  {
    method: 'get',
    path: '/api/log/consistency',
    summary: 'RFC 9162 consistency proof between two tree sizes',
    auth: 'none',
    query: consistencyQuery,
    success: ok('`{from_size, to_size, proof}`'),
    response: consistencyView,
    errors: { 404: 'No checkpoint signed at `to`' },
  },
  {
    method: 'get',
    path: '/api/audit/chain',
    summary: 'Whole-log chain check (console)',
    auth: 'session',
    success: ok('The check'),
    response: chainReportView,
  },
  {
    method: 'get',
    path: '/api/audit/records',
    summary: 'The sealed log, newest first (console)',
    auth: 'session',
    query: trailQuery,
    success: ok('`{records, next_before}`'),
    response: evidencePageView,
  },
  {
    method: 'post',
    path: '/api/audit/records/{log_id}/verify',
    summary: "Recompute one record's hash (console)",
    auth: 'session',
    success: ok('The verification'),
    response: recordVerificationView,
  },
  {
    method: 'get',
    path: '/api/audit/export',
    summary: 'Export the sealed log, JSON or PDF (console)',
    auth: 'session',
    query: exportQuery,
    success: ok('The log'),
    response: evidenceExportView,
    errors: { 402: 'PDF needs a paid plan' },
  },
  {
    method: 'get',
    path: '/api/usage',
    summary: 'Usage per metered action',
    auth: 'session',
    success: ok('`{plan, plan_display_name, metrics}`'),
    response: usageView,
  },
  {
    method: 'post',
    path: '/api/alert-channels',
    summary: 'Add an alert channel',
    auth: 'session',
    body: channelSchema,
    success: ok('The channel', 201),
    response: channelView,
  },
  {
    method: 'get',
    path: '/api/alert-channels',
    summary: 'Alert channels',
    auth: 'session',
    success: ok('`{channels}`'),
    response: channelListView,
  },
  {
    method: 'get',
    path: '/api/alert-channels/{channel_id}',
    summary: 'One channel',
    auth: 'session',
    success: ok('The channel'),
    response: channelView,
  },
  {
    method: 'patch',
    path: '/api/alert-channels/{channel_id}',
    summary: 'Change, enable or disable a channel',
    auth: 'session',
    body: channelUpdateSchema,
    success: ok('The channel'),
    response: channelView,
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
    response: deliveryListView,
  },
  {
    method: 'post',
    path: '/api/alert-channels/{channel_id}/deliveries/{delivery_id}/resend',
    summary: 'Send a recorded delivery again (same payload and delivery id, freshly signed)',
    auth: 'session',
    success: ok('The new delivery `{deliveryId, workflowId, resendOf}`', 202),
    response: resendView,
    errors: { 409: 'Still being attempted, or recorded without its payload' },
  },
  {
    method: 'post',
    path: '/api/alert-channels/{channel_id}/deliveries/resend-failed',
    summary: 'Send every failed delivery since an instant again (at most 100 a call)',
    auth: 'session',
    body: bulkResendSchema,
    success: ok('`{resent, more}`', 202),
    response: bulkResendView,
  },
  {
    method: 'post',
    path: '/api/alert-channels/{channel_id}/test',
    summary: 'Send a test alert through the real workflow',
    auth: 'session',
    success: ok('The outcome'),
    response: channelTestView,
    errors: { 429: 'Too many channel tests running' },
  },
];
