// Where the dashboard connects and with which token. The token never comes
// from the address (addresses end up in history, bookmarks and server logs):
// it is typed into a field and kept in sessionStorage for this tab, tied to
// the server it was typed for, so another server never receives it.

/** The sessionStorage key of the saved `{ server, token }`. */
const KEY = 'kubewasm.dashboard.credentials';

interface Saved {
  server: string;
  token: string;
}

/** sessionStorage, or null where the page may not use it (sandboxed frames, disabled storage). */
function storage(): Storage | null {
  try {
    return globalThis.sessionStorage ?? null;
  } catch {
    return null;
  }
}

/**
 * The token saved for `server` in this tab, if any. A token saved for another
 * server is deleted, never returned: the server changed since it was typed.
 */
export function loadToken(server: string): string | undefined {
  const s = storage();
  let saved: Partial<Saved> | null = null;
  try {
    saved = JSON.parse(s?.getItem(KEY) ?? 'null') as Partial<Saved> | null;
  } catch {
    // Unreadable entry: treat as nothing saved (and drop it below).
  }
  if (saved && saved.server === server && typeof saved.token === 'string' && saved.token) return saved.token;
  forgetToken();
  return undefined;
}

/** Save `token` for `server` in this tab; an empty token deletes what was saved. */
export function saveToken(server: string, token: string): void {
  if (!token) {
    forgetToken();
    return;
  }
  try {
    storage()?.setItem(KEY, JSON.stringify({ server, token } satisfies Saved));
  } catch {
    // Storage full or refused: the token is used for this page load only.
  }
}

/** Delete the saved token. */
export function forgetToken(): void {
  try {
    storage()?.removeItem(KEY);
  } catch {
    // Nothing to delete where storage is refused.
  }
}

/**
 * Remove every `token` query parameter from `href`. Returns the cleaned
 * address, or null when there was none. The value is never read.
 */
export function withoutUrlToken(href: string): string | null {
  const url = new URL(href);
  if (!url.searchParams.has('token')) return null;
  url.searchParams.delete('token');
  return url.href;
}

/**
 * `decodeURIComponent` that never throws: a malformed escape (`#%E0%A4%A`)
 * yields the text as written, which then matches nothing.
 */
export function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
