import { render, type FunctionComponent } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, logout, resume, whenSignedOut } from './api';
import type { Account } from './types';
import { ErrorNote } from './ui';
import { AccountView } from './views/account';
import { AdminView } from './views/admin';
import { CommunityView } from './views/community';
import { CanariesView } from './views/canaries';
import { CanaryView } from './views/canary';
import { ChannelsView } from './views/channels';
import { EvidenceView } from './views/evidence';
import { KeysView } from './views/keys';
import { SignIn } from './views/sign-in';
import { ThreatEventView } from './views/threat-event';
import { ThreatsView } from './views/threats';
import { WeeklyDigestView } from './views/weekly-digest';
import { WorkflowRunsView } from './views/workflow-runs';
import './styles.css';

type Route =
  | 'account'
  | 'keys'
  | 'channels'
  | 'weekly'
  | 'canaries'
  | 'threats'
  | 'runs'
  | 'evidence'
  | 'community'
  | 'admin';

const ROUTES: Record<Route, { title: string; view: FunctionComponent<{ account: Account }> }> = {
  account: { title: 'Account', view: AccountView },
  keys: { title: 'API keys', view: KeysView },
  channels: { title: 'Alert channels', view: ChannelsView },
  weekly: { title: 'Weekly digest', view: WeeklyDigestView },
  canaries: { title: 'Canaries', view: CanariesView },
  threats: { title: 'Threat events', view: ThreatsView },
  runs: { title: 'Workflow runs', view: WorkflowRunsView },
  evidence: { title: 'Evidence log', view: EvidenceView },
  community: { title: 'Community', view: CommunityView },
  admin: { title: 'Admin', view: AdminView },
};

/** Routes only operator accounts see (the API refuses everyone else anyway). */
const OPERATOR_ONLY = new Set<Route>(['admin']);

/** `#/<route>`, or `#/threats/<id>` and `#/canaries/<id>` for one item's page. */
/** The routes with a page per item, by the item's id. */
const ITEM_VIEWS: Partial<Record<Route, FunctionComponent<{ id: string }>>> = {
  threats: ThreatEventView,
  canaries: CanaryView,
};

const routeOf = (hash: string): { route: Route; id: string | null } => {
  const [name = '', id] = hash.replace(/^#\/?/, '').split('/');
  const route = name in ROUTES ? (name as Route) : 'account';
  return { route, id: id && route in ITEM_VIEWS ? decodeURIComponent(id) : null };
};

function useRoute() {
  const [route, setRoute] = useState(() => routeOf(location.hash));
  useEffect(() => {
    const onChange = () => setRoute(routeOf(location.hash));
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return route;
}

function App() {
  const [account, setAccount] = useState<Account | null | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const { route, id } = useRoute();

  const enter = () =>
    api<Account>('GET', '/api/users/me').then(setAccount, (err: Error) => setError(err.message));

  useEffect(() => {
    whenSignedOut(() => setAccount(null));
    void resume().then((session) => (session ? enter() : setAccount(null)));
  }, []);
  useEffect(() => {
    document.title = `${account ? ROUTES[route].title : 'Sign in'} · Tripwire console`;
  }, [route, account]);

  if (account === undefined) return <ErrorNote error={error} />;
  if (account === null) return <SignIn onSignedIn={() => void enter()} />;

  const View = ROUTES[route].view;
  const ItemView = id ? ITEM_VIEWS[route] : undefined;
  return (
    <>
      {/* Not a plain #main link: the hash is the console's route. */}
      <a
        class="skip"
        href="#main"
        onClick={(event) => {
          event.preventDefault();
          document.getElementById('main')?.focus();
        }}
      >
        Skip to content
      </a>
      <header>
        <strong class="brand">Tripwire</strong>
        <nav aria-label="Console">
          <ul>
            {Object.entries(ROUTES)
              .filter(([name]) => account.role === 'operator' || !OPERATOR_ONLY.has(name as Route))
              .map(([name, { title }]) => (
                <li key={name}>
                  <a href={`#/${name}`} aria-current={route === name ? 'page' : undefined}>
                    {title}
                  </a>
                </li>
              ))}
          </ul>
        </nav>
        <span class="who">{account.email}</span>
        <button
          type="button"
          class="secondary"
          onClick={() => void logout().then(() => setAccount(null))}
        >
          Log out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        {ItemView && id ? <ItemView id={id} /> : <View account={account} />}
      </main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
