import { useState } from 'preact/hooks';
import { login, signup } from '../api';
import { ErrorNote, Field, formValues, useAction } from '../ui';

/** Log in, or create an account and log straight in. */
export function SignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const [mode, setMode] = useState<'login' | 'signup'>('login');
  const { pending, error, run } = useAction();
  const creating = mode === 'signup';

  const submit = (event: Event) => {
    event.preventDefault();
    const { email = '', password = '' } = formValues(event.currentTarget as HTMLFormElement);
    void run(async () => {
      await (creating ? signup : login)(email, password);
      onSignedIn();
    });
  };

  return (
    <main class="sign-in">
      <h1>{creating ? 'Create an account' : 'Log in'}</h1>
      <form onSubmit={submit}>
        <Field label="Email">
          <input name="email" type="email" autocomplete="email" required />
        </Field>
        <Field label="Password" hint={creating ? 'At least 12 characters.' : undefined}>
          <input
            name="password"
            type="password"
            autocomplete={creating ? 'new-password' : 'current-password'}
            minLength={creating ? 12 : undefined}
            required
          />
        </Field>
        <ErrorNote error={error} />
        <button type="submit" disabled={pending}>
          {creating ? 'Create account' : 'Log in'}
        </button>
      </form>
      <p>
        {creating ? 'Already have an account? ' : 'New here? '}
        <button type="button" class="link" onClick={() => setMode(creating ? 'login' : 'signup')}>
          {creating ? 'Log in' : 'Create an account'}
        </button>
      </p>
    </main>
  );
}
