/**
 * The page of a connection step reached after its attempt expired, in the same words wherever it
 * happens (the connect link, the OAuth callback, cookie capture): either the attempt `has-expired`,
 * or — the human was part way through signing in — it `expired-before-you-finished`.
 */
export function linkExpired(variant: 'has-expired' | 'expired-before-you-finished'): { title: string; message: string } {
  const what = variant === 'has-expired' ? 'This connection attempt has expired.' : 'This connection attempt expired before you finished.';
  return { title: 'Link expired', message: `${what} Ask your agent to start again; it will give you a new link.` };
}
