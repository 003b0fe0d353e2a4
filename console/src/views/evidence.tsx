import { useState } from 'preact/hooks';
import { api, download } from '../api';
import { checkInclusion, type ProofCheck } from '../log-proof';
import type {
  Account,
  ChainReport,
  EvidencePage,
  EvidenceRecord,
  LogPublicKey,
  Verification,
} from '../types';
import { ErrorNote, Table, Time, useAction, useLoad, usePages } from '../ui';

const short = (hash: string | null) => (hash ? `${hash.slice(0, 12)}…` : 'unsealed');

/** The sealed log: the chain check, every record with a verify button, and the exports. */
export function EvidenceView({ account }: { account: Account }) {
  const chain = useLoad(() => api<ChainReport>('GET', '/api/audit/chain'));
  const records = usePages(
    (cursor) =>
      api<EvidencePage>(
        'GET',
        `/api/audit/records?limit=50${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      ),
    (page) => page.records,
    (page) => page.next_cursor,
  );
  const action = useAction();
  const paid = account.plan !== 'free';
  const exportAs = (format: 'json' | 'pdf') =>
    void action.run(() =>
      download(`/api/audit/export?format=${format}`, `evidence-${account.user_id}.${format}`),
    );

  return (
    <section aria-labelledby="evidence-title">
      <h1 id="evidence-title">Evidence log</h1>
      <p>
        Every record is sealed with a SHA-256 hash when written and linked to the one before it.
        Anyone can check a hash at <code>/api/verify/&lt;hash&gt;</code> without an account.
      </p>
      <h2>Chain check</h2>
      <ErrorNote error={chain.error} />
      {chain.data && <ChainSummary report={chain.data} />}
      <div class="actions">
        <button type="button" class="secondary" onClick={() => void chain.reload()}>
          Check the chain again
        </button>
        <button type="button" class="secondary" onClick={() => exportAs('json')}>
          Download JSON
        </button>
        <button
          type="button"
          class="secondary"
          onClick={() => exportAs('pdf')}
          disabled={!paid}
          aria-describedby={paid ? undefined : 'pdf-plan'}
        >
          Download PDF report
        </button>
      </div>
      {!paid && (
        <p id="pdf-plan" class="muted">
          The legal PDF report comes with the Pro and Enterprise plans.
        </p>
      )}
      <ErrorNote error={action.error} />
      <h2>Records</h2>
      <ErrorNote error={records.error} />
      {records.loaded && (
        <Table label="Sealed records">
          <thead>
            <tr>
              <th scope="col">#</th>
              <th scope="col">Kind</th>
              <th scope="col">Sealed</th>
              <th scope="col">Hash</th>
              <th scope="col">Check</th>
            </tr>
          </thead>
          <tbody>
            {records.items.map((record) => (
              <RecordRow key={record.log_id} record={record} />
            ))}
          </tbody>
        </Table>
      )}
      {records.more && (
        <button
          type="button"
          class="secondary"
          onClick={() => void records.more?.()}
          disabled={records.pending}
        >
          Load older records
        </button>
      )}
    </section>
  );
}

function ChainSummary({ report }: { report: ChainReport }) {
  return (
    <p class={report.intact ? 'note ok' : 'note error'} role="status" data-testid="chain">
      {report.intact ? 'Chain intact: ' : 'Chain broken: '}
      {report.records_checked} records checked
      {report.head && `, head #${report.head.seq} (${short(report.head.hash)})`}.
      {report.first_edited && ` First edited record: #${report.first_edited.seq}.`}
      {report.first_broken_link && ` First broken link: #${report.first_broken_link.seq}.`}
      {report.missing_seqs.length > 0 &&
        ` Missing: ${report.missing_seqs.map((r) => (r.from === r.to ? r.from : `${r.from}–${r.to}`)).join(', ')}.`}
    </p>
  );
}

function RecordRow({ record }: { record: EvidenceRecord }) {
  return (
    <tr>
      <td data-label="#">{record.seq}</td>
      <td data-label="Kind">{record.kind}</td>
      <td data-label="Sealed">
        <Time iso={record.sealed_at} />
      </td>
      <td data-label="Hash">
        <code title={record.content_hash ?? undefined}>{short(record.content_hash)}</code>
      </td>
      <td>
        <VerifyButton logId={record.log_id} seq={record.seq} />
      </td>
    </tr>
  );
}

/** Recomputes one sealed record's hash and checks its link in the chain, on the server. */
export function VerifyButton({ logId, seq }: { logId: string; seq: number }) {
  const action = useAction();
  const [result, setResult] = useState<Verification | null>(null);
  const verify = () =>
    void action.run(async () =>
      setResult(
        await api<Verification>('POST', `/api/audit/records/${encodeURIComponent(logId)}/verify`),
      ),
    );
  return (
    <>
      <button
        type="button"
        class="secondary"
        aria-label={`Verify record ${seq}`}
        onClick={verify}
        disabled={action.pending}
      >
        Verify
      </button>
      <span role="status" data-testid={`verify-${seq}`}>
        {result &&
          (result.verified && result.link.holds
            ? ' ✓ Verified: hash recomputed and matches'
            : ` ✗ ${result.tampered ? 'Tampered' : 'Not verified'}: recomputed ${short(result.recomputed_hash)}`)}
      </span>
      <ErrorNote error={action.error} />
    </>
  );
}

/**
 * Checks here, with Web Crypto, that the record is in the evidence log: the log's signed promise
 * for its hash and the inclusion proof against a signed checkpoint (the server's answer, not its
 * word). The log's key comes from `/api/log/public-key`; its fingerprint is shown to compare.
 */
export function ProofButton({
  logId,
  seq,
  contentHash,
}: {
  logId: string;
  seq: number;
  contentHash: string;
}) {
  const action = useAction();
  const [result, setResult] = useState<ProofCheck | null>(null);
  const check = () =>
    void action.run(async () => {
      setResult(null);
      const [verification, key] = await Promise.all([
        api<Verification>('POST', `/api/audit/records/${encodeURIComponent(logId)}/verify`),
        api<LogPublicKey>('GET', '/api/log/public-key'),
      ]);
      setResult(await checkInclusion(contentHash, verification, key));
    });
  return (
    <>
      <button
        type="button"
        class="secondary"
        aria-label={`Check the inclusion proof of record ${seq}`}
        onClick={check}
        disabled={action.pending}
      >
        Check inclusion
      </button>
      <span role="status" data-testid={`proof-${seq}`}>
        {result &&
          ` ✓ In the log: leaf ${result.leafIndex} of ${result.treeSize}, promise and proof checked in this browser (log key ${result.fingerprint.slice(0, 16)}…)`}
      </span>
      <ErrorNote error={action.error && `Inclusion not proven: ${action.error}`} />
    </>
  );
}
