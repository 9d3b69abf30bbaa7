// SHA-256 for `kubewasm/shared` and its worker, which import it from beside
// themselves: what names a worker after an identity, or remembers a refused
// token, without keeping the credential.

/** SHA-256 of `text` (UTF-8), as lowercase hex. */
export async function sha256Hex(text) {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
}
