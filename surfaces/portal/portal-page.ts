import { html, page, type SafeHtml } from './html.js';
import type { SignedIn } from './signed-in.js';

type Section = 'home' | 'integrations' | 'accounts' | 'approvals' | 'upstreams';

/** A portal page with its navigation. Everything interpolated is escaped by `html`. */
export function portalPage(title: string, me: SignedIn, current: Section, body: SafeHtml): string {
  const link = (href: string, section: Section, text: string) =>
    section === current ? html`<a href="${href}" aria-current="page">${text}</a>` : html`<a href="${href}">${text}</a>`;
  return page(
    title,
    html`<nav aria-label="Portal">${link('/portal', 'home', 'Switchboard')}${link('/portal/integrations', 'integrations', 'Integrations')}${link(
      '/portal/accounts',
      'accounts',
      'Accounts',
    )}${link('/portal/approvals', 'approvals', 'Approvals')}${me.isAdmin ? link('/portal/upstreams', 'upstreams', 'Upstream servers') : ''}<span class="me">${me.user.email}${me.isAdmin ? ' · administrator' : ''}</span>
<form method="post" action="/portal/logout"><button type="submit" class="secondary small">Sign out</button></form></nav>${body}`,
    { wide: true },
  );
}
