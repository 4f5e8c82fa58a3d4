import { useEffect, useState } from 'preact/hooks';
import { clearSession, loadSession, onUnauthorized, type Session, signOutSession } from './api';
import { EnvironmentPage, EnvironmentsPage } from './pages/environments';
import { FlakyPage } from './pages/flaky';
import { LoginPage } from './pages/login';
import { ProductPage, ProductsPage } from './pages/products';
import { ProjectsPage } from './pages/projects';
import { RunPage } from './pages/run';
import { RunsPage } from './pages/runs';
import { type Route, useRoute } from './router';
import { PageTitle } from './ui';

export function App() {
  const [session, setSession] = useState<Session | null>(() => loadSession());
  const [notice, setNotice] = useState<string | null>(null);
  const route = useRoute();

  useEffect(
    () =>
      onUnauthorized(() => {
        clearSession();
        setSession(null);
        setNotice('Your session has ended (the token expired or was revoked). Sign in again.');
      }),
    [],
  );

  const signOut = () => {
    void signOutSession();
    setSession(null);
    setNotice('You are signed out.');
  };

  return (
    <>
      <a class="skip-link" href="#main" onClick={skipToMain}>
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href="#/projects">
          Test Management
        </a>
        {session ? (
          <div class="session">
            <span>
              Signed in as <strong>{session.displayName}</strong>
            </span>
            <button type="button" onClick={signOut}>
              Sign out
            </button>
          </div>
        ) : null}
      </header>
      <main id="main" tabIndex={-1}>
        {session ? (
          <Page route={route} />
        ) : (
          <LoginPage
            notice={notice}
            onSignedIn={(s) => {
              setNotice(null);
              setSession(s);
            }}
          />
        )}
      </main>
    </>
  );
}

/** The skip link moves focus without touching the hash (which holds the route). */
function skipToMain(e: Event): void {
  e.preventDefault();
  document.getElementById('main')?.focus();
}

function Page({ route }: { route: Route }) {
  const [head, id, sub] = route.parts;
  const key = route.parts.join('/') + '?' + route.query.toString();
  if (!head || head === 'projects') {
    if (!id) return <ProjectsPage key={key} query={route.query} />;
    if (!sub || sub === 'runs') return <RunsPage key={key} projectId={id} query={route.query} />;
    if (sub === 'flaky') return <FlakyPage key={key} projectId={id} />;
    if (sub === 'environments') return <EnvironmentsPage key={key} projectId={id} query={route.query} />;
    if (sub === 'products') return <ProductsPage key={key} projectId={id} query={route.query} />;
  }
  if (head === 'runs' && id) return <RunPage key={key} runId={id} query={route.query} />;
  if (head === 'environments' && id) return <EnvironmentPage key={key} environmentId={id} query={route.query} />;
  if (head === 'products' && id) return <ProductPage key={key} productId={id} />;
  return (
    <>
      <PageTitle>Page not found</PageTitle>
      <p>
        There is no page at this address. <a href="#/projects">Go to the projects</a>.
      </p>
    </>
  );
}
