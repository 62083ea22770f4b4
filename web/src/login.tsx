import { useState } from 'preact/hooks';
import { api } from './api.js';

/** The PIN printed where `hearth serve --pin` started (or the token), traded for a session cookie. */
export function Login({ onDone }: { onDone: () => void }) {
  const [secret, setSecret] = useState('');
  const [error, setError] = useState<string | undefined>();
  const submit = async (event: Event) => {
    event.preventDefault();
    const value = secret.trim();
    try {
      await api('/api/auth/login', /^\d{4,8}$/.test(value) ? { pin: value } : { token: value });
      onDone();
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return (
    <form class="login" onSubmit={submit}>
      <h1>Hearth</h1>
      <p>Enter the PIN shown where the gateway started, or its token.</p>
      <input
        name="secret"
        type="password"
        autocomplete="one-time-code"
        aria-label="PIN or token"
        value={secret}
        onInput={(e) => setSecret((e.target as HTMLInputElement).value)}
        autofocus
      />
      <button type="submit">Log in</button>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </form>
  );
}
