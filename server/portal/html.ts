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
code{background:#f2f4f8;padding:0 .25rem;border-radius:4px}`;

export function page(title: string, body: SafeHtml): string {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${title} · Switchboard</title><style>${new SafeHtml(STYLE)}</style></head>
<body><main>${body}</main></body></html>`.value;
}

export function messagePage(title: string, message: string, kind: 'ok' | 'bad' | 'info' = 'info'): string {
  return page(title, html`<h1>${title}</h1><div class="box ${kind}" role="status"><p>${message}</p></div>`);
}
