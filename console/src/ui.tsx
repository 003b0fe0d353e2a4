import { cloneElement, type ComponentChildren, type TargetedSubmitEvent, type VNode } from 'preact';
import { useCallback, useEffect, useId, useRef, useState } from 'preact/hooks';

/** Loads data for a view and reloads it on demand; errors become a message, never a blank page. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[] = []) {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const reload = useCallback(() => {
    setError(null);
    return load().then(setData, (err: Error) => setError(err.message));
  }, deps);
  useEffect(() => void reload(), [reload]);
  return { data, error, reload };
}

/** Runs an action from a button or form, keeping its pending state and its error for display. */
export function useAction() {
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = async (action: () => Promise<unknown>) => {
    setPending(true);
    setError(null);
    try {
      await action();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setPending(false);
    }
  };
  return { pending, error, run };
}

/**
 * A newest-first list read a page at a time: `more` (null on the last page) appends the next one,
 * `reload` starts again from the newest.
 */
export function usePages<Page, Item>(
  load: (next: string | null) => Promise<Page>,
  itemsOf: (page: Page) => Item[],
  nextOf: (page: Page) => string | null,
) {
  const [pages, setPages] = useState<Page[]>([]);
  const action = useAction();
  const reload = () => action.run(async () => setPages([await load(null)]));
  useEffect(() => void reload(), []);
  const last = pages.at(-1);
  const next = last ? nextOf(last) : null;
  const more =
    next === null
      ? null
      : () => action.run(async () => setPages([...pages, await load(String(next))]));
  return {
    items: pages.flatMap(itemsOf),
    loaded: pages.length > 0,
    pages: pages.length,
    pending: action.pending,
    error: action.error,
    reload,
    more,
  };
}

/** A submitted form's text fields by name. */
export function formValues(form: HTMLFormElement): Record<string, string> {
  const values: Record<string, string> = {};
  for (const [name, value] of new FormData(form))
    if (typeof value === 'string') values[name] = value;
  return values;
}

export function ErrorNote({ error }: { error: string | null | undefined }) {
  return error ? (
    <p class="note error" role="alert">
      {error}
    </p>
  ) : null;
}

/** A labelled control; the hint is its description, not part of its name. */
export function Field({
  label,
  hint,
  children,
}: {
  label: string;
  hint?: string;
  children: VNode;
}) {
  const id = useId();
  const own = (children.props as { 'aria-describedby'?: string })['aria-describedby'];
  const describedBy = [hint && `${id}-hint`, own].filter(Boolean).join(' ');
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {cloneElement(children, { id, 'aria-describedby': describedBy || undefined })}
      {hint && <small id={`${id}-hint`}>{hint}</small>}
    </div>
  );
}

export function when(iso: string | null | undefined): string {
  return iso ? new Date(iso).toLocaleString() : '—';
}

/** A time in the reader's own time zone, with the UTC time on hover. */
export function Time({ iso }: { iso: string | null | undefined }) {
  if (!iso) return <span>—</span>;
  const utc = new Date(iso)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, ' UTC');
  return (
    <time dateTime={iso} title={utc}>
      {when(iso)}
    </time>
  );
}

/** Tables scroll sideways inside their own box on a phone instead of widening the page. */
export function Table({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    <div class="table-wrap" role="region" aria-label={label} tabIndex={0}>
      <table>{children}</table>
    </div>
  );
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    await navigator.clipboard.writeText(text);
    setCopied(true);
    setTimeout(() => setCopied(false), 2000);
  };
  return (
    <button type="button" class="secondary" onClick={() => void copy()}>
      {copied ? 'Copied' : label}
      <span class="visually-hidden" aria-live="polite">
        {copied ? ' to the clipboard' : ''}
      </span>
    </button>
  );
}

/** A destructive action behind a modal <dialog>, which brings focus handling and Escape. */
export function ConfirmButton({
  label,
  name = label,
  question,
  confirm,
  onConfirm,
}: {
  label: string;
  /** The accessible name, when the visible label alone is ambiguous in a list. */
  name?: string;
  question: string;
  confirm: string;
  onConfirm: () => void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const submit = (event: TargetedSubmitEvent<HTMLFormElement>) => {
    if ((event.submitter as HTMLButtonElement | null)?.value === 'yes') onConfirm();
  };
  return (
    <>
      <button
        type="button"
        class="danger"
        aria-label={name}
        onClick={() => dialog.current?.showModal()}
      >
        {label}
      </button>
      <dialog ref={dialog} aria-label={name}>
        <form method="dialog" onSubmit={submit}>
          <p>{question}</p>
          <div class="actions">
            <button value="no" class="secondary" autofocus>
              Cancel
            </button>
            <button value="yes" class="danger">
              {confirm}
            </button>
          </div>
        </form>
      </dialog>
    </>
  );
}
