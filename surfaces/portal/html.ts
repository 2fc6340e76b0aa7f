/** Escapes text for HTML element and attribute content. */
export function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Marks a string as already-safe HTML. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

/** Tagged template that escapes every interpolation unless it is SafeHtml (or an array of it). */
export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0];
  values.forEach((value, i) => {
    const parts = Array.isArray(value) ? value : [value];
    out += parts.map((v) => (v instanceof SafeHtml ? v.value : escapeHtml(v))).join('') + strings[i + 1];
  });
  return new SafeHtml(out);
}

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;color:#1d2330}
h1{font-size:1.5rem}.box{border:1px solid #d6dae3;border-radius:8px;padding:1rem 1.25rem;margin:1rem 0}
.ok{border-color:#2e9d5b}.bad{border-color:#c9372c}button,.button{font:inherit;padding:.5rem 1rem;border-radius:6px;
border:1px solid #3557c2;background:#3557c2;color:#fff;cursor:pointer;text-decoration:none;display:inline-block}
code{background:#f2f4f8;padding:0 .25rem;border-radius:4px}
body.wide{max-width:68rem}nav{display:flex;gap:1.25rem;align-items:center;flex-wrap:wrap;border-bottom:1px solid #d6dae3;
padding-bottom:.75rem;margin-bottom:1.5rem}nav a{color:#3557c2;text-decoration:none}nav a[aria-current]{font-weight:600;color:#1d2330}
nav .me{margin-left:auto;color:#5b6478;font-size:.9rem}nav form{margin:0}h2{font-size:1.15rem;margin-top:2rem}
table{border-collapse:collapse;width:100%;margin:.75rem 0}th,td{text-align:left;padding:.5rem .6rem;border-bottom:1px solid #e4e7ee;
vertical-align:middle}th{font-size:.85rem;color:#5b6478;font-weight:600}td.actions{white-space:nowrap}
form.inline{display:inline-flex;gap:.4rem;margin:0;align-items:center}
input[type=text],input[type=password],select,textarea{font:inherit;padding:.4rem .55rem;border:1px solid #b9c0cf;border-radius:6px;min-width:0}
textarea{width:100%;box-sizing:border-box;font-family:ui-monospace,monospace;font-size:.875rem}select{max-width:100%}
label{display:block;font-weight:600;margin:.9rem 0 .3rem}.field input{width:100%;box-sizing:border-box}
.secondary{background:#fff;color:#3557c2}button.danger{background:#fff;color:#c9372c;border-color:#c9372c}
.small{padding:.2rem .6rem;font-size:.875rem}.tag{display:inline-block;font-size:.8rem;padding:0 .5rem;border-radius:999px;
background:#eef1f7;color:#3a4358}.tag.ok{background:#e3f4ea;color:#1f6e3f}.tag.bad{background:#fbe6e4;color:#a02a20}
.muted{color:#5b6478}.error{color:#a02a20}`;

export function page(title: string, body: SafeHtml, options: { wide?: boolean } = {}): string {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${title} · Switchboard</title><style>${new SafeHtml(STYLE)}</style></head>
<body${new SafeHtml(options.wide ? ' class="wide"' : '')}><main>${body}</main></body></html>`.value;
}

export function messagePage(title: string, message: string, kind: 'ok' | 'bad' | 'info' = 'info'): string {
  return page(title, html`<h1>${title}</h1><div class="box ${kind}" role="status"><p>${message}</p></div>`);
}

/** The page of a step the user may no longer take (the connect rule's reason, then what did not happen). */
export function notAllowedPage(reason: string, outcome: string): string {
  return messagePage('Not allowed', `${reason} ${outcome}`, 'bad');
}
