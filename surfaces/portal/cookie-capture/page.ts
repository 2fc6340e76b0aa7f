import { html, page } from '../html.js';
import type { CaptureSession } from './capture-sessions.js';
import { FORWARDED_KEYS, VIEWPORT } from './capture-sessions.js';

/** Keys the page forwards by name (combinations such as Shift+Tab it builds itself): the server's list. */
const NAMED_KEYS = [...FORWARDED_KEYS].filter((k) => !k.includes('+')).join(' ');

/** Wider than the portal's forms: the live view is the page. */
const STYLE = `body{max-width:68rem}#live{display:block;width:100%;height:auto;border:1px solid #d6dae3;border-radius:6px;
cursor:pointer;outline:none;background:#f2f4f8}#live:focus{border-color:#3557c2;box-shadow:0 0 0 3px #c9d4f5}
.bar{display:flex;gap:.75rem;align-items:center;margin:1rem 0;flex-wrap:wrap}.muted{color:#5b6478;font-size:.9rem}
button.secondary{background:#fff;color:#3557c2}#remote-url{word-break:break-all}`;

/**
 * The capture page: the remote browser's screen as an image refreshed by the static script
 * (`/portal/capture.js`; the CSP forbids inline scripts), clicks and keys on it forwarded, and the
 * Capture button. The CSRF token rides in a data attribute and goes back in `x-csrf-token`.
 */
export function capturePage(session: CaptureSession, input: { displayName: string; csrf: string }): string {
  const base = `/portal/capture/${session.id}`;
  return page(
    `Sign in to ${input.displayName}`,
    html`<style>${STYLE}</style>
<h1>Sign in to ${input.displayName}</h1>
<p id="intro">Below is a browser Switchboard runs for you, open at <code id="remote-url">${session.loginUrl}</code>. Click into it and type as
you would in your own browser. When you are signed in, press <strong>Capture</strong>: Switchboard keeps only the cookies of
<code>${session.cookieDomain}</code>, encrypted, and closes this browser.</p>
<div id="capture" data-base="${base}" data-csrf="${input.csrf}" data-width="${VIEWPORT.width}" data-height="${VIEWPORT.height}" data-keys="${NAMED_KEYS}">
<img id="live" src="${base}/frame.jpg" width="${VIEWPORT.width}" height="${VIEWPORT.height}" tabindex="0"
 alt="Live view of the ${input.displayName} sign-in page: click it, then type">
<div class="bar"><button id="capture-button" type="button">Capture</button>
<button id="cancel-button" type="button" class="secondary">Cancel</button>
<span class="muted" id="hint">Click the page above to give it your keyboard. This browser closes by itself at
<time id="expires" datetime="${new Date(session.expiresAt).toISOString()}">${new Date(session.expiresAt).toISOString().slice(11, 16)} UTC</time>.</span></div>
</div>
<div id="status" class="box" role="status" hidden></div>
<script src="/portal/capture.js" defer></script>`,
  );
}
