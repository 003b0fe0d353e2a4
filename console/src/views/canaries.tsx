import { useState } from 'preact/hooks';
import { api, download } from '../api';
import type { Canary, CanaryKind, CanaryList } from '../types';
import {
  ConfirmButton,
  CopyButton,
  ErrorNote,
  Field,
  formValues,
  Time,
  useAction,
  useLoad,
} from '../ui';

const KINDS: Record<CanaryKind, string> = {
  api_key: 'API key',
  aws_access_key: 'Cloud access key pair',
  database_url: 'Database connection string',
  url: 'URL',
  email: 'Email address',
  dns: 'DNS hostname',
  kubeconfig: 'Kubeconfig',
  fast_redirect: 'Redirect link',
  web_image: 'Web image',
  qr_code: 'QR code',
  word_document: 'Word document',
  excel_document: 'Excel workbook',
  pdf_document: 'PDF document',
  windows_folder: 'Windows folder',
  sensitive_command: 'Watched Windows command',
  mysql_dump: 'MySQL dump',
  log4shell: 'Log4Shell string',
  wireguard: 'WireGuard VPN config',
  cloned_website: 'Cloned website snippet',
  svn: 'Subversion repository dump',
  slow_redirect: 'Redirect link, with browser details',
};

/** The kinds that need a destination to send visitors on to. */
const REDIRECTS: readonly string[] = ['fast_redirect', 'slow_redirect'];

/** A chosen image file as the API takes it: base64 without the data URL's prefix. */
async function base64Of(file: File): Promise<string> {
  const bytes = new Uint8Array(await file.arrayBuffer());
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** Canaries: plant one of each kind, see its value and how to use it, retire it. */
export function CanariesView() {
  const canaries = useLoad(() => api<CanaryList>('GET', '/api/canaries'));
  const planting = useAction();
  const [planted, setPlanted] = useState<Canary | null>(null);
  const [kind, setKind] = useState<string>('api_key');

  const plant = (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const { memo = '', platform = '', redirect_url = '', site_url = '' } = formValues(form);
    const image = (form.elements.namedItem('image') as HTMLInputElement | null)?.files?.[0];
    void planting.run(async () => {
      setPlanted(
        await api<Canary>('POST', '/api/canaries', {
          kind,
          memo,
          ...(platform.trim() && { platform: platform.trim() }),
          ...(REDIRECTS.includes(kind) && { redirect_url: redirect_url.trim() }),
          ...(kind === 'cloned_website' && { site_url: site_url.trim() }),
          ...(kind === 'web_image' && image && { image: await base64Of(image) }),
        }),
      );
      form.reset();
      setKind('api_key');
      await canaries.reload();
    });
  };
  const retire = (canary: Canary) =>
    void planting.run(async () => {
      await api('DELETE', `/api/canaries/${encodeURIComponent(canary.canary_id)}`);
      await canaries.reload();
    });

  return (
    <section aria-labelledby="canaries-title">
      <h1 id="canaries-title">Canaries</h1>
      <p>
        A canary is a credential or address nobody should ever use. When someone does, it fires: a
        threat event is recorded and sealed, and your channels are alerted.
      </p>
      <h2>Plant a canary</h2>
      <form onSubmit={plant}>
        <Field label="Kind">
          <select name="kind" value={kind} onChange={(event) => setKind(event.currentTarget.value)}>
            {Object.entries(KINDS).map(([value, name]) => (
              <option key={value} value={value}>
                {name}
              </option>
            ))}
          </select>
        </Field>
        <Field
          label="Memo (optional)"
          hint="Where you plant it, so an alert tells you what leaked."
        >
          <input name="memo" maxLength={500} />
        </Field>
        {REDIRECTS.includes(kind) && (
          <Field label="Redirect to" hint="Where a visitor is sent on to after the hit.">
            <input name="redirect_url" type="url" required placeholder="https://intranet.example" />
          </Field>
        )}
        {kind === 'cloned_website' && (
          <Field
            label="Your site"
            hint="The origin the page belongs on; served anywhere else, it fires."
          >
            <input name="site_url" type="url" required placeholder="https://login.example.com" />
          </Field>
        )}
        {kind === 'web_image' && (
          <Field
            label="Image (optional)"
            hint="PNG, GIF or JPEG, at most 100 KB; a 1×1 transparent GIF when none."
          >
            <input name="image" type="file" accept="image/png,image/gif,image/jpeg" />
          </Field>
        )}
        <Field label="Platform (optional)">
          <input name="platform" maxLength={100} placeholder="github" />
        </Field>
        <ErrorNote error={planting.error} />
        <button type="submit" disabled={planting.pending}>
          Plant canary
        </button>
      </form>
      {planted && (
        <div class="note ok" role="status">
          <p>
            <strong>
              Planted: {KINDS[planted.kind as CanaryKind] ?? planted.kind}
              {planted.memo && ` — ${planted.memo}`}.
            </strong>{' '}
            Its value and how to use it are listed below.
          </p>
        </div>
      )}
      <h2>Planted</h2>
      <ErrorNote error={canaries.error} />
      {canaries.data?.canaries.length === 0 && (
        <p>
          No canaries yet. Choose a kind above and plant one where only a thief would use it: a
          config file, a wiki page, a password manager.
        </p>
      )}
      <ul class="cards">
        {canaries.data?.canaries.map((canary) => (
          <li class="card" key={canary.canary_id} data-testid="canary">
            <h3>
              <a href={`#/canaries/${encodeURIComponent(canary.canary_id)}`}>
                {KINDS[canary.kind as CanaryKind] ?? canary.kind}
                {canary.memo && ` — ${canary.memo}`}
              </a>
            </h3>
            <p class="secret">
              <code data-testid="canary-value">{canary.value}</code>{' '}
              <CopyButton text={canary.value} label="Copy value" />
            </p>
            {canary.secret && (
              <p class="secret">
                Secret: <code>{canary.secret}</code>{' '}
                <CopyButton text={canary.secret} label="Copy secret" />
              </p>
            )}
            {canary.artifact && (
              <p>
                <button
                  type="button"
                  onClick={() =>
                    void planting.run(() =>
                      download(canary.artifact!.url, canary.artifact!.filename),
                    )
                  }
                >
                  Download {canary.artifact.filename}
                </button>
              </p>
            )}
            {canary.redirect_url && (
              <p class="muted">
                Redirects to <code>{canary.redirect_url}</code>
              </p>
            )}
            {canary.files?.map((file) => (
              <details key={file.path}>
                <summary>{file.path}</summary>
                <pre class="secret">{file.content}</pre>
                <CopyButton text={file.content} label={`Copy ${file.path}`} />
              </details>
            ))}
            <details>
              <summary>How to use it</summary>
              <p>{canary.how_to_use}</p>
            </details>
            <p class="muted">
              Planted <Time iso={canary.created_at} />
              {canary.platform && ` on ${canary.platform}`}
            </p>
            <p data-testid="canary-hits">
              {canary.hit_count === 0 ? (
                'Never fired'
              ) : (
                <>
                  Fired {canary.hit_count === 1 ? 'once' : `${canary.hit_count} times`}, last{' '}
                  <Time iso={canary.last_hit_at} />
                </>
              )}
            </p>
            <ConfirmButton
              label="Retire"
              name={`Retire ${canary.memo || canary.value}`}
              question="Retire this canary? It stops firing at once; its threat events stay."
              confirm="Retire canary"
              onConfirm={() => retire(canary)}
            />
          </li>
        ))}
      </ul>
    </section>
  );
}
