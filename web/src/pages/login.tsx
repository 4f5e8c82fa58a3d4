import { useState } from 'preact/hooks';
import { type Session, signIn } from '../api';
import { asProblem } from '../hooks';
import type { Problem } from '../types';
import { PageTitle, ProblemMessage } from '../ui';

export function LoginPage({ notice, onSignedIn }: { notice: string | null; onSignedIn: (s: Session) => void }) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setProblem(null);
    try {
      onSignedIn(await signIn(username.trim(), password));
    } catch (err) {
      setProblem(asProblem(err));
      setBusy(false);
    }
  };

  return (
    <section class="login">
      <PageTitle sub="With your Test Management account (the same one the API and the command line use).">Sign in</PageTitle>
      {notice ? (
        <p class="notice" role="status">
          {notice}
        </p>
      ) : null}
      {problem ? <ProblemMessage problem={problem} /> : null}
      <form onSubmit={(e) => void submit(e)} class="stack">
        <label>
          Username
          <input name="username" autoComplete="username" required value={username} onInput={(e) => setUsername(e.currentTarget.value)} />
        </label>
        <label>
          Password
          <input
            name="password"
            type="password"
            autoComplete="current-password"
            required
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
        </label>
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </section>
  );
}
