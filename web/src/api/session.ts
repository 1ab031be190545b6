/**
 * The login session: the bearer token in `localStorage`, and the one place a `401` from any
 * request ends it (listeners then return the app to the login page).
 */

const TOKEN_KEY = "ars.token";

type Listener = () => void;

export class Session {
  private listeners = new Set<Listener>();

  constructor(private readonly storage: Storage) {}

  token(): string | null {
    return this.storage.getItem(TOKEN_KEY);
  }

  start(token: string): void {
    this.storage.setItem(TOKEN_KEY, token);
  }

  /** Forgets the token without telling listeners (a deliberate logout). */
  clear(): void {
    this.storage.removeItem(TOKEN_KEY);
  }

  /** The server refused the token: forget it and tell every listener. */
  expire(): void {
    this.clear();
    for (const listener of this.listeners) listener();
  }

  /** Calls `listener` whenever the session expires; returns the unsubscribe function. */
  onExpire(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
